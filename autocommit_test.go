package libsql_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// Statements outside transactions (autocommit.go), against the scripted
// fake: kept streams over HTTP (the default; the other fake tests turn it
// off), on which a connection's statements go one after another, each with
// get_autocommit, so that a stream left in a transaction is never kept;
// and the retries of a statement that failed with SQLITE_BUSY.

// kept is an autocommit statement on the stream baton (new: ""), which the
// server keeps as next.
func kept(baton, next string, st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline(baton, fs.Execute(st), fs.GetAutocommit()).Respond(next, fs.ExecuteOK(res), fs.GetAutocommitOK(true))
}

// openKept opens a DB of one connection on the fake with kept streams.
func openKept(t *testing.T, srv *fs.Server, params string) *sql.DB {
	t.Helper()
	db := openURL(t, srv.URL, params+"&keepStreams=1")
	db.SetMaxOpenConns(1)
	return db
}

// closeAndVerify closes db, which closes its kept stream, and checks that
// the fake's script was used up.
func closeAndVerify(t *testing.T, db *sql.DB, srv *fs.Server) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Verify()
}

func queryInt(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestFakeKeptStream: statements go on the stream the first one opened, a
// transaction begins on it, and closing the connection closes it.
func TestFakeKeptStream(t *testing.T) {
	t.Parallel()
	b1, b2, b3, b4 := fs.Baton(1), fs.Baton(2), fs.Baton(3), fs.Baton(4)
	one := fs.Query(fs.Cols("n"), fs.Vals(fs.Int(1)))
	srv := fs.New(t,
		kept("", b1, fs.SQL("SELECT 1"), one),
		kept(b1, b2, fs.SQL("SELECT 2"), one),
		fs.Pipeline(b2, beginBatch(fs.SQL("INSERT INTO t VALUES (1)"))).
			Respond(b3, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()))),
		fs.Pipeline(b3, fs.Execute(fs.SQL("COMMIT")), fs.GetAutocommit()).
			Respond(b4, fs.ExecuteOK(fs.Empty()), fs.GetAutocommitOK(true)),
		closeStream(b4),
	)
	db := openKept(t, srv, "")
	queryInt(t, db, "SELECT 1")
	queryInt(t, db, "SELECT 2")
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, "INSERT INTO t VALUES (1)")
	mustCommit(t, tx)
	closeAndVerify(t, db, srv)
}

// TestFakeKeptStreamGone: a statement on a kept stream that the server no
// longer has (it expired, the server restarted, or a PROTOCOL.md server
// answers 404) was refused before it ran: it goes again on a new stream,
// with the connection's settings replayed first, and succeeds.
func TestFakeKeptStreamGone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		refusal fs.Reply
	}{
		{"expired", fs.StreamExpired()},
		{"restarted", fs.ProtocolError("Received an invalid baton")},
		{"404", fs.NotFound()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b1, b2 := fs.Baton(1), fs.Baton(2)
			pragma := fs.Execute(fs.SQL("PRAGMA foreign_keys(1)"))
			one := fs.Query(fs.Cols("n"), fs.Vals(fs.Int(1)))
			srv := fs.New(t,
				fs.Pipeline("", pragma, fs.Execute(fs.SQL("SELECT 1")), fs.GetAutocommit()).
					Respond(b1, fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(one), fs.GetAutocommitOK(true)),
				fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (2)")), fs.GetAutocommit()).Reply(tt.refusal),
				fs.Pipeline("", pragma, fs.Execute(fs.SQL("INSERT INTO t VALUES (2)")), fs.GetAutocommit()).
					Respond(b2, fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(fs.Empty()), fs.GetAutocommitOK(true)),
				closeStream(b2),
			)
			db := openKept(t, srv, "_pragma=foreign_keys(1)")
			queryInt(t, db, "SELECT 1")
			mustExec(t, db, "INSERT INTO t VALUES (2)")
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			srv.Verify()
		})
	}
}

// TestFakeKeptStreamInTransaction: a stream that holds a transaction is
// never kept. A failed COMMIT leaves one open: the driver closes the
// stream (rolling it back) and the next statement opens a new one.
func TestFakeKeptStreamInTransaction(t *testing.T) {
	t.Parallel()
	b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
	one := fs.Query(fs.Cols("n"), fs.Vals(fs.Int(1)))
	srv := fs.New(t,
		fs.Pipeline("", beginBatch(fs.SQL("INSERT INTO t VALUES (1)"))).
			Respond(b1, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()))),
		fs.Pipeline(b1, fs.Execute(fs.SQL("COMMIT")), fs.GetAutocommit()).
			Respond(b2, fs.Fail("SQLITE_BUSY", "database is locked"), fs.GetAutocommitOK(false)),
		closeStream(b2),
		kept("", b3, fs.SQL("SELECT 1"), one),
		closeStream(b3),
	)
	db := openKept(t, srv, "")
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, "INSERT INTO t VALUES (1)")
	if err := tx.Commit(); err == nil {
		t.Fatal("the failed COMMIT succeeded")
	}
	queryInt(t, db, "SELECT 1")
	closeAndVerify(t, db, srv)
}

