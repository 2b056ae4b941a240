package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
)

// The traced forms of the calls that run SQL: each is the untraced call
// between the start and the end of its event (see tracing.go).

// tracedExec is exec as a TraceStatement.
func (c *conn) tracedExec(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Result, error) {
	ev := c.tr.statement(TraceStatement, CallExec, query, params.Keyword, c.inTx())
	ctx = c.tr.startStatement(ctx, ev)
	res, err := c.runExec(ctx, query, params, args)
	switch r := res.(type) {
	case result:
		ev.RowsAffected = r.affected
	case *deferredResult:
		ev.Deferred = r.seq
	}
	c.tr.endStatement(ctx, ev, err)
	return res, err
}

// tracedQuery is query as a TraceStatement, which the rows end when they
// close.
func (c *conn) tracedQuery(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Rows, error) {
	ev := c.tr.statement(TraceStatement, CallQuery, query, params.Keyword, c.inTx())
	ctx = c.tr.startStatement(ctx, ev)
	rows, err := c.runQuery(ctx, query, params, args)
	if err != nil {
		c.tr.endStatement(ctx, ev, err)
		return nil, err
	}
	c.tr.ran(ev)
	return &tracedRows{columnRows: rows.(columnRows), ct: c.tr, ctx: ctx, ev: ev}, nil
}

// tracedBatch is batch as a TraceBatch.
func (c *conn) tracedBatch(ctx context.Context, stmts []Statement, mode BatchMode) ([]BatchResult, error) {
	ev := c.tr.statement(TraceBatch, 0, batchSQL(stmts), "", c.inTx())
	ev.BatchSize = len(stmts)
	ctx = c.tr.startStatement(ctx, ev)
	out, err := c.runBatch(ctx, stmts, mode)
	c.tr.endStatement(ctx, ev, err)
	return out, err
}

// columnRows are rows with what both kinds of the driver's rows tell of
// their columns.
type columnRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeScanType
	driver.RowsColumnTypeNullable
}

var (
	_ columnRows = (*pipelineRows)(nil)
	_ columnRows = (*cursorRows)(nil)
	_ columnRows = (*tracedRows)(nil)
)

// tracedRows are a traced Query's rows: closing them ends its
// TraceStatement, with the rows delivered and the failure that ended them
// early, if any.
type tracedRows struct {
	columnRows
	ct    *connTrace
	ctx   context.Context
	ev    *TraceEvent
	err   error
	ended bool
}

// Next fills dest with the next row, counting it.
func (r *tracedRows) Next(dest []driver.Value) error {
	err := r.columnRows.Next(dest)
	switch {
	case err == nil:
		r.ev.Rows++
	case !errors.Is(err, io.EOF) && r.err == nil:
		r.err = err
	}
	return err
}

// Close closes the rows and ends the Query's event.
func (r *tracedRows) Close() error {
	err := r.columnRows.Close()
	if !r.ended {
		r.ended = true
		r.ct.end(r.ctx, r.ev, r.err)
	}
	return err
}
