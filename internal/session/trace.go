package session

import (
	"context"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Tracer is told of the exchanges a Conn has with the server: each request
// (StartRequest, EndRequest), and a request sent again on a new stream
// because the idle one was gone (expired, or the server restarted) (StartResend, EndResend, around the
// request they send). The context a Start returns is the one the
// operation goes on with and its End gets. Its methods are called on the
// Conn's goroutine, one exchange at a time. See SetTracer.
type Tracer interface {
	StartRequest(ctx context.Context, r *Request) context.Context
	EndRequest(ctx context.Context, r *Request)
	StartResend(ctx context.Context, cause error) context.Context
	EndResend(ctx context.Context, err error)
}

// Request describes one exchange to a Tracer: StartRequest is given what is
// known before it goes out, EndRequest the same Request with its outcome.
// It is the Conn's, valid only during the call.
type Request struct {
	// Type is the type of the operation's first request (its execute,
	// batch, ...); RequestUnknown for a Ping's empty pipeline.
	Type codec.RequestType
	// Cursor says that the request opened a cursor (Type is RequestBatch);
	// it ends once the server has started answering, and the cursor's
	// fetches are the transport's to tell (transport.Options.TraceFetch).
	Cursor bool
	// Requests counts the stream requests the Conn sent, setup included;
	// a transport may add its own (the close that ends an HTTP stream,
	// WebSocket's open_stream).
	Requests int
	// ReplicationIndex is the index the request carried (0: none): a
	// replica runs it only once it has applied that frame.
	ReplicationIndex uint64

	// The outcome, for EndRequest.

	// BytesSent and BytesReceived are what the transport reported
	// (transport.Response); 0 for a cursor.
	BytesSent, BytesReceived int
	// ServerTime is the sum of the query_duration_ms of the statements'
	// results.
	ServerTime time.Duration
	// Err is the exchange's failure (not a statement's error inside an
	// exchange that succeeded).
	Err error
}

// SetTracer makes the Conn tell t of its exchanges; nil (the default)
// tells no one, at no cost.
func (c *Conn) SetTracer(t Tracer) { c.tr = t }

// traced sends on s as sendOn does, telling the Tracer.
func (c *Conn) traced(ctx context.Context, s transport.Stream, setup []codec.StreamRequest, end bool, idx uint64) (*Result, error) {
	c.treq = Request{Type: c.firstType(), Requests: len(setup) + len(c.reqs), ReplicationIndex: idx}
	ctx = c.tr.StartRequest(ctx, &c.treq)
	res, err := c.exchange(ctx, s, setup, end, idx)
	if res != nil {
		c.treq.ServerTime = serverTime(res.resp.Pipeline.Results)
	}
	c.treq.Err = err
	c.tr.EndRequest(ctx, &c.treq)
	return res, err
}

// firstType is the type of the caller's first request.
func (c *Conn) firstType() codec.RequestType {
	if len(c.reqs) == 0 {
		return codec.RequestUnknown
	}
	return c.reqs[0].Type
}

// resend sends the request again on a new stream, telling the Tracer.
func (c *Conn) resend(ctx context.Context, idx uint64, cause error) (*Result, error) {
	if c.tr == nil {
		return c.sendOn(ctx, c.s, c.setupFor(c.s), !c.held, idx)
	}
	ctx = c.tr.StartResend(ctx, cause)
	res, err := c.sendOn(ctx, c.s, c.setupFor(c.s), !c.held, idx)
	c.tr.EndResend(ctx, err)
	return res, err
}

// openTraced opens a cursor with open, as OpenCursor does, telling the Tracer. The
// cursor itself gets the caller's context, so that its fetches are the
// caller's too, beside the request that opened it.
func (c *Conn) openTraced(ctx context.Context, batch *codec.Batch, setup []codec.StreamRequest,
	open func(context.Context, *codec.Batch, []codec.StreamRequest) (transport.Cursor, error)) (transport.Cursor, error) {
	c.treq = Request{Type: codec.RequestBatch, Cursor: true, Requests: len(setup) + 1, ReplicationIndex: batch.ReplicationIndex}
	tctx := c.tr.StartRequest(ctx, &c.treq)
	cur, err := open(ctx, batch, setup)
	c.treq.Err = err
	c.tr.EndRequest(tctx, &c.treq)
	return cur, err
}

// serverTime sums the query_duration_ms of the statements' results.
func serverTime(results []codec.StreamResult) time.Duration {
	var ms float64
	for i := range results {
		r := &results[i]
		if !r.OK {
			continue
		}
		switch r.Response.Type {
		case codec.RequestExecute:
			ms += r.Response.Result.QueryDurationMS
		case codec.RequestBatch:
			for j := range r.Response.Batch.Steps {
				ms += r.Response.Batch.Steps[j].Result.QueryDurationMS
			}
		}
	}
	return time.Duration(ms * float64(time.Millisecond))
}
