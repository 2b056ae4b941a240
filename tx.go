package libsql

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
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

// tx is an interactive transaction on one server stream.
type tx struct {
	c        *conn
	ctx      context.Context // BeginTx's; it bounds COMMIT
	stream   *transport.Stream
	readOnly bool
	state    txState
	lostErr  error
	cursor   *rows // rows still streaming on the stream, if any
	reqs     []codec.StreamRequest
	steps    []codec.BatchStep
	cond     codec.BatchCond

	// Deferred execution (deferred.go).
	deferExec  bool
	queue      []queued
	queueBytes int
	deferredN  int
	conds      []codec.BatchCond
}

// execute runs one statement inside the transaction.
func (t *tx) execute(ctx context.Context, st *codec.Stmt, b *respBuf) (*codec.StmtResult, error) {
	t.endCursor()
	if err := t.usable(); err != nil {
		return nil, err
	}
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	if t.readOnly {
		ro, err := t.c.isReadOnly(ctx, st.SQL)
		if err != nil {
			return nil, err
		}
		if !ro {
			return nil, &Error{Code: codeReadOnlyTx, Message: "statement would write inside a read-only transaction"}
		}
	}
	if t.state == txPending {
		return t.beginWith(ctx, st, b)
	}
	t.reqs = append(t.reqs[:0], codec.StreamRequest{Type: codec.RequestExecute, Stmt: *st})
	if err := t.pipeline(ctx, b); err != nil {
		return nil, err
	}
	r := &b.resp.Results[0]
	if !r.OK {
		return nil, t.stmtFailed(&r.Error)
	}
	return &r.Response.Result, nil
}

// beginWith sends BEGIN and the first statement in one batch, the statement
// guarded by BEGIN's success so that it can never run outside the
// transaction.
func (t *tx) beginWith(ctx context.Context, st *codec.Stmt, b *respBuf) (*codec.StmtResult, error) {
	t.cond = codec.BatchCond{Type: codec.CondOK, Step: 0}
	t.steps = append(t.steps[:0],
		codec.BatchStep{Stmt: codec.Stmt{SQL: "BEGIN"}},
		codec.BatchStep{Condition: &t.cond, Stmt: *st})
	t.reqs = append(t.reqs[:0], codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: t.steps}})
	if err := t.pipeline(ctx, b); err != nil {
		return nil, err
	}
	r := &b.resp.Results[0]
	if !r.OK {
		// The whole batch was refused before running (e.g. a parse error
		// in the statement): BEGIN did not run either.
		t.closeStream()
		return nil, stmtError(&r.Error)
	}
	steps := r.Response.Batch.Steps
	if len(steps) != 2 {
		t.lose(&Error{Message: "server answered a 2-step batch with a different number of results"})
		return nil, t.lostErr
	}
	if steps[0].Status != codec.StepOK {
		err := &Error{Message: "BEGIN failed"}
		if steps[0].Status == codec.StepFailed {
			err = stmtError(&steps[0].Error)
		}
		t.closeStream()
		return nil, err
	}
	t.state = txActive
	switch steps[1].Status {
	case codec.StepOK:
		return &steps[1].Result, nil
	case codec.StepFailed:
		return nil, t.stmtFailed(&steps[1].Error)
	}
	return nil, &Error{Message: "server skipped the statement after BEGIN"}
}

// sequence runs a multi-statement script inside the transaction.
func (t *tx) sequence(ctx context.Context, script string, b *respBuf) error {
	t.endCursor()
	if err := t.usable(); err != nil {
		return err
	}
	if err := t.flush(ctx); err != nil {
		return err
	}
	if t.readOnly {
		return &Error{Code: codeReadOnlyTx, Message: "multi-statement scripts are not allowed in a read-only transaction"}
	}
	if t.state == txPending {
		// A sequence cannot be made conditional on BEGIN, so BEGIN goes
		// first, on its own.
		if _, err := t.beginWith(ctx, &codec.Stmt{SQL: "SELECT 1"}, b); err != nil {
			return err
		}
	}
	t.reqs = append(t.reqs[:0], codec.StreamRequest{Type: codec.RequestSequence, SQL: script})
	if err := t.pipeline(ctx, b); err != nil {
		return err
	}
	if r := &b.resp.Results[0]; !r.OK {
		return t.stmtFailed(&r.Error)
	}
	return nil
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
	if err := t.ctx.Err(); err != nil {
		return err
	}
	return nil
}

