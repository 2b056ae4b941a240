package libsql

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/gohrana/libsql/codec"
)

// Deferred execution. Over HTTP every statement costs a round trip, and for
// a transaction of many small writes the round trips are nearly all of the
// time. In deferred mode (Config.DeferredExec, or WithDeferredExec on
// BeginTx's context) Exec inside a transaction queues its statement and
// returns at once; the queue goes out as one batch, each statement guarded
// by the success of the one before, when
//
//   - a Query, a multi-statement Exec or Commit needs the server (Commit
//     sends BEGIN, the queue, COMMIT and close in as few requests as one),
//   - a Result's LastInsertId or RowsAffected needs the answer, or
//   - the queue reaches maxQueuedStmts statements or maxQueuedBytes bytes.
//
// The price is that errors arrive late: a statement that fails is reported
// by whichever call sent it, and since the application carried on as if it
// had succeeded, the transaction is rolled back and lost (ErrTxLost, plus
// the statement's own class such as ErrConstraint). Rollback discards the
// queue without sending it.

var _ driver.Result = (*deferredResult)(nil)

// Queue limits: a batch of this size takes sqld a few milliseconds, so the
// round trip is amortised, and the request stays far from any body limit.
const (
	maxQueuedStmts = 128
	maxQueuedBytes = 512 << 10
)

type deferredKey struct{}

// WithDeferredExec returns a context that makes BeginTx start its
// transaction with deferred execution on or off, whatever
// Config.DeferredExec says:
//
//	tx, err := db.BeginTx(libsql.WithDeferredExec(ctx, true), nil)
func WithDeferredExec(ctx context.Context, on bool) context.Context {
	return context.WithValue(ctx, deferredKey{}, on)
}

// deferredFrom resolves the mode for a transaction begun with ctx.
func deferredFrom(ctx context.Context, def bool) bool {
	if on, ok := ctx.Value(deferredKey{}).(bool); ok {
		return on
	}
	return def
}

// queued is one statement waiting to be sent.
type queued struct {
	stmt codec.Stmt
	res  *deferredResult
}

// deferredResult is the Result of a queued statement. Its methods send the
// queue if the statement has not been answered yet.
type deferredResult struct {
	t    *tx
	seq  int // position among the transaction's deferred statements, from 1
	done bool
	res  result
	err  error
}

// LastInsertId returns the statement's last insert rowid, waiting for the
// server if the statement is still queued.
func (r *deferredResult) LastInsertId() (int64, error) {
	if err := r.wait(); err != nil {
		return 0, err
	}
	return r.res.lastID, nil
}

// RowsAffected returns the number of rows the statement changed, waiting
// for the server if the statement is still queued.
func (r *deferredResult) RowsAffected() (int64, error) {
	if err := r.wait(); err != nil {
		return 0, err
	}
	return r.res.affected, nil
}

func (r *deferredResult) wait() error {
	if !r.done {
		// database/sql holds the connection's lock around Result methods,
		// so this cannot race with other calls on the transaction. The
		// flush resolves every queued result, this one included.
		_ = r.t.flush(r.t.ctx)
	}
	if !r.done {
		return protocolError("deferred statement was never answered")
	}
	return r.err
}

func (r *deferredResult) resolve(res result, err error) {
	r.res, r.err, r.done = res, err, true
}

// errNotSent resolves statements still queued when the transaction is
// rolled back.
var errNotSent = fmt.Errorf("libsql: deferred statement not run, the transaction was rolled back before it was sent: %w", ErrTxDone)

// deferQueue is a transaction's deferred statements: those queued and not
// sent yet, and the batch they go out in. Only its methods change it.
type deferQueue struct {
	stmts []queued
	bytes int               // about how many bytes they add to a request
	n     int               // statements queued so far in the transaction
	steps []codec.BatchStep // the batch they go out in
	conds []codec.BatchCond // its steps' conditions, pointed into
}

// len is the number of statements queued.
func (q *deferQueue) len() int { return len(q.stmts) }

// push queues st, which adds about size bytes to a request, for t, and
// returns its Result; full reports that the queue should go out now.
func (q *deferQueue) push(t *tx, st *codec.Stmt, size int) (r *deferredResult, full bool) {
	q.n++
	r = &deferredResult{t: t, seq: q.n}
	q.stmts = append(q.stmts, queued{stmt: *st, res: r})
	q.bytes += size
	return r, len(q.stmts) >= maxQueuedStmts || q.bytes >= maxQueuedBytes
}

// lay lays the queue out as batch steps: begin first if not "", final
// (COMMIT) last if given, and every step after the first guarded by the
// success of the one before, so that nothing runs after a failure.
func (q *deferQueue) lay(begin, final string) []codec.BatchStep {
	q.steps = q.steps[:0]
	if begin != "" {
		q.steps = append(q.steps, codec.BatchStep{Stmt: codec.Stmt{SQL: begin}})
	}
	for i := range q.stmts {
		q.steps = append(q.steps, codec.BatchStep{Stmt: q.stmts[i].stmt})
	}
	if final != "" {
		q.steps = append(q.steps, codec.BatchStep{Stmt: codec.Stmt{SQL: final}})
	}
	if cap(q.conds) < len(q.steps) {
		q.conds = make([]codec.BatchCond, len(q.steps))
	}
	q.conds = q.conds[:len(q.steps)]
	for i := 1; i < len(q.steps); i++ {
		q.conds[i] = codec.BatchCond{Type: codec.CondOK, Step: uint32(i - 1)}
		q.steps[i].Condition = &q.conds[i]
	}
	return q.steps
}

