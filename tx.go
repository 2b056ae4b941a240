package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
)

var _ driver.Tx = (*tx)(nil)

// txState is where a transaction stands on the server.
type txState uint8

const (
	txPending txState = iota // BEGIN not sent yet; it rides with the first statement
	txActive                 // BEGIN succeeded; the stream holds the transaction
	txLost                   // the server dropped it (rolled back); only Rollback remains
	txDone                   // committed or rolled back
)

// txEnd is how a transaction ends.
type txEnd uint8

const (
	endCommit txEnd = iota + 1
	endRollback
)

func (e txEnd) sql() string {
	if e == endCommit {
		return "COMMIT"
	}
	return "ROLLBACK"
}

// tx is an interactive transaction on the session's stream, which it holds
// from BeginTx to Commit or Rollback. It owns that stream's use: the rows
// of a cursor still streaming on it, and the queue of deferred statements.
//
// Its state moves only here, in tx.go: sendBatch is the one way out of
// txPending (BEGIN rides with a batch), whoever sends the batch (a
// statement, a Batch, deferred statements); lose is the way to txLost, and
// finish the way to txDone. Deferred execution (tx_deferred.go) keeps its
// queue in a deferQueue of its own.
type tx struct {
	c         *conn           // the connection it runs on: its session, trace, describe cache and BusyTimeout
	ctx       context.Context // BeginTx's; it bounds COMMIT
	readOnly  bool
	state     txState
	lostErr   error
	streaming *cursorRows       // rows of a cursor streaming on the stream, if any
	steps     []codec.BatchStep // beginWith's batch
	cond      codec.BatchCond   // its statement's condition

	deferExec bool       // Exec queues its statement (deferred execution)
	dq        deferQueue // the queued statements (tx_deferred.go)

	begin string // the BEGIN statement: BEGIN, BEGIN IMMEDIATE or BEGIN EXCLUSIVE
}

var _ describer = (*tx)(nil)

// newTx begins a transaction on c's session: nothing is sent yet. Its
// BEGIN is c's Config.TxLock, but a read-only transaction takes no write
// lock.
func newTx(ctx context.Context, c *conn, readOnly, deferExec bool) *tx {
	c.s.Hold()
	begin := c.txBegin
	if begin == "" || readOnly {
		begin = "BEGIN"
	}
	return &tx{c: c, ctx: ctx, readOnly: readOnly, deferExec: deferExec, begin: begin}
}

// beginSQL returns the statement that begins a transaction of the
// Config.TxLock lock.
func beginSQL(lock string) string {
	switch lock {
	case TxLockImmediate:
		return "BEGIN IMMEDIATE"
	case TxLockExclusive:
		return "BEGIN EXCLUSIVE"
	}
	return "BEGIN"
}

// finished reports whether the transaction has ended (committed or rolled
// back); a lost one has not until Rollback.
func (t *tx) finished() bool { return t.state == txDone }

// prepare readies the stream for the transaction's next request: rows still
// streaming on it end, the transaction must be usable, and queued
// statements go first.
func (t *tx) prepare(ctx context.Context) error {
	t.endCursor()
	if err := t.usable(); err != nil {
		return err
	}
	return t.flush(ctx)
}

// execute runs one statement inside the transaction.
func (t *tx) execute(ctx context.Context, st *codec.Stmt) (*session.Result, error) {
	if err := t.prepare(ctx); err != nil {
		return nil, err
	}
	if t.readOnly {
		ro, err := t.c.described.check(ctx, t, st.SQL)
		if err != nil {
			return nil, err
		}
		if !ro {
			return nil, readOnlyError("statement would write inside a read-only transaction")
		}
	}
	if t.state == txPending {
		return t.beginWith(ctx, st)
	}
	res, err := t.c.s.Execute(ctx, st)
	if err != nil {
		return nil, t.failed(err)
	}
	return res, nil
}

// freshIfLost starts a new server stream if the conn's was lost (its
// WebSocket died) before BEGIN went out: nothing of the transaction had
// run, so nothing is lost, and the transaction begins on the new stream
// (with the conn's settings replayed) rather than failing.
func (t *tx) freshIfLost() {
	if t.state == txPending && t.c.s.Lost() {
		t.c.s.Reset()
	}
}

