package ws

import (
	"net"
	"sync"
	"syscall"
	"time"
)

// corkFlushAt is how much of a burst a corkConn holds back before it writes
// what it has: bursts are usually a few small messages, and a large one
// should not be copied whole into the buffer first.
const corkFlushAt = 64 << 10

// corkConn is a socket's network connection, under TLS and the WebSocket
// framing. Between cork and uncork it holds writes back, so that the
// messages of one burst leave in one write (one TCP segment when they fit)
// instead of one per message, under a write deadline; and it tells whether
// any byte of the burst reached the kernel, which is what decides whether a
// failed burst may have reached the server.
//
// Writes from outside a burst (the WebSocket layer's pongs and close
// frames, TLS records) go straight through; during one, they join it.
type corkConn struct {
	net.Conn

	mu     sync.Mutex
	corked bool
	buf    []byte
	wrote  bool // a byte of the current burst was accepted by the kernel

	// The read role's own (see lockstep.go): bytes a probe read that Read
	// has not returned yet, and the probe's buffer, callback and results.
	ahead      []byte
	peekBuf    [probeSize]byte
	peekFn     func(fd uintptr) bool
	peekN      int
	peekErr    error
	quietSince time.Time // the last probe that found nothing; zero after a Read
}

func (w *corkConn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.corked {
		return w.Conn.Write(p)
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= corkFlushAt {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// cork starts a burst that must be written within timeout.
func (w *corkConn) cork(timeout time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.corked, w.wrote = true, false
	_ = w.Conn.SetWriteDeadline(time.Now().Add(timeout))
}

// uncork writes what the burst holds and ends it. wrote reports whether any
// byte of the burst may have reached the server.
func (w *corkConn) uncork() (wrote bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	err = w.flush()
	w.corked = false
	_ = w.Conn.SetWriteDeadline(time.Time{})
	if cap(w.buf) > corkFlushAt*2 {
		w.buf = nil
	}
	return w.wrote, err
}

// flush writes the held bytes; w.mu is held.
func (w *corkConn) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.Conn.Write(w.buf)
	if n > 0 {
		w.wrote = true
	}
	w.buf = w.buf[:0]
	return err
}

// Read returns the bytes a probe read ahead first. Only the holder of the
// socket's read role reads (see lockstep.go), so this needs no lock.
func (w *corkConn) Read(p []byte) (int, error) {
	if len(w.ahead) > 0 {
		n := copy(p, w.ahead)
		w.ahead = w.ahead[n:]
		if len(w.ahead) == 0 {
			w.ahead = nil
		}
		return n, nil
	}
	w.quietSince = time.Time{}
	return w.Conn.Read(p)
}

// probe tells, without blocking, whether the connection has been closed by
// the peer or failed: it reads what has arrived (keeping it for Read) and
// returns io.EOF or the read's error if the connection is gone. It
// returns nil when it cannot tell (a connection that is not a socket).
// Only the holder of the read role probes.
//
// A probe within probeFresh of one that found nothing is skipped: the
// session's Lost and the Send after it each ask, microseconds apart.
func (w *corkConn) probe() error {
	if len(w.ahead) > 0 || !w.quietSince.IsZero() && time.Since(w.quietSince) < probeFresh {
		return nil
	}
	sc, ok := w.Conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	if w.peekFn == nil {
		w.peekFn = func(fd uintptr) bool {
			w.peekN, w.peekErr = peekRead(fd, w.peekBuf[:])
			return true // never wait
		}
	}
	if err := rc.Read(w.peekFn); err != nil {
		return err
	}
	n, rerr := w.peekN, w.peekErr
	w.peekErr = nil
	switch {
	case n > 0:
		w.ahead = append([]byte(nil), w.peekBuf[:n]...)
		return nil
	case rerr != nil:
		return rerr
	}
	w.quietSince = time.Now()
	return nil
}

// probeFresh is how long a probe that found nothing stands.
const probeFresh = time.Millisecond
