package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
)

var (
	_ driver.Stmt              = (*stmt)(nil)
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

// stmt is a prepared statement: the SQL text and its parameters, scanned
// once, checked with the server at Prepare. Executing it costs the same
// single request as an unprepared one.
type stmt struct {
	c        *conn
	sql      string
	params   sqlText
	numInput int // from describe; -1: database/sql does not count
	closed   bool
}

// Close releases the statement.
func (s *stmt) Close() error {
	s.closed = true
	return nil
}

// NumInput returns the number of parameters the server reported, if all
// are positional (? or ?NNN), so that database/sql checks the count of
// arguments; -1 for a statement with named parameters (named arguments it
// does not use are allowed, so they must not be counted) or a script.
func (s *stmt) NumInput() int { return s.numInput }

// Exec runs the statement; use ExecContext.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), valuesToNamed(args))
}

// Query runs the statement; use QueryContext.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), valuesToNamed(args))
}

var errStmtClosed = errors.New("libsql: statement is closed")

// ExecContext runs the statement without returning rows.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if s.closed {
		return nil, errStmtClosed
	}
	return s.c.exec(ctx, s.sql, s.params, args)
}

// QueryContext runs the statement and returns its rows.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if s.closed {
		return nil, errStmtClosed
	}
	return s.c.query(ctx, s.sql, s.params, args)
}

// CheckNamedValue converts and checks one argument.
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	return checkNamedValue(nv, s.c.infinities)
}

func valuesToNamed(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}