// sendBatch sends a batch on the transaction's stream. It is the one
// place where a transaction leaves txPending: a pending one's BEGIN rides
// with the batch. lay lays the batch out: when withBegin, BEGIN first and
// every other step run only if BEGIN succeeded (through its condition or
// those of the steps before it), so that nothing can run outside the
// transaction. sendBatch returns the result, for the caller to release, and
// the outcomes of the steps after BEGIN.
//
// When BEGIN did not run, because the batch was refused as a whole (a
// statement error for the request: sqld compiles every statement before
// running any) or BEGIN itself failed (beginError, however it was sent),
// the stream is closed and the transaction stays pending, which failed
// keeps so. Any other error is the caller's to judge.
//
// A BEGIN that failed with SQLITE_BUSY (another writer holds the lock that
// BEGIN IMMEDIATE or EXCLUSIVE takes) began nothing, and when the answer
// shows that no step after it ran, the batch is sent again, with backoff,
// within busyTimeout, as an autocommit statement is.
func (t *tx) sendBatch(ctx context.Context, lay func(withBegin bool) []codec.BatchStep) (*session.Result, []codec.StepOutcome, error) {
	res, steps, err := t.sendBatchOnce(ctx, lay)
	if err == nil || t.state != txPending || !errors.Is(err, errBeganNothing) || !hasCode(err, codeSQLiteBusy) {
		return res, steps, unwrapBegan(err)
	}
	err = retryBusy(ctx, t.c.tr, t.c.busyTimeout, err, func(ctx context.Context) (bool, error) {
		var rerr error
		res, steps, rerr = t.sendBatchOnce(ctx, lay)
		if rerr != nil && !errors.Is(rerr, errBeganNothing) && hasCode(rerr, codeSQLiteBusy) {
			// A BUSY that does not show BEGIN alone failed is not
			// retried: mask its code from retryBusy's test.
			return true, noRetry{rerr}
		}
		return true, rerr
	})
	var nr noRetry
	if errors.As(err, &nr) {
		err = nr.err
	}
	if err != nil {
		return nil, nil, unwrapBegan(err)
	}
	return res, steps, nil
}

// unwrapBegan returns the BEGIN failure a beganNothing wraps, or err.
func unwrapBegan(err error) error {
	if b, ok := err.(beganNothing); ok {
		return b.err
	}
	return err
}

// errBeganNothing marks a BEGIN failure after which the answer shows that
// no other step of the batch ran.
var errBeganNothing = errors.New("libsql: BEGIN failed and nothing after it ran")

// beganNothing wraps a BEGIN failure with errBeganNothing.
type beganNothing struct{ err error }

func (b beganNothing) Error() string   { return b.err.Error() }
func (b beganNothing) Unwrap() []error { return []error{b.err, errBeganNothing} }

// noRetry hides an error from retryBusy's SQLITE_BUSY test.
type noRetry struct{ err error }

func (n noRetry) Error() string { return n.err.Error() }

// sendBatchOnce is sendBatch without its retry.
func (t *tx) sendBatchOnce(ctx context.Context, lay func(withBegin bool) []codec.BatchStep) (*session.Result, []codec.StepOutcome, error) {
	withBegin := t.state == txPending
	if withBegin {
		t.freshIfLost()
		t.c.tr.begun()
	}
	res, err := t.c.s.Batch(ctx, lay(withBegin))
	if err != nil {
		if withBegin && isStatementError(err) {
			t.c.s.Reset()
		}
		return nil, nil, err
	}
	steps := res.Batch().Steps
	if withBegin {
		if steps[0].Status != codec.StepOK {
			var err error = beginError(&steps[0])
			if allSkipped(steps[1:]) {
				err = beganNothing{err}
			}
			res.Release()
			t.c.s.Reset()
			return nil, nil, err
		}
		t.state = txActive
		steps = steps[1:]
	}
	return res, steps, nil
}

// beginIf returns the transaction's BEGIN statement if withBegin, else "".
func (t *tx) beginIf(withBegin bool) string {
	if withBegin {
		return t.begin
	}
	return ""
}

// allSkipped reports whether no step of steps ran.
func allSkipped(steps []codec.StepOutcome) bool {
	for i := range steps {
		if steps[i].Status != codec.StepSkipped {
			return false
		}
	}
	return true
}

// beginWith runs one statement in a batch with the transaction's BEGIN
// (see sendBatch). The result returned is the statement's (res.Stmt() is
// pointed at it).
func (t *tx) beginWith(ctx context.Context, st *codec.Stmt) (*session.Result, error) {
	res, steps, err := t.sendBatch(ctx, func(withBegin bool) []codec.BatchStep {
		t.steps = t.steps[:0]
		var cond *codec.BatchCond
		if withBegin {
			t.steps = append(t.steps, codec.BatchStep{Stmt: codec.Stmt{SQL: t.begin}})
			t.cond = codec.BatchCond{Type: codec.CondOK, Step: 0}
			cond = &t.cond
		}
		t.steps = append(t.steps, codec.BatchStep{Condition: cond, Stmt: *st})
		return t.steps
	})
	clear(t.steps)
	if err != nil {
		return nil, t.failed(err)
	}
	switch steps[0].Status {
	case codec.StepOK:
		res.UseStep(len(res.Batch().Steps) - 1) // the statement's, after BEGIN's if any
		return res, nil
	case codec.StepFailed:
		err := t.stmtFailed(&steps[0].Error)
		res.Release()
		return nil, err
	}
	res.Release()
	return nil, protocolError("server skipped the statement after BEGIN")
}