// pipeline sends t.reqs on the transaction's stream. Any transport failure
// ends the transaction: the server drops a stream on every HTTP error, and
// after a network error the baton is unknown.
func (t *tx) pipeline(ctx context.Context, b *respBuf) error {
	err := t.stream.Pipeline(ctx, &codec.PipelineRequest{Requests: t.reqs}, &b.resp, &b.body)
	if err == nil {
		return nil
	}
	err = wrapErr(err)
	if t.state == txPending && isSafe(err) {
		// Nothing reached the server; the transaction has not started.
		return err
	}
	t.lose(err)
	return t.lostErr
}

func isSafe(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Safe
}

// stmtFailed turns a statement error into the caller's error, noticing when
// the server has rolled the transaction back.
func (t *tx) stmtFailed(he *codec.Error) error {
	err := stmtError(he)
	if he.Code == "TRANSACTION_TIMEOUT" {
		t.lose(err)
		return t.lostErr
	}
	return err
}

// lose marks the transaction as gone, keeping the error that says why.
func (t *tx) lose(cause error) {
	if t.state == txLost {
		return
	}
	t.state = txLost
	var e *Error
	if !errors.As(cause, &e) && isContextErr(cause) {
		t.lostErr = &Error{TxLost: true, Message: "interrupted", err: cause}
		return
	}
	t.lostErr = asLost(cause)
}

// Commit commits the transaction: COMMIT and close in one request.
func (t *tx) Commit() error {
	return t.finish("COMMIT")
}

// Rollback rolls the transaction back: ROLLBACK and close in one request.
// Rolling back a lost transaction succeeds; the server already did it.
func (t *tx) Rollback() error {
	return t.finish("ROLLBACK")
}

func (t *tx) finish(sql string) error {
	defer func() { t.c.tx = nil }()
	t.endCursor()
	if len(t.queue) > 0 {
		if sql == "COMMIT" && (t.state == txPending || t.state == txActive) {
			return t.commitQueued()
		}
		t.dropQueue(errNotSent)
	}
	switch t.state {
	case txDone:
		return ErrTxDone
	case txPending:
		// Nothing was ever sent.
		t.state = txDone
		return nil
	case txLost:
		t.closeStream()
		t.state = txDone
		if sql == "ROLLBACK" {
			return nil
		}
		return t.lostErr
	}
	t.state = txDone
	b := getResp()
	defer putResp(b)
	t.reqs = append(t.reqs[:0],
		codec.StreamRequest{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql}},
		codec.StreamRequest{Type: codec.RequestClose})
	// COMMIT is bounded by BeginTx's context, as database/sql documents.
	// ROLLBACK must still go out when that context is what ended the
	// transaction, so it gets a fresh one.
	ctx := t.ctx
	if sql == "ROLLBACK" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
	}
	err := t.stream.Pipeline(ctx, &codec.PipelineRequest{Requests: t.reqs}, &b.resp, &b.body)
	if err != nil {
		// If the request never reached the server, the stream still holds
		// the transaction and its lock: close it (which rolls back) rather
		// than leave it to expire.
		t.closeStream()
	}
	t.stream.Forget()
	if err != nil {
		return finishFailed(sql, err)
	}
	if r := &b.resp.Results[0]; !r.OK {
		err := stmtError(&r.Error)
		if r.Error.Code == "TRANSACTION_TIMEOUT" || sql == "COMMIT" {
			// The close after a failed COMMIT rolled the transaction back.
			err.TxLost = true
		}
		return err
	}
	return nil
}

// finishFailed is the error for a COMMIT or ROLLBACK request that failed
// at the transport level.
func finishFailed(sql string, err error) error {
	err = wrapErr(err)
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	cp := *e
	switch {
	case e.HTTPStatus >= 400 && e.HTTPStatus < 500:
		// sqld refused the whole pipeline before running it (an expired
		// or invalid baton after a restart, auth) and dropped the
		// stream, which rolls the transaction back.
		if sql == "ROLLBACK" {
			return nil
		}
		cp.TxLost = true
	case sql == "COMMIT" && !e.Safe:
		// No answer, or a 5xx that a proxy may have sent after
		// forwarding the request: the COMMIT may have run.
		cp.Message = "the outcome of COMMIT is unknown: " + cp.Message
	}
	return &cp
}

func (t *tx) closeStream() { t.c.closeStream(t.stream) }

// endCursor closes rows still streaming from a cursor on the transaction's
// stream: the stream serves one request at a time.
func (t *tx) endCursor() {
	if t.cursor != nil {
		t.cursor.abort(errCursorInterrupted)
		t.cursor = nil
	}
}
