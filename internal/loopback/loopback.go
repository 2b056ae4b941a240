//go:build linux

package loopback

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotListening means that nothing listens on a port.
var ErrNotListening = errors.New("nothing listens on the port")

// ErrForeign means that a socket listening on a port is not the given
// process's.
var ErrForeign = errors.New("another process listens on the port")

// HeldBy returns nil if process pid holds every TCP socket listening on
// each of the ports (on any address, IPv4 or IPv6) and there is at least
// one on each; else an error wrapping ErrNotListening or ErrForeign.
//
// That proves that a connection to 127.0.0.1:port reaches pid: the kernel
// hands it to a socket listening on the port. It needs no assumption about
// how the server binds (the check looks at every listener, should two
// share the port through SO_REUSEPORT). A process that has exited holds
// no sockets, so HeldBy also proves the process is alive.
func HeldBy(pid int, ports ...int) error {
	listening, err := listeners()
	if err != nil {
		return err
	}
	held, err := sockets(pid)
	if err != nil {
		return err
	}
	for _, port := range ports {
		inodes := listening[port]
		if len(inodes) == 0 {
			return fmt.Errorf("127.0.0.1:%d: %w", port, ErrNotListening)
		}
		for _, ino := range inodes {
			if !held[ino] {
				return fmt.Errorf("127.0.0.1:%d: socket inode %d is not held by pid %d: %w", port, ino, pid, ErrForeign)
			}
		}
	}
	return nil
}

// listeners returns the inodes of the TCP sockets in the LISTEN state, by
// local port, from the tables of this process's network namespace.
func listeners() (map[int][]uint64, error) {
	m := map[int][]uint64{}
	for _, name := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) && strings.HasSuffix(name, "6") {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, err
		}
		err = parseListeners(f, m)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return m, nil
}

// tcpListen is the state LISTEN in /proc/net/tcp's st column.
const tcpListen = "0A"

// parseListeners adds the listening sockets of a /proc/net/tcp or tcp6
// table to m. A line reads
//
//	sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
//
// with local_address as hex IP:port.
func parseListeners(r io.Reader, m map[int][]uint64) error {
	sc := bufio.NewScanner(r)
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			return fmt.Errorf("bad local address %q", f[1])
		}
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			return fmt.Errorf("bad local address %q", f[1])
		}
		ino, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return fmt.Errorf("bad inode %q", f[9])
		}
		m[int(port)] = append(m[int(port)], ino)
	}
	return sc.Err()
}

// sockets returns the inodes of the sockets process pid has open: its
// /proc/<pid>/fd entries that link to "socket:[inode]".
func sockets(pid int) (map[uint64]bool, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the open files of pid %d: %w", pid, err)
	}
	held := map[uint64]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed since ReadDir
		}
		if s, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				held[ino] = true
			}
		}
	}
	return held, nil
}

// WaitHealthy waits until GET http://127.0.0.1:<port>/health answers 200
// while process pid holds the sockets listening on port and on each of
// others (a server's further listeners: gRPC, admin), checked before and
// after the request: so the answer came from pid, and pid bound all its
// ports. It returns early with alive's error if alive, called before
// each try, reports one (the process exited, or its log says it could not
// bind), and when ctx ends with an error that wraps both ctx's and the
// last failure.
func WaitHealthy(ctx context.Context, pid int, alive func(context.Context) error, port int, others ...int) error {
	ports := append([]int{port}, others...)
	return waitFor(ctx, alive, port, func(baseURL string) string { return fmt.Sprintf("pid %d to serve %s", pid, baseURL) },
		func(client *http.Client, baseURL string) error {
			if err := HeldBy(pid, ports...); err != nil {
				return err
			}
			if err := GetHealth(ctx, client, baseURL); err != nil {
				return err
			}
			return HeldBy(pid, ports...)
		})
}
