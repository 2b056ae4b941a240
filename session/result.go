package session

import (
	"sync"

	"github.com/gohrana/libsql/codec"
)

// Result is one decoded response and the body it may point into. Get one
// from the pool with NewResult (operations do), and give it back with
// Release or ReleaseShared once it is no longer used.
type Result struct {
	resp   codec.PipelineResponse
	body   []byte
	bodies [][]byte // see Bodies
	first  int      // results before this one are the Conn's setup, not the caller's
	step   int      // Stmt's batch step, plus one; 0: the first request's own
}

var resultPool = sync.Pool{New: func() any { return new(Result) }}

// maxPooledBody is the largest body capacity a pooled Result keeps; a
// larger one (an unusually big result) is left to the garbage collector.
const maxPooledBody = 1 << 20

// NewResult returns an empty Result from the pool.
func NewResult() *Result { return resultPool.Get().(*Result) }

// Release recycles the result and its body. Nothing obtained from it may be
// used afterwards.
func (r *Result) Release() {
	if cap(r.body) > maxPooledBody {
		r.body = nil
	}
	for i, b := range r.bodies {
		if cap(b) > maxPooledBody {
			r.bodies[i] = nil
		}
	}
	r.resp.Reset()
	r.first, r.step = 0, 0
	resultPool.Put(r)
}

// ReleaseShared recycles the result but leaves its body to the garbage
// collector, for a caller that handed out memory sharing it.
func (r *Result) ReleaseShared() {
	r.body = nil
	clear(r.bodies)
	r.Release()
}

// Response is the decoded pipeline response, for a transport to decode into
// and for reading every result.
func (r *Result) Response() *codec.PipelineResponse { return &r.resp }

// Body is the buffer the response body is read into, reused across uses of
// the Result; the decoded response may point into it.
func (r *Result) Body() *[]byte { return &r.body }

// Bodies are the buffers of a transport that reads the response as
// several messages (over WebSocket, one per request), kept and reused
// across uses of the Result like Body; the decoded response may point into
// any of them.
func (r *Result) Bodies() *[][]byte { return &r.bodies }

// Results returns the results of the caller's requests, one each, in
// order (after those of any setup the Conn sent first).
func (r *Result) Results() []codec.StreamResult { return r.resp.Results[r.first:] }

// Stmt returns the statement result the Result stands for: the first
// request's (an execute), or after UseStep(i) that of step i of its batch.
func (r *Result) Stmt() *codec.StmtResult {
	if r.step > 0 {
		return &r.resp.Results[r.first].Response.Batch.Steps[r.step-1].Result
	}
	return &r.resp.Results[r.first].Response.Result
}

// UseStep makes Stmt return the result of step i of the first request's
// batch, for a caller that ran one statement inside a batch.
func (r *Result) UseStep(i int) { r.step = i + 1 }

// Batch returns the batch result of the first request (a batch).
func (r *Result) Batch() *codec.BatchResult { return &r.resp.Results[r.first].Response.Batch }
