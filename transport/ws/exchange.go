package ws

import (
	"sync"
	"sync/atomic"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// An exchange is a set of requests written in one burst (those of one Send,
// or one cursor fetch) and the answers to them. Its owner (a stream or a
// cursor) fills it, the socket registers each request under its request id,
// and the socket's reader hands each answer over by swapping the decoded
// message and the buffer it points into with the spares the owner put in
// msgs and bufs: nothing is copied and, in the steady state, nothing is
// allocated. The last answer (or the socket's failure) signals done.
//
// Until done, only the reader and a failing socket touch msgs, bufs, err and
// safe; after it, only the owner. An exchange whose owner gave up on it (a
// cancelled Send) is left to finish on its own and is never reused before
// it has.
type exchange struct {
	msgs []*codec.ServerMsg // by request: a spare before the answer, the answer after
	bufs [][]byte           // the buffer each answer was read into (and points into)
	left atomic.Int32       // answers still to come
	done chan struct{}      // receives once left reaches zero

	// err is why the socket failed before every answer arrived; safe says
	// the requests certainly had no effect (the server refused the hello,
	// so it ran none of them).
	err  *transport.Error
	safe bool

	// open is the index of the exchange's open_stream request, or -1.
	open int
	// wrote is the size of the burst the requests went out in (socket.send
	// sets it), for transport.Response.BytesSent.
	wrote int
	// traced ends the trace of a cursor's fetch (see cursor.traceFetch).
	traced func(rows, bytes int, err error)
}

func newExchange() *exchange { return &exchange{done: make(chan struct{}, 1), open: -1} }

// reset readies the exchange for n requests, each with a spare message
// from msgPool. bodies are buffers the answers may be copied into (from a
// Result being reused); the exchange takes them.
func (ex *exchange) reset(n int, bodies [][]byte) {
	for len(ex.msgs) < n {
		ex.msgs = append(ex.msgs, nil)
	}
	for i := range ex.msgs[:n] {
		if ex.msgs[i] == nil {
			ex.msgs[i] = msgPool.Get().(*codec.ServerMsg)
		}
	}
	if cap(ex.bufs) < n {
		ex.bufs = make([][]byte, n)
	}
	ex.bufs = ex.bufs[:n]
	for i := range ex.bufs {
		ex.bufs[i] = nil
		if i < len(bodies) {
			ex.bufs[i], bodies[i] = bodies[i][:0], nil
		}
	}
	ex.left.Store(int32(n))
	ex.err, ex.safe, ex.open, ex.wrote, ex.traced = nil, false, -1, 0, nil
	select {
	case <-ex.done: // an earlier signal nobody waited for
	default:
	}
}

// complete records that one answer is in (or will never come).
func (ex *exchange) complete() {
	if ex.left.Add(-1) == 0 {
		ex.done <- struct{}{}
	}
}

// received is the size of the answers in, for
// transport.Response.BytesReceived.
func (ex *exchange) received() int {
	n := 0
	for _, b := range ex.bufs {
		n += len(b)
	}
	return n
}

// finished reports whether every answer is in, for an owner that stopped
// waiting.
func (ex *exchange) finished() bool { return ex.left.Load() == 0 }

// fail ends the wait for one request whose socket failed.
func (ex *exchange) fail(err *transport.Error, safe bool) {
	if ex.err == nil {
		ex.err, ex.safe = err, safe
	}
	ex.complete()
}

// recycle gives the exchange's messages back to msgPool once their owner
// has taken what it needs from them (streamResult leaves them holding the
// slices a Result had before, so their capacity serves the next decode).
// A message's slices may be large; like the HTTP transport's pooled
// Results, the pool keeps them only until the garbage collector empties
// it, rather than a stream keeping them for its whole life.
func (ex *exchange) recycle() {
	for i, m := range ex.msgs {
		if m != nil {
			m.Reset()
			msgPool.Put(m)
			ex.msgs[i] = nil
		}
	}
}

// msgPool holds the ServerMsgs answers are decoded into.
var msgPool = sync.Pool{New: func() any { return new(codec.ServerMsg) }}

// A waiter is the exchange, and the index in it, that the answer to a
// request id belongs to. A nil ex discards the answer (a close that no one
// waits for).
type waiter struct {
	ex *exchange
	i  int32
}

// streamResult moves the answer m to a stream request into r: the decoded
// slices change places (r's old capacity goes to m, for its next decode), so
// nothing is copied. A response_error becomes a failed result, which is
// what Hrana over HTTP returns for it too.
// lend moves the slices of r, a result being reused, into m, the spare its
// answer will be decoded into, so that the decode reuses the result's
// capacity as the HTTP transport's decode into a pooled Result does;
// streamResult moves them back, filled.
func lend(m *codec.ServerMsg, r *codec.StreamResult) {
	d, s := &m.Response, &r.Response
	d.Result, s.Result = s.Result, d.Result
	d.Batch, s.Batch = s.Batch, d.Batch
	d.Describe, s.Describe = s.Describe, d.Describe
}

func streamResult(r *codec.StreamResult, m *codec.ServerMsg) {
	if m.Type != codec.ServerResponseOK {
		r.OK = false
		r.Error = m.Error
		r.Response.Type = codec.RequestUnknown
		return
	}
	r.OK, r.Error = true, codec.Error{}
	d, s := &r.Response, &m.Response
	d.Type = s.Type.StreamType()
	d.Result, s.Result = s.Result, d.Result
	d.Batch, s.Batch = s.Batch, d.Batch
	d.Describe, s.Describe = s.Describe, d.Describe
	d.IsAutocommit = s.IsAutocommit
}
