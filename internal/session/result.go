package session

import (
	"reflect"
	"sync"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Result is one decoded response and the buffers it may point into. Get one
// from the pool with NewResult (operations get theirs from their Conn, see
// Conn.spare), and give it back with Release or ReleaseShared once it is no
// longer used.
type Result struct {
	resp  transport.Response
	first int   // results before this one are the Conn's setup, not the caller's
	step  int   // Stmt's batch step, plus one; 0: the first request's own
	home  *Conn // the Conn whose spare it becomes on Release, or nil
}

var resultPool = sync.Pool{New: func() any { return new(Result) }}

// maxPooledBody is the largest buffer capacity a pooled Result keeps; a
// larger one (an unusually big result) is left to the garbage collector.
const maxPooledBody = 1 << 20

// MaxSpareValues bounds the capacity, in bytes, of the decoded values of
// the Result a Conn keeps for its next operation: the 120,000 values of a
// 20,000-row, 6-column result take 5.8 MB (6.9 MB of capacity). A Result
// holding more goes back to the pool, which the garbage collector empties.
const MaxSpareValues = 8 << 20

// valueSize is the size of one decoded value.
var valueSize = int(reflect.TypeFor[codec.Value]().Size())

// NewResult returns an empty Result from the pool.
func NewResult() *Result { return resultPool.Get().(*Result) }

// Release recycles the result and its buffers. Nothing obtained from it may
// be used afterwards.
func (r *Result) Release() {
	if cap(r.resp.Body) > maxPooledBody {
		r.resp.Body = nil
	}
	for i, b := range r.resp.Bodies {
		if cap(b) > maxPooledBody {
			r.resp.Bodies[i] = nil
		}
	}
	size := r.clearValues()
	r.resp.Pipeline.Reset()
	r.resp.BytesSent, r.resp.BytesReceived = 0, 0
	r.first, r.step = 0, 0
	home := r.home
	r.home = nil
	if home != nil && size <= MaxSpareValues && home.spare.CompareAndSwap(nil, r) {
		return
	}
	resultPool.Put(r)
}

// clearValues zeroes the values decoded into r, so that a spare kept for a
// Conn's whole life pins no response body they pointed into, and returns
// the capacity, in bytes, of all the values r holds. Only the values in use
// are cleared, so that a small result costs little after a large one: the
// rest were cleared when they were last in use (decoders write values only
// below the length they leave).
func (r *Result) clearValues() int {
	n := 0
	results := r.resp.Pipeline.Results
	for i := range results[:cap(results)] {
		sr := &results[:cap(results)][i].Response
		used := i < len(results)
		if used {
			clear(sr.Result.Values)
		}
		n += cap(sr.Result.Values)
		steps := sr.Batch.Steps
		for j := range steps[:cap(steps)] {
			st := &steps[:cap(steps)][j].Result
			if used && j < len(steps) {
				clear(st.Values)
			}
			n += cap(st.Values)
		}
	}
	return n * valueSize
}

// ReleaseShared recycles the result but leaves its buffers to the garbage
// collector, for a caller that handed out memory sharing them.
func (r *Result) ReleaseShared() {
	r.resp.Body = nil
	clear(r.resp.Bodies)
	r.Release()
}

// Response is what a transport decodes the answers into; the operations
// hand it to the Stream, and a caller that decodes a response itself (a
// benchmark of the layers above) may too.
func (r *Result) Response() *transport.Response { return &r.resp }

// Results returns the results of the caller's requests, one each, in
// order (after those of any setup the Conn sent first).
func (r *Result) Results() []codec.StreamResult { return r.resp.Pipeline.Results[r.first:] }

// Stmt returns the statement result the Result stands for: the first
// request's (an execute), or after UseStep(i) that of step i of its batch.
func (r *Result) Stmt() *codec.StmtResult {
	if r.step > 0 {
		return &r.resp.Pipeline.Results[r.first].Response.Batch.Steps[r.step-1].Result
	}
	return &r.resp.Pipeline.Results[r.first].Response.Result
}

// UseStep makes Stmt return the result of step i of the first request's
// batch, for a caller that ran one statement inside a batch.
func (r *Result) UseStep(i int) { r.step = i + 1 }

// Batch returns the batch result of the first request (a batch).
func (r *Result) Batch() *codec.BatchResult { return &r.resp.Pipeline.Results[r.first].Response.Batch }
