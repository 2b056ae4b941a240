package libsql

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
)

// Statement is one statement of a Batch: SQL text and its arguments, as
// db.ExecContext takes them (sql.Named for named ones).
type Statement struct {
	SQL  string
	Args []any
}

// BatchResult is the outcome of one statement of a Batch. Rows hold the
// same Go types rows.Scan into an any gives: int64, float64, string, []byte,
// nil, and time.Time for text in a DATE, DATETIME or TIMESTAMP column.
type BatchResult struct {
	Columns      []string
	Rows         [][]any
	RowsAffected int64
	LastInsertID int64
}

// BatchMode is how a Batch outside a transaction begins its own, as in
// libsql-client-ts.
type BatchMode uint8

const (
	// BatchDeferred begins with BEGIN DEFERRED: SQLite takes the write lock
	// at the first write. The default.
	BatchDeferred BatchMode = iota
	// BatchWrite begins with BEGIN IMMEDIATE: the write lock first.
	BatchWrite
	// BatchRead begins with BEGIN TRANSACTION READONLY, and every
	// statement must only read (sqld's describe says so, asked once per
	// text and connection); one that would write is refused with an error
	// matching ErrReadOnly before anything is sent.
	BatchRead
)

// BatchOption adjusts a Batch.
type BatchOption func(*batchOptions)

type batchOptions struct{ mode BatchMode }

// WithBatchMode sets how a Batch outside a transaction begins its own.
func WithBatchMode(m BatchMode) BatchOption { return func(o *batchOptions) { o.mode = m } }

// Batch runs stmts on conn in one request, all or nothing, and returns one
// result per statement. The statements run in a transaction of their own
// (see BatchMode), each only if the ones before it succeeded; if one fails,
// the whole batch is rolled back, and the error (an *Error of that
// statement's class) names the statement by its position and SQL.
//
// Inside a transaction already open on conn (BeginTx, or BEGIN run as SQL)
// the batch runs in a savepoint of that transaction instead, rolled back to
// if a statement fails, and the transaction goes on.
//
// conn may be a connection of this driver or of a wrapper around it that
// gives the underlying driver.Conn with a Raw() driver.Conn method, as
// github.com/XSAM/otelsql's does. A wrapper that also has an
// ObserveWrite() method (the embedded replica's connection, whose local
// reads wait for writes made on the primary) has it called after a batch
// not in BatchRead mode that ran, or may have run.
func Batch(ctx context.Context, conn *sql.Conn, stmts []Statement, opts ...BatchOption) ([]BatchResult, error) {
	var o batchOptions
	for _, opt := range opts {
		opt(&o)
	}
	var out []BatchResult
	err := conn.Raw(func(dc any) error {
		c, observers, err := unwrapConn(dc)
		if err != nil {
			return err
		}
		out, err = c.batch(ctx, stmts, o.mode)
		if o.mode != BatchRead && len(stmts) > 0 && mayHaveRun(err) {
			for _, w := range observers {
				w.ObserveWrite()
			}
		}
		return err
	})
	return out, err
}

// writeObserver is a wrapper of this driver's connection that learns of the
// writes made through it by a function given its *sql.Conn (see Batch).
type writeObserver interface{ ObserveWrite() }

// mayHaveRun reports whether a batch that returned err ran, or may have.
func mayHaveRun(err error) bool {
	if err == nil {
		return true
	}
	var unsent unsentError
	return !errors.As(err, &unsent) && !isSafe(err)
}

// unsentError is the error of a batch refused before anything was sent
// (an argument it cannot send).
type unsentError struct{ err error }

func (e unsentError) Error() string { return e.err.Error() }
func (e unsentError) Unwrap() error { return e.err }

// unwrapConn finds this driver's connection under dc, following Raw()
// driver.Conn through wrappers, and the wrappers that observe writes.
func unwrapConn(dc any) (*conn, []writeObserver, error) {
	var observers []writeObserver
	for range 8 {
		if w, ok := dc.(writeObserver); ok {
			observers = append(observers, w)
		}
		switch c := dc.(type) {
		case *conn:
			return c, observers, nil
		case interface{ Raw() driver.Conn }:
			dc = c.Raw()
		default:
			return nil, nil, fmt.Errorf("libsql: Batch needs a connection of this driver, not a %T", dc)
		}
	}
	return nil, nil, errors.New("libsql: Batch: too many wrappers around the connection")
}

// batchSavepoint is the savepoint a Batch inside a transaction runs in.
const batchSavepoint = "libsql_batch"

// batchPlan is a Batch's steps: what wraps the statements and, at
// stmts..stmts+n, the statements themselves.
type batchPlan struct {
	steps []codec.BatchStep
	conds []codec.BatchCond // the steps' conditions, pointed into
	stmts int               // index of the first statement's step
	n     int               // statements
	end   int               // the COMMIT or RELEASE that ends it
	begin int               // the step that begins it: BEGIN or SAVEPOINT; -1 if none
}

// cond stores a condition and returns a pointer to it.
func (p *batchPlan) cond(c codec.BatchCond) *codec.BatchCond {
	p.conds = append(p.conds, c)
	return &p.conds[len(p.conds)-1]
}

