package http

import (
	"errors"
	"io"
	"sync"
)

// readAheadMax bounds the bytes a transaction's cursor reads ahead of its
// rows' consumer: as much as one pipeline answer may hold.
const readAheadMax = maxResponseSize

// readAheadBlock is the size of the reads from the network.
const readAheadBlock = 64 << 10

// errReadAheadClosed is what Read returns once Close has been called.
var errReadAheadClosed = errors.New("cursor body closed")

// readAhead reads a cursor's body on a goroutine of its own (fill) as fast
// as it arrives, keeping up to readAheadMax bytes that Read has not taken
// yet. It serves a cursor inside a transaction: the cursor request is in
// flight until its body has been read to the end, and PROTOCOL.md §4.4
// allows no other request on the stream meanwhile, so the sooner the body
// is in, the sooner the stream can be kept alive (cursor.keepAlive).
//
// fill owns body's reads; mu guards the rest, which Read and Close share
// with fill; complete is closed when the body has been read to a clean end.
type readAhead struct {
	body io.ReadCloser
	max  int // readAheadMax

	mu       sync.Mutex
	cond     sync.Cond // on mu: data, the end, room, or Close
	blocks   [][]byte  // read and not taken; blocks[0][off:] next
	off      int
	buffered int   // bytes in blocks not taken
	err      error // how the body ended (io.EOF: cleanly); nil while it goes on
	closed   bool
	discard  bool // drop what is read (see DiscardRest)

	complete chan struct{}
	ended    chan struct{} // closed when the body ended, cleanly or not
	exited   chan struct{}
}

func newReadAhead(body io.ReadCloser, max int) *readAhead {
	r := &readAhead{body: body, max: max, complete: make(chan struct{}), ended: make(chan struct{}), exited: make(chan struct{})}
	r.cond.L = &r.mu
	go r.fill()
	return r
}

// fill reads the body until it ends, fails, or Close, waiting while max
// bytes are not taken yet.
func (r *readAhead) fill() {
	defer close(r.exited)
	for {
		r.mu.Lock()
		for r.buffered >= r.max && !r.closed {
			r.cond.Wait()
		}
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return
		}
		buf := make([]byte, readAheadBlock)
		n, err := r.body.Read(buf)
		r.mu.Lock()
		if n > 0 && !r.discard {
			r.blocks = append(r.blocks, buf[:n])
			r.buffered += n
		}
		if err != nil {
			r.err = err
			if errors.Is(err, io.EOF) {
				close(r.complete)
			}
			close(r.ended)
		}
		r.cond.Broadcast()
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Read takes what fill has read, waiting for it.
func (r *readAhead) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.blocks) == 0 && r.err == nil && !r.closed {
		r.cond.Wait()
	}
	switch {
	case r.closed:
		return 0, errReadAheadClosed
	case len(r.blocks) == 0:
		return 0, r.err
	}
	n := copy(p, r.blocks[0][r.off:])
	r.off += n
	if r.off == len(r.blocks[0]) {
		r.blocks[0] = nil
		r.blocks, r.off = r.blocks[1:], 0
	}
	r.buffered -= n
	r.cond.Broadcast() // room for fill
	return n, nil
}

// DiscardRest has fill drop what it has read and all it reads from now on,
// and returns a channel closed when the body has ended: the rest of the
// answer goes by without being kept.
func (r *readAhead) DiscardRest() <-chan struct{} {
	r.mu.Lock()
	r.discard = true
	r.blocks, r.buffered = nil, 0
	r.cond.Broadcast()
	r.mu.Unlock()
	return r.ended
}

// endedCleanly reports whether the body ended at its end (not cut off).
func (r *readAhead) endedCleanly() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Is(r.err, io.EOF)
}

// Close stops fill, closing the body under a read in progress, and waits
// for it.
func (r *readAhead) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.blocks = nil
	r.cond.Broadcast()
	r.mu.Unlock()
	err := r.body.Close()
	<-r.exited
	return err
}