// batch runs a Batch inside the transaction, in a savepoint; a transaction
// that has sent nothing yet begins with it.
func (t *tx) batch(ctx context.Context, st []codec.Stmt, guard bool) ([]BatchResult, error) {
	if err := t.prepare(ctx); err != nil {
		return nil, err
	}
	if t.readOnly {
		for i := range st {
			ro, err := t.c.described.check(ctx, t, st[i].SQL)
			if err != nil {
				return nil, err
			}
			if !ro {
				return nil, batchReadOnlyError(i, st[i].SQL, "statement would write inside a read-only transaction")
			}
		}
	}
	var p *batchPlan
	res, _, err := t.sendBatch(ctx, func(withBegin bool) []codec.BatchStep {
		p = plan(st, 0, true, t.beginIf(withBegin), guard)
		return p.steps
	})
	if err != nil {
		return nil, t.failed(err)
	}
	defer res.ReleaseShared() // values handed out share its memory
	out, err := p.results(res.Batch(), st)
	if steps := res.Batch().Steps; err != nil && steps[len(steps)-1].Status != codec.StepOK {
		// Neither the savepoint's release nor its rollback ran to the end:
		// SQLite ended the transaction itself (a statement's ON CONFLICT
		// ROLLBACK), or the server could not roll back to the savepoint.
		t.lose(err)
		return nil, t.lostErr
	}
	return out, err
}

// sequence runs a multi-statement script inside the transaction.
func (t *tx) sequence(ctx context.Context, script string) error {
	if err := t.prepare(ctx); err != nil {
		return err
	}
	if t.readOnly {
		return readOnlyError("multi-statement scripts are not allowed in a read-only transaction")
	}
	if t.state == txPending {
		// A sequence cannot be made conditional on BEGIN, so BEGIN goes
		// first, on its own.
		res, err := t.beginWith(ctx, &codec.Stmt{SQL: "SELECT 1"})
		if err != nil {
			return err
		}
		res.Release()
	}
	if err := t.c.s.Sequence(ctx, script); err != nil {
		return t.failed(err)
	}
	return nil
}

// describe describes a statement on the transaction's stream.
func (t *tx) describe(ctx context.Context, sql string) (codec.DescribeResult, error) {
	d, err := t.c.s.Describe(ctx, sql)
	if err != nil {
		return d, t.failed(err)
	}
	return d, nil
}

// cursor streams a statement's rows on the transaction's stream. The rows
// belong to the transaction until they end or its next statement ends them.
func (t *tx) cursor(ctx context.Context, st *codec.Stmt) (*cursorRows, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if t.state == txPending {
		// The first statement's batch [BEGIN, statement] was too large to
		// answer, and closing its stream undid the BEGIN: begin again, on
		// its own, as a cursor cannot be made conditional on it.
		res, err := t.beginWith(ctx, &codec.Stmt{SQL: "SELECT 1"})
		if err != nil {
			return nil, err
		}
		res.Release()
	}
	cur, err := t.c.s.OpenCursor(ctx, []codec.BatchStep{{Stmt: *st}})
	if err != nil {
		t.lose(err)
		return nil, t.lostErr
	}
	r, err := newCursorRows(cur, t.stmtFailed)
	if err != nil {
		return nil, err
	}
	t.streaming = r
	return r, nil
}

// usable returns the error for a statement on a finished or lost
// transaction.
func (t *tx) usable() error {
	switch t.state {
	case txLost:
		return t.lostErr
	case txDone:
		return ErrTxDone
	}
	// database/sql rolls the transaction back when BeginTx's context ends,
	// from another goroutine; refuse statements in the meantime, which
	// would otherwise run in a transaction about to vanish.
	return t.ctx.Err()
}

// failed turns the error of a request on the transaction's stream into the
// caller's: a statement error leaves the transaction as it is (unless the
// server says it rolled it back); any other failure ends it, since the
// server drops a stream on every HTTP error, and after a network error the
// baton is unknown.
func (t *tx) failed(err error) error {
	if t.state == txPending && (isStatementError(err) || isSafe(err)) {
		// BEGIN did not run (see sendBatch), or nothing reached the
		// server: the transaction has not started.
		return err
	}
	if isStatementError(err) && !hasCode(err, codeTransactionTimeout) {
		return err
	}
	t.lose(err)
	return t.lostErr
}