// TestFakeKeptStreamCursor: a result over the response limit streams
// through a cursor on the kept stream, whose state the statement may need;
// the cursor takes the stream with it, so that a statement on the same
// connection while its rows are read goes on a new stream instead of
// sending a second request on a busy one (PROTOCOL.md §4.4).
func TestFakeKeptStreamCursor(t *testing.T) {
	t.Parallel()
	b1, b2, c1 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
	body := []fs.Line{fs.StepBegin(0, bigCols...), bigRow(1, "ada"), bigRow(2, "bob"), fs.StepEnd(), fs.ReplicationIndex(9)}
	srv := fs.New(t,
		fs.Pipeline("", fs.Execute(fs.SQL(bigSQL)), fs.GetAutocommit()).
			Respond(b1, fs.Fail("RESPONSE_TOO_LARGE", tooLarge), fs.GetAutocommitOK(true)),
		describe(bigSQL, true),
		fs.Cursor(b1, fs.Step(fs.SQL(bigSQL))).Stream(c1, body...),
		kept("", b2, fs.SQL("SELECT 1"), fs.Query(fs.Cols("n"), fs.Vals(fs.Int(1)))),
		closeStream(c1),
		closeStream(b2),
	)
	db := openKept(t, srv, "readYourWrites=0")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, bigSQL)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("SELECT 1 while the cursor reads: %d, %v", n, err)
	}
	ids := 0
	for rows.Next() {
		ids++
	}
	if err := rows.Close(); err != nil || ids != 2 {
		t.Fatalf("%d rows, %v", ids, err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	closeAndVerify(t, db, srv)
}

// TestFakeKeptStreamServerFailure: a server failure on a kept stream (sqld
// replica whose primary died: a stream that forwarded writes fails with a
// 500 where a new stream would not) sends a statement that only reads
// again on a new stream; a write, which may have run, is not sent again.
func TestFakeKeptStreamServerFailure(t *testing.T) {
	t.Parallel()
	broken := fs.HTTPError(500, "Connection with primary broken")
	one := fs.Query(fs.Cols("n"), fs.Vals(fs.Int(1)))
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		b1, b2 := fs.Baton(1), fs.Baton(2)
		srv := fs.New(t,
			kept("", b1, fs.SQL("SELECT 1"), one),
			fs.Pipeline(b1, fs.Execute(fs.SQL("SELECT 2")), fs.GetAutocommit()).Reply(broken),
			kept("", b2, fs.SQL("SELECT 2"), one),
			closeStream(b2),
		)
		db := openKept(t, srv, "")
		queryInt(t, db, "SELECT 1")
		queryInt(t, db, "SELECT 2")
		closeAndVerify(t, db, srv)
	})
	t.Run("write", func(t *testing.T) {
		t.Parallel()
		b1 := fs.Baton(1)
		srv := fs.New(t,
			kept("", b1, fs.SQL("SELECT 1"), one),
			fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (1)")), fs.GetAutocommit()).Reply(broken),
		)
		db := openKept(t, srv, "")
		queryInt(t, db, "SELECT 1")
		_, err := db.Exec("INSERT INTO t VALUES (1)")
		if e := asError(t, err); e.SafeToRetry() {
			t.Fatalf("a write that may have run is safe to retry: %v", err)
		}
		closeAndVerify(t, db, srv)
	})
}

// An autocommit statement that failed with SQLITE_BUSY did not apply: it
// is run again until it gets through, within busyTimeout. Never inside a
// transaction, never a script, never with busyTimeout=0.
func TestFakeBusyRetry(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	busy := fs.Pipeline("", fs.Execute(fs.SQL(ins)), fs.Close()).
		Respond("", fs.Fail("SQLITE_BUSY", "SQLite error: database is locked"), fs.CloseOK())
	t.Run("retried", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, busy, busy, auto(fs.SQL(ins), fs.Inserted(1, 1)))
		db := openDB(t, srv, "")
		res, err := db.Exec(ins)
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := res.LastInsertId(); id != 1 {
			t.Fatalf("id %d", id)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, busy)
		db := openDB(t, srv, "busyTimeout=0")
		_, err := db.Exec(ins)
		wantErr(t, err, errs(libsql.ErrBusy), nil, "database is locked")
	})
	t.Run("in a transaction", func(t *testing.T) {
		t.Parallel()
		b1 := fs.Baton(1)
		srv := fs.New(t, fs.Pipeline("", beginBatch(fs.SQL(ins))).Respond(b1, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepFailed("SQLITE_BUSY", "SQLite error: database is locked"))),
			finish(b1, "ROLLBACK"))
		db := openDB(t, srv, "")
		tx := mustBegin(t, db, nil)
		_, err := tx.Exec(ins)
		wantErr(t, err, errs(libsql.ErrBusy), errs(libsql.ErrTxLost), "database is locked")
		mustRollback(t, tx)
	})
	t.Run("script", func(t *testing.T) {
		t.Parallel()
		const script = "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"
		srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).
			Respond("", fs.Fail("SQL_MANY_STATEMENTS", "SQL string contains more than one statement"), fs.CloseOK()),
			fs.Pipeline("", fs.Sequence(script), fs.Close()).
				Respond("", fs.Fail("SQLITE_BUSY", "SQLite error: database is locked"), fs.CloseOK()))
		db := openDB(t, srv, "")
		_, err := db.Exec(script)
		wantErr(t, err, errs(libsql.ErrBusy), nil, "database is locked")
	})
}
