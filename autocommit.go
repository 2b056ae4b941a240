package libsql

import (
	"context"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/session"
)

// autocommit runs a connection's statements outside transactions: each
// operation is a unit of work of its own on the session, so over HTTP
// nothing stays open on the server between statements.
type autocommit struct {
	s *session.Conn
}

func (a *autocommit) execute(ctx context.Context, st *codec.Stmt) (*session.Result, error) {
	return a.s.Execute(ctx, st)
}

func (a *autocommit) sequence(ctx context.Context, script string) error {
	return a.s.Sequence(ctx, script)
}

func (a *autocommit) describe(ctx context.Context, sql string) (codec.DescribeResult, error) {
	return a.s.Describe(ctx, sql)
}

// cursor streams the statement's rows on a stream that ends with them.
func (a *autocommit) cursor(ctx context.Context, st *codec.Stmt) (*rows, error) {
	cur, err := a.s.OpenCursor(ctx, []codec.BatchStep{{Stmt: *st}})
	if err != nil {
		return nil, err
	}
	return newCursorRows(cur, stmtError)
}

// stmtError converts a statement error outside a transaction.
func stmtError(he *codec.Error) error { return session.StmtError(he) }
