package libsql_test

// Transactions begun with SQL on a pinned *sql.Conn (BEGIN IMMEDIATE ...
// COMMIT), over HTTP against the scripted fake: what goes on the wire, and
// what the application sees.

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// BEGIN IMMEDIATE keeps its stream, each statement inside runs on it with
// get_autocommit, and once COMMIT says the transaction is over the next
// statement closes the stream.
func TestFakeSQLTxCommit(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
		srv := newFake(t, tp, watched("", b1, fs.SQL("BEGIN IMMEDIATE"), fs.Empty(), false),
			watched(b1, b2, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1), false),
			watched(b2, b3, fs.SQL("COMMIT"), fs.Empty(), true),
			fs.Pipeline(b3, fs.Execute(fs.SQL("SELECT 1")), fs.Close()).
				Respond("", fs.ExecuteOK(fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))), fs.CloseOK()))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		mustExec(t, c, "BEGIN IMMEDIATE", "INSERT INTO t VALUES (1)", "COMMIT")
		var n int
		if err := c.QueryRowContext(bg, "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("after COMMIT: %d, %v", n, err)
		}
	})
}

// A comment before BEGIN does not hide it, and a statement's failure
// inside the transaction keeps it open, as SQLite does.
func TestFakeSQLTxCommentAndFailure(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
		srv := newFake(t, tp, watched("", b1, fs.SQL("/* note */ begin"), fs.Empty(), false),
			fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (1)")), fs.GetAutocommit()).
				Respond(b2, fs.Fail("SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.x"), fs.GetAutocommitOK(false)),
			watched(b2, b3, fs.SQL("ROLLBACK"), fs.Empty(), true),
			closeStream(b3))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		mustExec(t, c, "/* note */ begin")
		_, err := c.ExecContext(bg, "INSERT INTO t VALUES (1)")
		wantErr(t, err, errs(libsql.ErrUniqueViolation), errs(libsql.ErrTxLost))
		mustExec(t, c, "ROLLBACK")
		// The lingering stream is closed when the connection is.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// A connection given back with its transaction open is not reused: closing
// it rolls the transaction back at once, and the next user gets a fresh
// connection.
func TestFakeSQLTxLeftOpen(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		srv := newFake(t, tp, watched("", b1, fs.SQL("BEGIN"), fs.Empty(), false),
			closeStream(b1),
			auto(fs.SQL("INSERT INTO t VALUES (2)"), fs.Inserted(1, 2)))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		mustExec(t, c, "BEGIN")
		if _, err := c.BeginTx(bg, nil); err == nil {
			t.Error("BeginTx inside a transaction begun with SQL succeeded")
		}
		// database/sql closes a connection that is not valid as it takes it
		// back: the close has gone out when Close returns.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "INSERT INTO t VALUES (2)")
		if s := db.Stats(); s.OpenConnections != 1 {
			t.Errorf("%d open connections, want the fresh one", s.OpenConnections)
		}
	})
}

// An SQL-level transaction whose stream expires is lost, and says so; the
// connection then works again on a new stream.
// HTTP only: WebSocket streams do not expire.
func TestFakeSQLTxStreamExpired(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	srv := fs.New(t, watched("", b1, fs.SQL("BEGIN"), fs.Empty(), false),
		fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (1)")), fs.GetAutocommit()).Reply(fs.StreamExpired()),
		auto(fs.SQL("SELECT 2"), fs.Query(fs.Cols("2"), fs.Vals(fs.Int(2)))))
	db := openDB(t, srv, "")
	c := pinned(t, db)
	mustExec(t, c, "BEGIN")
	_, err := c.ExecContext(bg, "INSERT INTO t VALUES (1)")
	wantErr(t, err, errs(libsql.ErrTxLost), nil, "expired")
	var n int
	if err := c.QueryRowContext(bg, "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the loss: %d, %v", n, err)
	}

}

// A lingering stream (kept to learn that COMMIT ended the transaction) that
// expires before the next statement costs that statement nothing: the
// server refused it unrun, so it goes again on a new stream.
// HTTP only: WebSocket streams do not expire.
func TestFakeSQLTxLingeringExpired(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, lingeringExpired()...)
	db := openDB(t, srv, "")
	c := pinned(t, db)
	mustExec(t, c, lingeringExpiredSQL...)
}

// A script that begins a transaction it does not end keeps it open; one
// that begins none is sent as before.
func TestFakeSQLTxScript(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		const script = "BEGIN; INSERT INTO t VALUES (1)"
		b1, b2 := fs.Baton(1), fs.Baton(2)
		srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).
			Respond("", fs.Fail("SQL_MANY_STATEMENTS", "SQL string contains more than one statement"), fs.CloseOK()),
			fs.Pipeline("", fs.Sequence(script), fs.GetAutocommit()).Respond(b1, fs.SequenceOK(), fs.GetAutocommitOK(false)),
			watched(b1, b2, fs.SQL("COMMIT"), fs.Empty(), true),
			closeStream(b2))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		mustExec(t, c, script)
		mustExec(t, c, "COMMIT")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) {
			t.Fatal(err)
		}
	})
}
