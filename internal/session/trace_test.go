package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

// recorder is a session.Tracer that writes down what it is told, and
// checks that each End gets the context its Start returned.
type recorder struct {
	t      *testing.T
	events []string
	depth  int
}

type depthKey struct{}

func (r *recorder) start(ctx context.Context, what string) context.Context {
	r.depth++
	r.events = append(r.events, what)
	return context.WithValue(ctx, depthKey{}, r.depth)
}

func (r *recorder) end(ctx context.Context, what string) {
	if got := ctx.Value(depthKey{}); got != r.depth {
		r.t.Errorf("%s: End got the context of depth %v, want %d", what, got, r.depth)
	}
	r.depth--
	r.events = append(r.events, what)
}

func (r *recorder) StartRequest(ctx context.Context, q *session.Request) context.Context {
	return r.start(ctx, fmt.Sprintf("request %s cursor=%t n=%d idx=%d", q.Type, q.Cursor, q.Requests, q.ReplicationIndex))
}

func (r *recorder) EndRequest(ctx context.Context, q *session.Request) {
	r.end(ctx, fmt.Sprintf("end sent=%d received=%d server=%v err=%v", q.BytesSent, q.BytesReceived, q.ServerTime, q.Err != nil))
}

func (r *recorder) StartResend(ctx context.Context, cause error) context.Context {
	return r.start(ctx, "resend after "+asError(cause).Code)
}

func (r *recorder) EndResend(ctx context.Context, err error) {
	r.end(ctx, fmt.Sprintf("resent err=%v", err != nil))
}

// sized answers as ok does, and reports sizes and server times.
func sized(sent, received int, ms float64) func([]codec.StreamRequest, *transport.Response) error {
	return func(reqs []codec.StreamRequest, res *transport.Response) error {
		_ = ok(func(rs []codec.StreamResult) {
			for i := range rs {
				rs[i].Response.Result.QueryDurationMS = ms
				if rs[i].Response.Type == codec.RequestBatch {
					rs[i].Response.Batch.Steps = []codec.StepOutcome{{Status: codec.StepOK, Result: codec.StmtResult{QueryDurationMS: ms}}, {Status: codec.StepOK, Result: codec.StmtResult{QueryDurationMS: ms}}}
				}
			}
		})(reqs, res)
		res.BytesSent, res.BytesReceived = sent, received
		return nil
	}
}

// TestTracer: every exchange is a request, told its type, its requests,
// the bytes the transport reported and the server's time; a request sent
// again because the idle stream expired is a resend around the new
// request (with the settings replayed first on the new stream); a failed
// exchange and a cursor's opening are requests too.
func TestTracer(t *testing.T) {
	expired := &transport.Error{Code: "STREAM_EXPIRED", HTTPStatus: 400, Safe: true, StreamGone: true}
	c, f := newConn(t,
		sized(100, 200, 1.5),
		sized(10, 20, 0.25),
		fail(&transport.Error{Message: "request failed"}),
		sized(1, 2, 0),
		fail(expired),
		sized(3, 4, 1),
	)
	rec := &recorder{t: t}
	c.SetTracer(rec)
	c.SetReplication(session.NewReplication(true, 0))
	ctx := context.Background()
	c.Persist("fk", codec.Stmt{SQL: "PRAGMA foreign_keys = OFF"})
	if res, err := c.Execute(ctx, &codec.Stmt{SQL: "SELECT 1"}); err != nil {
		t.Fatal(err)
	} else {
		res.Release()
	}
	f.open = true
	steps := []codec.BatchStep{{Stmt: codec.Stmt{SQL: "a"}}, {Stmt: codec.Stmt{SQL: "b"}}}
	if res, err := c.Batch(session.WithReplicationIndex(ctx, 7), steps); err != nil {
		t.Fatal(err)
	} else {
		res.Release()
	}
	if err := c.Sequence(ctx, "x; y"); err == nil {
		t.Fatal("a failed exchange succeeded")
	}
	c.Hold()
	f.open = true
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	c.Linger()
	if res, err := c.Execute(ctx, &codec.Stmt{SQL: "SELECT 2"}); err != nil {
		t.Fatal(err)
	} else {
		res.Release()
	}
	if _, err := c.OpenCursor(ctx, steps); err == nil {
		t.Fatal("the fake's cursor opened")
	}
	want := []string{
		"request execute cursor=false n=2 idx=0", "end sent=100 received=200 server=3ms err=false",
		"request batch cursor=false n=1 idx=7", "end sent=10 received=20 server=500µs err=false",
		"request sequence cursor=false n=1 idx=0", "end sent=0 received=0 server=0s err=true",
		"request  cursor=false n=0 idx=0", "end sent=1 received=2 server=0s err=false",
		"request execute cursor=false n=1 idx=0", "end sent=0 received=0 server=0s err=true",
		"resend after STREAM_EXPIRED",
		"request execute cursor=false n=2 idx=0", "end sent=3 received=4 server=2ms err=false",
		"resent err=false",
		"request batch cursor=true n=2 idx=0", "end sent=0 received=0 server=0s err=true",
	}
	if !slices.Equal(rec.events, want) {
		t.Errorf("events:\n%q\nwant:\n%q", rec.events, want)
	}
}
