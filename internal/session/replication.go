package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Replication keeps the highest replication index (the frame number of the
// primary's write-ahead log that sqld reports with every result) seen by the
// Conns that share it, and sends it with their requests: a sqld replica
// then waits until it has applied that frame before it runs the request.
// One Replication shared by all the connections of a pool gives
// read-your-writes and monotonic reads across the pool. A primary ignores
// the index.
//
// It is safe for concurrent use.
type Replication struct {
	idx     atomic.Uint64
	track   bool
	wait    time.Duration
	resetAt atomic.Int64 // when (Unix ns) the primary's log was last seen reset; 0: never
}

// resetSettle is how long after a log reset a server stream opened may
// still read the replica's old copy: a replica replaces its copy some time
// after its primary's log is reset, once it has reconnected to the
// primary, and sqld 0.24.32 goes on answering a stream whose SQLite
// connection predates the replacement from the old copy, for as long as
// the stream lives (itest TestReplicaPrimaryKilled). Streams opened before
// the reset or within resetSettle of it are replaced (see Conn.refresh):
// for resetSettle, every statement goes out on a new stream, as with
// keepStreams=0. Ten seconds was too short on a loaded 2-core machine
// (a CI run of 2026-12-05: the replica had not replaced its copy 10 s
// after the first write on the primary's new log, and a stream opened then
// read the old copy for the test's next 20 s).
const resetSettle = time.Minute

// stale reports whether a stream opened at opened may read a copy that a
// log reset replaced (see resetSettle).
func (r *Replication) stale(opened time.Time) bool {
	at := r.resetAt.Load()
	return at != 0 && opened.UnixNano() < at+int64(resetSettle)
}

// DefaultReplicationWait bounds a request that carries a replication index
// when NewReplication is given no bound.
const DefaultReplicationWait = 10 * time.Second

// NewReplication returns a Replication. With track, every result's index is
// kept and sent with later requests; without, only an index the caller puts
// in a context (WithReplicationIndex) is sent. wait bounds each request
// that carries an index (0: DefaultReplicationWait), for a replica that
// never reaches it waits until the caller's deadline.
func NewReplication(track bool, wait time.Duration) *Replication {
	if wait <= 0 {
		wait = DefaultReplicationWait
	}
	return &Replication{track: track, wait: wait}
}

// Index returns the index kept (0: none).
func (r *Replication) Index() uint64 { return r.idx.Load() }

// Tracking reports whether results' indexes are kept.
func (r *Replication) Tracking() bool { return r.track }

// Wait is the bound on a request that carries an index.
func (r *Replication) Wait() time.Duration { return r.wait }

// Advance raises the index kept to idx, if that is higher: for an index an
// application carried over from elsewhere.
func (r *Replication) Advance(idx uint64) {
	for {
		cur := r.idx.Load()
		if idx <= cur || r.idx.CompareAndSwap(cur, idx) {
			return
		}
	}
}

// observe records got, the index of a result whose request carried sent.
//
// Indexes only grow, except when the primary's log is reset (sqld starts a
// new log after a crash, and its frame numbers begin again near 0): a
// request that asked for sent and was answered with less than sent proves
// the reset, because a replica answers only once it has reached sent and a
// primary is always at or past any index it gave out. Then got replaces
// the kept index, unless another answer already brought it below sent.
func (r *Replication) observe(sent, got uint64) {
	if !r.track || got == 0 {
		return
	}
	for {
		cur := r.idx.Load()
		if got <= cur && (got >= sent || cur < sent) {
			return
		}
		if r.idx.CompareAndSwap(cur, got) {
			if got < sent {
				r.resetAt.Store(time.Now().UnixNano())
			}
			return
		}
	}
}

// drop forgets the kept index if it is still at or past sent, after a
// request carrying sent found no answer within the wait: the replica may
// never reach it (the log was reset), and later requests must not wait for
// it too.
func (r *Replication) drop(sent uint64) {
	for {
		cur := r.idx.Load()
		if cur < sent || r.idx.CompareAndSwap(cur, 0) {
			return
		}
	}
}

type replicationKey struct{}

// WithReplicationIndex returns a context whose requests carry at least idx
// (for instance one read in another process with Replication.Index), so
// that a replica answers them only once it has applied that frame. It
// works with tracking off too.
func WithReplicationIndex(ctx context.Context, idx uint64) context.Context {
	return context.WithValue(ctx, replicationKey{}, idx)
}

// ReplicationIndexFrom returns the index WithReplicationIndex put in ctx, or
// 0.
func ReplicationIndexFrom(ctx context.Context) uint64 {
	idx, _ := ctx.Value(replicationKey{}).(uint64)
	return idx
}

// ErrReplicationWait is matched (errors.Is) by the error of a request that
// carried a replication index and got no answer within the Replication's
// wait.
var ErrReplicationWait = errors.New("libsql: replica did not reach the replication index in time")

// index returns the index the Conn's next request carries: the kept one or
// the context's, whichever is higher.
func (c *Conn) index(ctx context.Context) uint64 {
	r := c.repl
	if r == nil {
		return 0
	}
	return max(r.idx.Load(), ReplicationIndexFrom(ctx))
}

// bound limits a request that carries idx to the Replication's wait, unless
// ctx has a deadline of its own, which then bounds the wait (and whose
// expiry drops the index too, see waitFailed). unbound ends the bound.
//
// Most callers pass context.Background (database/sql does for calls
// without a context); for them the Conn reuses one cancelable context and
// timer, so that the bound costs no allocation per request.
func (c *Conn) bound(ctx context.Context, idx uint64) context.Context {
	if idx == 0 {
		return ctx
	}
	if _, ok := ctx.Deadline(); ok {
		return ctx
	}
	w := &c.wait
	if ctx == context.Background() || ctx == context.TODO() {
		if w.reused == nil || w.reused.Err() != nil {
			w.reused, w.cancelReused = context.WithCancel(context.Background())
			w.timer = time.AfterFunc(c.repl.wait, w.cancelReused)
		} else {
			w.timer.Reset(c.repl.wait)
		}
		w.armed = true
		return w.reused
	}
	bctx, cancel := context.WithTimeout(ctx, c.repl.wait)
	w.cancel = cancel
	return bctx
}

// unbound ends the bound bound set and reports whether it expired.
func (c *Conn) unbound(parent, bounded context.Context) (expired bool) {
	w := &c.wait
	switch {
	case w.armed:
		w.armed = false
		return !w.timer.Stop()
	case w.cancel != nil:
		expired = errors.Is(bounded.Err(), context.DeadlineExceeded) && parent.Err() == nil
		w.cancel()
		w.cancel = nil
	}
	return expired
}

// waiter is a Conn's bound on requests that carry a replication index.
type waiter struct {
	reused       context.Context // for callers without a context of their own
	cancelReused context.CancelFunc
	timer        *time.Timer // cancels reused
	armed        bool        // timer runs for the current request
	cancel       context.CancelFunc
}

// waitFailed handles the failure err of a request that carried idx. If the
// Replication's wait cut it short, or the caller's deadline ended it, the
// replica may never reach idx (the primary's log was reset), so the index
// is dropped: later requests do not wait for it again. A failure the wait
// caused becomes an ErrReplicationWait.
func (c *Conn) waitFailed(parent context.Context, idx uint64, expired bool, err error) error {
	if !expired {
		if errors.Is(parent.Err(), context.DeadlineExceeded) {
			c.repl.drop(idx)
		}
		return err
	}
	c.repl.drop(idx)
	e := &transport.Error{Err: waitErr{context.DeadlineExceeded}, Message: fmt.Sprintf(
		"no answer within %v to a request that waits for replication index %d: the replica has not reached it "+
			"(its primary may be unreachable, or its log was reset); the index is dropped, and a write may or may not have been applied",
		c.repl.wait, idx)}
	e.Safe = isSafe(err)
	return e
}

// waitErr is the cause of an ErrReplicationWait error: the failure itself,
// also matching ErrReplicationWait.
type waitErr struct{ cause error }

func (w waitErr) Error() string        { return w.cause.Error() }
func (w waitErr) Unwrap() error        { return w.cause }
func (w waitErr) Is(target error) bool { return target == ErrReplicationWait }

// observe keeps the indexes of the results of a request that carried sent.
func (c *Conn) observe(results []codec.StreamResult, sent uint64) {
	for i := range results {
		r := &results[i]
		if !r.OK {
			continue
		}
		switch r.Response.Type {
		case codec.RequestExecute:
			if r.Response.Result.HasReplicationIndex {
				c.repl.observe(sent, r.Response.Result.ReplicationIndex)
			}
		case codec.RequestBatch:
			if b := &r.Response.Batch; b.HasReplicationIndex {
				c.repl.observe(sent, b.ReplicationIndex)
			}
		}
	}
}
