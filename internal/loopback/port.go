//go:build linux

package loopback

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The ports Port hands out: blocks of blockSize from firstPort up, minus
// those that overlap the kernel's ephemeral range.
const (
	firstPort = 10000
	lastPort  = 65535
	blockSize = 500
)

// defaultAllocator serves Port: one per process, so that a test binary
// never hands out a port twice.
var defaultAllocator = &allocator{
	dir:       filepath.Join(os.TempDir(), "gohrana-itest-ports"),
	first:     firstPort,
	last:      lastPort,
	size:      blockSize,
	ephemeral: ephemeralRange,
	free:      free,
}

// Port returns a TCP port on 127.0.0.1 for a server to listen on: free
// when Port looked, never returned before in this process, in a block of
// ports that no other live process calling Port holds, and outside the
// kernel's ephemeral range. A server may still lose it to a process that
// binds fixed ports of its own: WaitHealthy tells.
func Port() (int, error) { return defaultAllocator.port() }

// allocator hands out the ports of the blocks it claims, one after the
// other. A block is claimed by an exclusive flock on its lock file in dir,
// held until the process exits (the kernel drops it then, however the
// process ends), so that test binaries running at the same time draw from
// distinct blocks.
type allocator struct {
	dir         string
	first, last int               // the ports to share out in blocks
	size        int               // ports per block
	ephemeral   func() (int, int) // the kernel's ephemeral range, to avoid
	free        func(int) bool    // whether a port can be bound now

	mu        sync.Mutex
	next, end int // the current block's next port and its end (exclusive)
	tried     int // block starts looked at, to stop once all were
	// locks are the claimed blocks' lock files, kept reachable: the
	// finalizer of an unreachable *os.File would close it, dropping the lock.
	locks []*os.File
}

func (a *allocator) port() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for a.next < a.end {
			p := a.next
			a.next++
			if a.free(p) {
				return p, nil
			}
		}
		if err := a.claim(); err != nil {
			return 0, err
		}
	}
}

// claim takes the next block no other process holds, starting from one
// picked by the process id so that concurrent processes seldom try the same
// blocks first.
func (a *allocator) claim() error {
	lo, hi := a.ephemeral()
	var starts []int
	for s := a.first; s+a.size-1 <= a.last; s += a.size {
		if s+a.size-1 < lo || s > hi {
			starts = append(starts, s)
		}
	}
	if len(starts) == 0 {
		return fmt.Errorf("loopback: no block of %d ports in %d-%d outside the ephemeral range %d-%d", a.size, a.first, a.last, lo, hi)
	}
	if err := os.MkdirAll(a.dir, 0o777); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	_ = os.Chmod(a.dir, 0o1777) // shared by every user's test runs, like /tmp
	offset := os.Getpid() % len(starts)
	for ; a.tried < len(starts); a.tried++ {
		s := starts[(offset+a.tried)%len(starts)]
		if f := a.lock(s); f != nil {
			a.locks = append(a.locks, f)
			a.next, a.end = s, s+a.size
			a.tried++
			return nil
		}
	}
	return fmt.Errorf("loopback: every block of %d ports in %d-%d is held (lock files in %s) or used up", a.size, a.first, a.last, a.dir)
}

// lock returns the open lock file of the block at start if this process
// now holds its flock, else nil. Read-only is enough for flock and lets a
// lock file another user created be shared.
func (a *allocator) lock(start int) *os.File {
	f, err := os.OpenFile(filepath.Join(a.dir, "block-"+strconv.Itoa(start)), os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil
	}
	return f
}

// free reports whether port can be bound on 127.0.0.1 now.
func free(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralRange returns the kernel's range for ephemeral ports (bind to
// port 0, the source port of outgoing connections), Linux's default if it
// cannot be read.
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil || l > h {
		return lo, hi
	}
	return l, h
}