// resolve gives each queued statement its outcome from steps and empties
// the queue. It returns the first statement's failure, if any, which the
// caller must turn into the transaction's loss; the statements after it
// did not run and get the same error.
func (q *deferQueue) resolve(steps []codec.StepOutcome) error {
	var failed error
	for i := range q.stmts {
		qs := &q.stmts[i]
		switch s := &steps[i]; {
		case failed != nil:
			qs.res.resolve(result{}, failed)
		case s.Status == codec.StepOK:
			qs.res.resolve(newResult(&s.Result), nil)
		default:
			// The caller carried on as if it had worked, so the
			// transaction cannot: it is rolled back.
			failed = deferredStmtError(qs.res.seq, qs.stmt.SQL, s)
			qs.res.resolve(result{}, failed)
		}
	}
	q.empty()
	return failed
}

// drop resolves every queued statement with err, unsent.
func (q *deferQueue) drop(err error) {
	for i := range q.stmts {
		q.stmts[i].res.resolve(result{}, err)
	}
	q.empty()
}

// empty empties the queue, keeping its memory.
func (q *deferQueue) empty() {
	clear(q.stmts)
	q.stmts = q.stmts[:0]
	clear(q.steps)
	q.bytes = 0
}

// queueExec queues st and returns its Result.
func (t *tx) queueExec(ctx context.Context, st *codec.Stmt) (driver.Result, error) {
	t.endCursor()
	if err := t.usable(); err != nil {
		return nil, err
	}
	// The caller may reuse its []byte arguments as soon as Exec returns.
	size := len(st.SQL)
	for i := range st.Args {
		size += ownValue(&st.Args[i])
	}
	for i := range st.NamedArgs {
		size += len(st.NamedArgs[i].Name) + ownValue(&st.NamedArgs[i].Value)
	}
	st.WantRows = false // Exec discards rows; this keeps the batch's answer small
	r, full := t.dq.push(t, st, size)
	if full {
		if err := t.flush(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ownValue copies a blob argument and returns about how many bytes the
// value adds to a request.
func ownValue(v *codec.Value) int {
	if v.Type == codec.Blob {
		v.Bytes = bytes.Clone(v.Bytes)
		return 32 + len(v.Bytes)*4/3
	}
	return 32 + len(v.Bytes)
}

// flush sends the queued statements in one batch and resolves their
// results. A failure of any kind loses the transaction: the server's side
// is rolled back at once (releasing its locks), and the error is returned
// now and by every later call.
func (t *tx) flush(ctx context.Context) error {
	if t.dq.len() == 0 {
		return nil
	}
	if t.c.tr != nil {
		return t.c.tr.sendQueue(ctx, t, false, t.sendQueue)
	}
	return t.sendQueue(ctx)
}

// sendQueue is flush of a queue that is not empty, untraced. The batch
// carries the transaction's BEGIN if it has not begun (sendBatch).
func (t *tx) sendQueue(ctx context.Context) error {
	if err := t.usable(); err != nil {
		t.dropQueue(err)
		return err
	}
	res, steps, err := t.sendBatch(ctx, func(withBegin bool) []codec.BatchStep { return t.dq.lay(t.beginIf(withBegin), "") })
	if err != nil {
		return t.poison(refused(err))
	}
	defer res.Release()
	if err := t.dq.resolve(steps); err != nil {
		return t.poison(err)
	}
	return nil
}

// poison loses the transaction with err, closes its stream (which rolls it
// back on the server) and fails the statements still queued.
func (t *tx) poison(err error) error {
	t.lose(err)
	t.c.s.Reset()
	t.dropQueue(t.lostErr)
	return t.lostErr
}

// dropQueue resolves every queued statement with err, unsent.
func (t *tx) dropQueue(err error) { t.dq.drop(err) }

// commitQueued commits a pending or active transaction whose queue is not
// empty: BEGIN (if needed), the queue, COMMIT and close, in one request
// (the stream's hold has ended). ctx is BeginTx's, or carries its trace.
// The transaction is over whatever it returns (finish says so).
func (t *tx) commitQueued(ctx context.Context) error {
	if t.c.tr != nil {
		return t.c.tr.sendQueue(ctx, t, true, t.sendCommit)
	}
	return t.sendCommit(ctx)
}

// sendCommit is commitQueued, untraced.
func (t *tx) sendCommit(ctx context.Context) error {
	pending := t.state == txPending
	res, steps, err := t.sendBatch(ctx, func(withBegin bool) []codec.BatchStep { return t.dq.lay(t.beginIf(withBegin), "COMMIT") })
	if err != nil {
		if pending && isSafe(err) {
			// Nothing reached the server: no transaction was ever open.
			err = inTxRequest(err)
		} else {
			// A batch refused as a whole, or whose BEGIN failed, is
			// lost: the close that followed rolled back what the
			// transaction held.
			err = finishFailed(endCommit, refused(err))
		}
		t.dropQueue(err)
		return err
	}
	defer res.Release()
	// Whatever failed below, the close that followed rolled it back.
	commit := &steps[len(steps)-1]
	if err := t.dq.resolve(steps[:len(steps)-1]); err != nil {
		return lost(err)
	}
	if commit.Status == codec.StepOK {
		return nil
	}
	return lost(driverStepError(commit, "COMMIT", false))
}
