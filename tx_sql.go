package libsql

import (
	"context"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/sqlscan"
)

// Transactions begun with SQL. database/sql cannot express SQLite's BEGIN
// IMMEDIATE, so applications pin a *sql.Conn and run
//
//	conn.ExecContext(ctx, "BEGIN IMMEDIATE")
//	conn.ExecContext(ctx, "INSERT ...")
//	conn.ExecContext(ctx, "COMMIT")
//
// For that to work the server stream must outlive each statement while the
// transaction is open: over HTTP, where an autocommit statement closes its
// stream, and over WebSocket, where a unit of work that may leave a
// transaction open is followed by a rollback. The driver follows the
// server's autocommit state rather than the SQL text: a statement that may
// begin a transaction (BEGIN, SAVEPOINT, a script) goes out on a held
// stream with get_autocommit after it in the same request, and while the
// answer says a transaction is open, every statement does the same, until
// one says it is over (COMMIT, ROLLBACK, or a failure SQLite rolled back).
// The stream is then released; the next statement closes it.
//
// A connection that goes back to the pool with such a transaction open is
// not reused (conn.IsValid): closing it rolls the transaction back, so that
// it never leaks into another goroutine's statements, nor keeps SQLite's
// write lock.

// sqlTx is the state of a transaction begun with SQL on one connection.
type sqlTx struct {
	open bool
	// depth counts the savepoints and BEGIN of a transaction on a Hrana 2
	// server, which has no get_autocommit: there the SQL text is all there
	// is to go by.
	depth int
}

// begin runs a statement that may begin a transaction, watched.
func (t *sqlTx) begin(ctx context.Context, s sessionConn, st *codec.Stmt) (*session.Result, error) {
	v3, err := t.watchable(ctx, s)
	if err != nil {
		return nil, err
	}
	s.Hold()
	if !v3 {
		res, err := s.Execute(ctx, st)
		t.afterText(s, sqlscan.TxBegin, err)
		return res, err
	}
	res, autocommit, err := s.ExecuteWatched(ctx, st)
	return res, t.after(s, autocommit, err, false)
}

// beginScript runs a script, watched if some statement of it may begin a
// transaction.
// mayBegin is the script's sqlscan.Statement.BeginsTx.
func (t *sqlTx) beginScript(ctx context.Context, s sessionConn, script string, mayBegin bool) error {
	if !mayBegin {
		return s.Sequence(ctx, script)
	}
	v3, err := t.watchable(ctx, s)
	if err != nil {
		return err
	}
	if !v3 {
		// Without get_autocommit a script's transaction cannot be told:
		// it ends with the script, as before.
		return s.Sequence(ctx, script)
	}
	s.Hold()
	autocommit, err := s.SequenceWatched(ctx, script)
	return t.after(s, autocommit, err, false)
}

// execute runs a statement inside the transaction. depth is only counted
// on a Hrana 2 server.
// kind is the statement's transaction control (sqlscan.TxControl).
func (t *sqlTx) execute(ctx context.Context, s sessionConn, st *codec.Stmt, kind sqlscan.TxKind) (*session.Result, error) {
	if t.depth > 0 {
		res, err := s.Execute(ctx, st)
		t.afterText(s, kind, err)
		return res, err
	}
	res, autocommit, err := s.ExecuteWatched(ctx, st)
	return res, t.after(s, autocommit, err, true)
}

// sequence runs a script inside the transaction.
func (t *sqlTx) sequence(ctx context.Context, s sessionConn, script string) error {
	if t.depth > 0 {
		err := s.Sequence(ctx, script)
		t.afterText(s, sqlscan.NotTx, err) // a script is no one statement of transaction control
		return err
	}
	autocommit, err := s.SequenceWatched(ctx, script)
	return t.after(s, autocommit, err, true)
}

// watchable reports whether the server tells its autocommit state
// (Hrana 3).
func (t *sqlTx) watchable(ctx context.Context, s sessionConn) (bool, error) {
	v, err := s.Version(ctx)
	if err != nil {
		return false, fromSession(err)
	}
	return v >= 3, nil
}

// after follows a watched statement's answer: a transaction is open or not,
// as the server said. A failure of the exchange itself (not of the
// statement) leaves the state unknown: the stream is abandoned, which rolls
// back whatever it held, and inside a transaction the error says it is
// lost.
func (t *sqlTx) after(s sessionConn, autocommit bool, err error, inTx bool) error {
	if err != nil && !isStatementError(err) {
		t.abandon(s)
		if inTx {
			return lost(err)
		}
		return err
	}
	t.open = !autocommit
	if !t.open {
		s.Linger()
	}
	return err
}

// afterText follows a statement on a Hrana 2 server by its SQL text's
// transaction control, kind.
func (t *sqlTx) afterText(s sessionConn, kind sqlscan.TxKind, err error) {
	if err != nil && !isStatementError(err) {
		t.abandon(s)
		return
	}
	if err == nil {
		switch kind {
		case sqlscan.TxBegin, sqlscan.TxSavepoint:
			t.depth++
		case sqlscan.TxCommit, sqlscan.TxRollback:
			t.depth = 0
		case sqlscan.TxRelease:
			t.depth--
		}
	}
	t.open = t.depth > 0
	if !t.open {
		t.depth = 0
		s.Linger()
	}
}

// abandon ends the transaction by abandoning its stream, which rolls it
// back.
func (t *sqlTx) abandon(s sessionConn) {
	*t = sqlTx{}
	s.Release()
	s.Reset()
}

// batch runs a Batch inside a transaction begun with SQL, in a savepoint.
// It begins nothing (the transaction is open on the server), and a
// failure follows the rule of after: the exchange's own failure abandons
// the stream, which rolls the transaction back.
func (t *sqlTx) batch(ctx context.Context, s sessionConn, st []codec.Stmt, guard bool) ([]BatchResult, error) {
	p := plan(st, 0, true, "", guard)
	res, err := s.Batch(ctx, p.steps)
	if err != nil {
		if !isStatementError(err) {
			t.abandon(s)
			return nil, lost(err)
		}
		return nil, err
	}
	defer res.ReleaseShared()
	return p.results(res.Batch(), st)
}
