package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

// indexOf returns the replication index a request carries.
func indexOf(r *codec.StreamRequest) uint64 {
	switch r.Type {
	case codec.RequestExecute:
		return r.Stmt.ReplicationIndex
	case codec.RequestBatch:
		return r.Batch.ReplicationIndex
	}
	return r.ReplicationIndex
}

// answerIndex answers like ok, recording the index the request carried
// and reporting got as the result's replication index.
func answerIndex(sent *uint64, got uint64) func([]codec.StreamRequest, *transport.Response) error {
	return func(reqs []codec.StreamRequest, res *transport.Response) error {
		*sent = indexOf(&reqs[len(reqs)-1])
		return ok(func(rs []codec.StreamResult) {
			r := &rs[len(rs)-1].Response
			r.Result.ReplicationIndex, r.Result.HasReplicationIndex = got, got != 0
			r.Batch.ReplicationIndex, r.Batch.HasReplicationIndex = got, got != 0
			r.Batch.Steps = make([]codec.StepOutcome, 1)
		})(reqs, res)
	}
}

// TestReplicationIndexSent runs each operation on one Conn after a result
// on another Conn sharing the tracker reported index 10, and checks that it
// carries 10 (or the context's, if higher).
func TestReplicationIndexSent(t *testing.T) {
	ctx := context.Background()
	step := []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT 1"}}}
	ops := []struct {
		name string
		run  func(c *session.Conn, ctx context.Context) error
	}{
		{"execute", func(c *session.Conn, ctx context.Context) error {
			res, err := c.Execute(ctx, &codec.Stmt{SQL: "SELECT 1"})
			if err == nil {
				res.Release()
			}
			return err
		}},
		{"batch", func(c *session.Conn, ctx context.Context) error {
			res, err := c.Batch(ctx, step)
			if err == nil {
				res.Release()
			}
			return err
		}},
		{"sequence", func(c *session.Conn, ctx context.Context) error { return c.Sequence(ctx, "SELECT 1; SELECT 2") }},
		{"describe", func(c *session.Conn, ctx context.Context) error {
			_, err := c.Describe(ctx, "SELECT 1")
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			r := session.NewReplication(true, 0)
			var sent1, sent2, sent3 uint64
			writer, _ := newConn(t, answerIndex(&sent1, 10))
			writer.SetReplication(r)
			reader, _ := newConn(t, answerIndex(&sent2, 10), answerIndex(&sent3, 12))
			reader.SetReplication(r)
			// A write on one Conn (sequence and describe results carry no
			// index of their own).
			if err := ops[0].run(writer, ctx); err != nil {
				t.Fatal(err)
			}
			if sent1 != 0 || r.Index() != 10 {
				t.Fatalf("first request carried %d, index kept %d; want 0 and 10", sent1, r.Index())
			}
			if err := op.run(reader, ctx); err != nil {
				t.Fatal(err)
			}
			if sent2 != 10 {
				t.Fatalf("another Conn of the pool sent %d, want 10", sent2)
			}
			if err := op.run(reader, session.WithReplicationIndex(ctx, 99)); err != nil {
				t.Fatal(err)
			}
			if sent3 != 99 {
				t.Fatalf("with a context index of 99 sent %d", sent3)
			}
		})
	}
}

// TestReplicationWaitBounded: a request carrying an index that the server
// sits on ends after the wait with ErrReplicationWait, or at the caller's
// own deadline with the caller's error; either way the index is dropped,
// so that the next request does not wait for it.
func TestReplicationWaitBounded(t *testing.T) {
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	tests := []struct {
		name     string
		ctx      context.Context
		waitErr  bool
		deadline bool
	}{
		{"background (the Conn's reused bound)", context.Background(), true, true},
		{"background again, after the bound fired", context.Background(), true, true},
		{"cancelable without deadline", cancelable, true, true},
		{"the caller's deadline", short, false, true},
	}
	r := session.NewReplication(true, 50*time.Millisecond)
	c := session.NewConn(&blockingStream{fakeStream: fakeStream{t: t, version: 3}})
	c.SetReplication(r)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.Advance(3845)
			start := time.Now()
			_, err := c.Execute(tt.ctx, &codec.Stmt{SQL: "SELECT 1"})
			if errors.Is(err, session.ErrReplicationWait) != tt.waitErr || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want ErrReplicationWait %t and DeadlineExceeded", err, tt.waitErr)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
			if r.Index() != 0 {
				t.Fatalf("index %d kept after the wait failed", r.Index())
			}
		})
	}
}

// blockingStream sits on every request until its context ends, as a
// replica does on an index it never reaches.
type blockingStream struct{ fakeStream }

func (b *blockingStream) Send(ctx context.Context, _ []codec.StreamRequest, _ bool, _ *transport.Response) error {
	<-ctx.Done()
	return &transport.Error{Message: "request failed", Err: ctx.Err()}
}

// TestReplicaResetReplacesIdleStream: once a log reset is seen (an answer
// below the index its request carried), an idle stream opened before it
// is replaced before the next operation: on a replica its SQLite
// connection may go on reading the copy the reset replaced. One opened
// after is kept.
func TestReplicaResetReplacesIdleStream(t *testing.T) {
	answer := func(idx uint64) func([]codec.StreamRequest, *transport.Response) error {
		return ok(func(rs []codec.StreamResult) {
			rs[0].Response.Result.ReplicationIndex, rs[0].Response.Result.HasReplicationIndex = idx, true
		})
	}
	c, f := newConn(t, answer(200), answer(201), answer(2), answer(3))
	c.SetReplication(session.NewReplication(true, 0))
	ctx := context.Background()
	run := func() {
		t.Helper()
		res, err := c.Execute(ctx, &codec.Stmt{SQL: "SELECT 1"})
		if err != nil {
			t.Fatal(err)
		}
		res.Release()
		f.open = true // the transport kept the stream
	}
	run()
	run()
	if f.resets != 0 {
		t.Fatalf("%d resets before any log reset", f.resets)
	}
	run() // answered 2 for a request that carried 201: the log was reset
	run()
	if f.resets != 1 {
		t.Fatalf("%d resets, want the idle stream opened before the log reset replaced once", f.resets)
	}
}