// stmtFailed is failed for a Hrana statement error.
func (t *tx) stmtFailed(he *codec.Error) error { return t.failed(stmtError(he)) }

// lose marks the transaction as gone, keeping the error that says why.
func (t *tx) lose(cause error) {
	if t.state == txLost {
		return
	}
	t.state = txLost
	t.lostErr = lost(cause)
}

// Commit commits the transaction: COMMIT and close in one request.
func (t *tx) Commit() error { return t.end(endCommit) }

// Rollback rolls the transaction back: ROLLBACK and close in one request.
// Rolling back a lost transaction succeeds; the server already did it.
func (t *tx) Rollback() error { return t.end(endRollback) }

// end ends the transaction, within BeginTx's context.
func (t *tx) end(end txEnd) error {
	if t.c.tr != nil {
		return t.tracedEnd(end)
	}
	return t.finish(t.ctx, end)
}

// tracedEnd is Commit or Rollback as a TraceStatement.
func (t *tx) tracedEnd(end txEnd) error {
	call := CallCommit
	if end == endRollback {
		call = CallRollback
	}
	ev := t.c.tr.statement(TraceStatement, call, end.sql(), end.sql(), true)
	ctx := t.c.tr.startStatement(t.ctx, ev)
	err := t.finish(ctx, end)
	t.c.tr.endStatement(ctx, ev, err)
	return err
}

// finish ends the transaction; ctx is BeginTx's, or carries its trace.
func (t *tx) finish(ctx context.Context, end txEnd) error {
	if t.state == txDone {
		return ErrTxDone
	}
	t.endCursor()
	// Whatever happens below, the stream's hold ends here.
	t.c.s.Release()
	if t.dq.len() > 0 {
		if end == endCommit && (t.state == txPending || t.state == txActive) {
			// BEGIN (if pending), the queue and COMMIT go out at once;
			// whatever their outcome, the transaction is over.
			err := t.commitQueued(ctx)
			t.state = txDone
			return err
		}
		t.dropQueue(errNotSent)
	}
	switch t.state {
	case txPending:
		// BEGIN was never sent: the stream holds no transaction, and a
		// connection's kept stream (HTTP) goes on serving its statements.
		t.state = txDone
		t.c.s.Linger()
		return nil
	case txLost:
		t.c.s.Reset()
		t.state = txDone
		if end == endRollback {
			return nil
		}
		return t.lostErr
	}
	t.state = txDone
	// COMMIT is bounded by BeginTx's context, as database/sql documents.
	// ROLLBACK must still go out when that context is what ended the
	// transaction, so it gets one without its end (and a bound of its own).
	if end == endRollback {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
	}
	res, err := t.c.s.Execute(ctx, &codec.Stmt{SQL: end.sql()})
	if err != nil {
		return finishFailed(end, err)
	}
	res.Release()
	return nil
}

// finishFailed is the error for a COMMIT or ROLLBACK that failed. The
// session closed the stream with it (or after it), which rolls back
// whatever the failure left.
func finishFailed(end txEnd, err error) error {
	e := asError(err)
	switch {
	case e == nil:
		return err
	case isStatementError(e):
		if e.Code == codeTransactionTimeout || end == endCommit {
			// The close after a failed COMMIT rolled the transaction back.
			return lost(e)
		}
	case e.HTTPStatus >= 400 && e.HTTPStatus < 500:
		// sqld refused the whole pipeline before running it (an expired
		// or invalid baton after a restart, auth) and dropped the
		// stream, which rolls the transaction back.
		if end == endRollback {
			return nil
		}
		return lost(e)
	case end == endCommit && !isSafe(e):
		// No answer, or a 5xx that a proxy may have sent after
		// forwarding the request: the COMMIT may have run.
		return commitUnknown(e)
	}
	// A transaction's request: never to be retried elsewhere.
	return inTxRequest(e)
}

// cleanupTimeout bounds a ROLLBACK, which runs without the caller's context
// so that it goes out even when that context is what ended the transaction.
const cleanupTimeout = 10 * time.Second

// endCursor closes rows still streaming from a cursor on the transaction's
// stream: the stream serves one request at a time.
func (t *tx) endCursor() {
	r := t.streaming
	if r == nil {
		return
	}
	r.abort(errCursorInterrupted)
	t.streaming = nil
	if r.err != nil && t.state == txActive && !t.c.s.StreamOpen() {
		// The cursor's body failed, which closed the stream (PROTOCOL.md
		// §7.2.5), and the transaction went with it.
		t.lose(r.err)
	}
}