func (p *batchPlan) add(sql string, cond *codec.BatchCond) int {
	p.steps = append(p.steps, codec.BatchStep{Condition: cond, Stmt: codec.Stmt{SQL: sql}})
	return len(p.steps) - 1
}

// okAfter is the condition of a step that runs only if step i succeeded and
// the transaction is still open (a statement's ON CONFLICT ROLLBACK, or
// SQLite on some errors, ends it, and what follows must not run outside
// it); guard is false on Hrana 2, which has no is_autocommit.
func (p *batchPlan) okAfter(i int, guard bool) *codec.BatchCond {
	ok := codec.BatchCond{Type: codec.CondOK, Step: uint32(i)}
	if !guard {
		return p.cond(ok)
	}
	inTx := codec.BatchCond{Type: codec.CondNot, Cond: p.cond(codec.BatchCond{Type: codec.CondIsAutocommit})}
	return p.cond(codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{ok, inTx}})
}

// plan builds the steps: begin (BEGIN ..., or SAVEPOINT inside a
// transaction, preceded by the pending transaction's own BEGIN statement
// prefixBegin unless ""), the statements, and the end with its rollback.
func plan(stmts []codec.Stmt, mode BatchMode, inTx bool, prefixBegin string, guard bool) *batchPlan {
	n := len(stmts)
	p := &batchPlan{
		steps: make([]codec.BatchStep, 0, n+6),
		conds: make([]codec.BatchCond, 0, 2*n+12), // never grows: steps point into it
		n:     n,
		begin: -1,
	}
	var prev int
	if inTx {
		if prefixBegin != "" {
			p.add(prefixBegin, nil)
			p.begin = p.add("SAVEPOINT "+batchSavepoint, p.cond(codec.BatchCond{Type: codec.CondOK, Step: 0}))
		} else {
			p.begin = p.add("SAVEPOINT "+batchSavepoint, nil)
		}
	} else {
		begin := "BEGIN DEFERRED"
		switch mode {
		case BatchWrite:
			begin = "BEGIN IMMEDIATE"
		case BatchRead:
			begin = "BEGIN TRANSACTION READONLY"
		}
		p.begin = p.add(begin, nil)
	}
	prev = p.begin
	p.stmts = len(p.steps)
	for i := range stmts {
		p.steps = append(p.steps, codec.BatchStep{Condition: p.okAfter(prev, guard), Stmt: stmts[i]})
		prev = len(p.steps) - 1
	}
	notOK := func(i int) *codec.BatchCond {
		return p.cond(codec.BatchCond{Type: codec.CondNot, Cond: p.cond(codec.BatchCond{Type: codec.CondOK, Step: uint32(i)})})
	}
	if inTx {
		p.end = p.add("RELEASE "+batchSavepoint, p.okAfter(prev, guard))
		back := p.add("ROLLBACK TO "+batchSavepoint, notOK(p.end))
		p.add("RELEASE "+batchSavepoint, p.cond(codec.BatchCond{Type: codec.CondOK, Step: uint32(back)}))
	} else {
		p.end = p.add("COMMIT", p.okAfter(prev, guard))
		p.add("ROLLBACK", notOK(p.end))
	}
	return p
}

// results checks the outcome of a planned batch and converts the
// statements' results.
func (p *batchPlan) results(b *codec.BatchResult, st []codec.Stmt) ([]BatchResult, error) {
	steps := b.Steps
	if len(steps) != len(p.steps) {
		return nil, stepCountError(len(p.steps), len(steps))
	}
	if s := &steps[p.begin]; s.Status != codec.StepOK {
		return nil, driverStepError(s, p.steps[p.begin].Stmt.SQL, false)
	}
	for i := range p.n {
		if s := &steps[p.stmts+i]; s.Status == codec.StepFailed {
			return nil, batchStmtError(i, st[i].SQL, &s.Error)
		}
	}
	if s := &steps[p.end]; s.Status != codec.StepOK {
		return nil, driverStepError(s, p.steps[p.end].Stmt.SQL, true)
	}
	out := make([]BatchResult, p.n)
	var bx arena.Boxer
	for i := range out {
		out[i] = batchResult(&steps[p.stmts+i].Result, &bx)
	}
	return out, nil
}

// batchResult converts one statement's result.
func batchResult(r *codec.StmtResult, bx *arena.Boxer) BatchResult {
	out := BatchResult{RowsAffected: int64(r.AffectedRowCount), LastInsertID: r.LastInsertRowID}
	if len(r.Cols) == 0 {
		return out
	}
	out.Columns = make([]string, len(r.Cols))
	kinds := make([]colKind, len(r.Cols))
	for i, c := range r.Cols {
		out.Columns[i] = c.Name
		kinds[i] = classify(c.Decltype)
	}
	out.Rows = make([][]any, r.NumRows)
	for i := range out.Rows {
		row := r.Row(i)
		vals := make([]any, len(row))
		for j := range row {
			v := fromValue(&row[j], kinds[j], bx)
			if b, ok := v.([]byte); ok {
				// Blob bytes point into the decoder's memory, which the
				// result's release reuses: the caller gets its own copy.
				v = bytes.Clone(b)
			}
			vals[j] = v
		}
		out.Rows[i] = vals
	}
	return out
}
