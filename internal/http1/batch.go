package http1

// This file: batched reads of a streamed body (Response.Body's ReadInBatches).

import (
	"errors"
	"net"
	"os"
	"time"
)

// BatchReader is implemented by the bodies of the responses of a
// Transport (but for gzip-decoded ones).
type BatchReader interface {
	// ReadInBatches makes the body's reads from the network, until its
	// end, wait for at least min bytes or for at most wait each (see
	// connReader). It is for a long body that arrives a little at a time
	// and is read as it arrives; call it from the goroutine that reads.
	ReadInBatches(min int, wait time.Duration)
}

var _ BatchReader = (*body)(nil)

// connReader is what a connection's bufio.Reader reads from: the
// connection, in one of two modes. Normally a Read returns as soon as any
// byte has arrived. In batch mode (for a long body that a server writes a
// little at a time, such as sqld's cursor, which writes each row as it
// makes it) a Read waits until at least min bytes have arrived or wait has
// passed since it began, whichever is first: a reader that keeps up with
// such a server otherwise wakes up and makes a system call for every few
// rows, which costs more CPU than decoding them and, on a small machine,
// slows down the server it shares the CPU with.
//
// The wait for min bytes is the kernel's (SO_RCVLOWAT, where the platform
// has it: setLowat); the bound on it is a read deadline, whose expiry is
// never an error here: the bytes that have come are then read at once.
type connReader struct {
	c     net.Conn // what is read: the TCP connection or TLS over it
	lw    lowater  // the TCP connection's SO_RCVLOWAT
	min   int      // batch mode: at least this many bytes; 0: normal
	wait  time.Duration
	reads int // Reads from c, for tests
}

// Read reads from the connection in the current mode.
func (r *connReader) Read(p []byte) (int, error) {
	r.reads++
	if r.min <= 0 || !r.lw.set(min(r.min, len(p))) {
		return r.c.Read(p)
	}
	_ = r.c.SetReadDeadline(time.Now().Add(r.wait))
	n, err := r.c.Read(p)
	_ = r.c.SetReadDeadline(time.Time{})
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		// Fewer than min bytes came within wait: take what there is.
		r.lw.set(1)
		n, err = r.c.Read(p)
	}
	return n, err
}

// batch switches batch mode on (min > 0) or off.
func (r *connReader) batch(min int, wait time.Duration) {
	r.min, r.wait = min, wait
	if min <= 0 {
		r.lw.set(1) // the stale-connection check and the next response expect it
	}
}
