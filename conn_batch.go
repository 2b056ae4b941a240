package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/gohrana/libsql/codec"
)

// The connection's side of Batch (batch.go): its statements bound, then run
// in autocommit mode, inside the open transaction (tx.batch) or inside one
// begun with SQL (sqlTx.batch).

// batch runs a Batch on the connection.
func (c *conn) batch(ctx context.Context, stmts []Statement, mode BatchMode) ([]BatchResult, error) {
	if len(stmts) == 0 {
		return nil, nil
	}
	var ev *TraceEvent
	if c.tr != nil {
		ev = c.tr.statement(TraceBatch, 0, batchSQL(stmts), "", c.inTx())
		ev.BatchSize = len(stmts)
		ctx = c.tr.startStatement(ctx, ev)
	}
	out, err := c.runBatch(ctx, stmts, mode)
	if ev != nil {
		c.tr.endStatement(ctx, ev, err)
	}
	return out, err
}

// runBatch is batch without its trace.
func (c *conn) runBatch(ctx context.Context, stmts []Statement, mode BatchMode) ([]BatchResult, error) {
	st := make([]codec.Stmt, len(stmts))
	for i := range stmts {
		if err := c.bindStatement(&st[i], &stmts[i]); err != nil {
			return nil, unsentError{fmt.Errorf("libsql: batch statement #%d: %w", i+1, err)}
		}
	}
	v, err := c.s.Version(ctx)
	if err != nil {
		return nil, fromSession(err)
	}
	guard := v >= 3
	switch c.mode() {
	case modeTx:
		return c.tx.batch(ctx, st, guard)
	case modeSQLTx:
		return c.sqlTx.batch(ctx, c.s, st, guard)
	}
	if mode == BatchRead {
		for i := range st {
			ro, err := c.described.check(ctx, c, st[i].SQL)
			if err != nil {
				return nil, err
			}
			if !ro {
				return nil, batchReadOnlyError(i, st[i].SQL, "statement would write in a read batch")
			}
		}
	}
	p := plan(st, mode, false, "", guard)
	if err := c.writers.acquire(ctx, c.tr); err != nil {
		return nil, err
	}
	res, err := c.s.Batch(ctx, p.steps)
	c.writers.release()
	if err != nil {
		return nil, err
	}
	defer res.ReleaseShared() // values handed out share its memory
	return p.results(res.Batch(), st)
}

// bindStatement checks and binds a Batch statement's arguments as
// database/sql does for ExecContext's.
func (c *conn) bindStatement(st *codec.Stmt, s *Statement) error {
	st.SQL = s.SQL
	st.WantRows = true
	args := make([]driver.NamedValue, len(s.Args))
	for i, a := range s.Args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		if n, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = n.Name, n.Value
		}
		if err := c.CheckNamedValue(&nv); err != nil {
			if !errors.Is(err, driver.ErrSkip) {
				return err
			}
			v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			nv.Value = v
		}
		args[i] = nv
	}
	return bindArgs(st, analyzeSQL(s.SQL), args)
}
