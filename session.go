package libsql

import (
	"context"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

// sessionConn is a connection's session with its errors in the driver's
// terms: the operations of session.Conn, each of whose errors comes back as
// an *Error (fromSession), so that the rest of the package handles only
// those. The other methods of session.Conn pass through.
type sessionConn struct{ *session.Conn }

func (s sessionConn) Execute(ctx context.Context, st *codec.Stmt) (*session.Result, error) {
	res, err := s.Conn.Execute(ctx, st)
	return res, fromSession(err)
}

func (s sessionConn) ExecuteRead(ctx context.Context, st *codec.Stmt) (*session.Result, error) {
	res, err := s.Conn.ExecuteRead(ctx, st)
	return res, fromSession(err)
}

func (s sessionConn) ExecuteWatched(ctx context.Context, st *codec.Stmt) (*session.Result, bool, error) {
	res, autocommit, err := s.Conn.ExecuteWatched(ctx, st)
	return res, autocommit, fromSession(err)
}

func (s sessionConn) SequenceWatched(ctx context.Context, sql string) (bool, error) {
	autocommit, err := s.Conn.SequenceWatched(ctx, sql)
	return autocommit, fromSession(err)
}

func (s sessionConn) Batch(ctx context.Context, steps []codec.BatchStep) (*session.Result, error) {
	res, err := s.Conn.Batch(ctx, steps)
	return res, fromSession(err)
}

func (s sessionConn) Sequence(ctx context.Context, sql string) error {
	return fromSession(s.Conn.Sequence(ctx, sql))
}

func (s sessionConn) Describe(ctx context.Context, sql string) (codec.DescribeResult, error) {
	d, err := s.Conn.Describe(ctx, sql)
	return d, fromSession(err)
}

func (s sessionConn) GetAutocommit(ctx context.Context) (bool, error) {
	auto, err := s.Conn.GetAutocommit(ctx)
	return auto, fromSession(err)
}

func (s sessionConn) Ping(ctx context.Context) error { return fromSession(s.Conn.Ping(ctx)) }

func (s sessionConn) OpenCursor(ctx context.Context, steps []codec.BatchStep) (transport.Cursor, error) {
	cur, err := s.Conn.OpenCursor(ctx, steps)
	if err != nil {
		return nil, fromSession(err)
	}
	return cursorErrors{cur}, nil
}

// cursorErrors is a cursor whose errors are *Errors.
type cursorErrors struct{ transport.Cursor }

func (c cursorErrors) Next(e *codec.CursorEntry) error { return fromSession(c.Cursor.Next(e)) }
func (c cursorErrors) Close() error                    { return fromSession(c.Cursor.Close()) }
