package libsql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// A 429 ran nothing (sqld refuses before reading the request): the driver
// waits what Retry-After asks (or a short backoff) and sends it again, on
// the same stream inside a transaction, which goes on (PROTOCOL.md §9.3).
func TestFakeConnRetryAfter(t *testing.T) {
	t.Parallel()
	b1, b2 := fs.Baton(1), fs.Baton(2)
	busy := fs.TooManyRequests("Too many concurrent requests", "0")
	srv := fs.New(t, auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))).Reply(busy),
		auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))),
		begin(b1, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
		fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (2)"))).Reply(fs.TooManyRequests("Too many concurrent requests", "")),
		inTx(b1, b2, fs.SQL("INSERT INTO t VALUES (2)"), fs.Inserted(1, 2)),
		finish(b2, "COMMIT"))
	db := openDB(t, srv, "")
	wantOne(t, db)
	tx := mustBegin(t, db, nil)
	for _, q := range []string{"INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"} {
		mustExec(t, tx, q)
	}
	mustCommit(t, tx)
	srv.Verify()
}

// An Exec of several statements without arguments runs as a sequence once
// the server says the text holds several statements (nothing has run
// then); with arguments the error is returned.
func TestFakeConnMultiStatement(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		const script = "CREATE TABLE a (x); CREATE TABLE b (y)"
		many := fs.Fail("SQL_MANY_STATEMENTS", "SQL string contains more than one statement")
		t.Run("autocommit", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).Respond("", many, fs.CloseOK()),
				fs.Pipeline("", fs.Sequence(script), fs.Close()).Respond("", fs.SequenceOK(), fs.CloseOK()))
			db := openDB(t, srv, "")
			res, err := db.Exec(script)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 0 {
				t.Errorf("RowsAffected %d, %v", n, err)
			}
		})
		t.Run("sequence fails", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).Respond("", many, fs.CloseOK()),
				fs.Pipeline("", fs.Sequence(script), fs.Close()).Respond("", fs.Fail("SQLITE_UNKNOWN", "SQLite error: table a already exists"), fs.CloseOK()))
			db := openDB(t, srv, "")
			_, err := db.Exec(script)
			wantErr(t, err, nil, errs(libsql.ErrSyntax), "already exists")
		})
		t.Run("sequence refused", func(t *testing.T) {
			t.Parallel()
			httpOnly(t, tp, "the refusal is an HTTP status")
			srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).Respond("", many, fs.CloseOK()),
				fs.Pipeline("", fs.Sequence(script), fs.Close()).Reply(fs.HTTPError(403, "Authorization forbidden")))
			db := openDB(t, srv, "")
			_, err := db.Exec(script)
			wantErr(t, err, errs(libsql.ErrPermission), nil)
		})
		t.Run("with arguments", func(t *testing.T) {
			t.Parallel()
			const s = "INSERT INTO a VALUES (?); INSERT INTO b VALUES (2)"
			srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL(s, fs.Int(1))), fs.Close()).Respond("", many, fs.CloseOK()))
			db := openDB(t, srv, "")
			_, err := db.Exec(s, 1)
			wantErr(t, err, errs(libsql.ErrSyntax), nil, "more than one statement")
		})
		t.Run("first in a transaction", func(t *testing.T) {
			t.Parallel()
			b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
			srv := newFake(t, tp, fs.Pipeline("", beginBatch(fs.SQL(script))).Respond(b1, many),
				closeStream(b1),
				// A sequence cannot be guarded by BEGIN: BEGIN goes first.
				begin(b2, fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))),
				fs.Pipeline(b2, fs.Sequence(script)).Respond(b3, fs.SequenceOK()),
				finish(b3, "COMMIT"))
			db := openDB(t, srv, "")
			tx := mustBegin(t, db, nil)
			mustExec(t, tx, script)
			mustCommit(t, tx)
		})
		t.Run("BEGIN for a sequence fails", func(t *testing.T) {
			t.Parallel()
			httpOnly(t, tp, "the failure is an HTTP status")
			b1 := fs.Baton(1)
			srv := newFake(t, tp, fs.Pipeline("", beginBatch(fs.SQL(script))).Respond(b1, many),
				closeStream(b1),
				fs.Pipeline("", beginBatch(fs.SQL("SELECT 1"))).Reply(fs.HTTPError(503, "Replicator exited")))
			db := openDB(t, srv, "")
			tx := mustBegin(t, db, nil)
			_, err := tx.Exec(script)
			wantErr(t, err, errs(libsql.ErrTooManyRequests), nil, "Replicator exited")
			mustRollback(t, tx)
		})
		// The sequence's own request fails, and the transaction is lost.
		b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
		sequence := fs.Pipeline(b2, fs.Sequence(script))
		for _, tc := range []struct {
			name     string
			httpOnly string        // why the case runs over HTTP only ("": it does not)
			answer   []fs.Exchange // the sequence's answer, and what follows it
			has      string
		}{
			{"sequence request fails", "WebSocket streams do not expire",
				[]fs.Exchange{sequence.Reply(fs.StreamExpired())}, "STREAM_EXPIRED"},
			{"transaction lost in a sequence", "",
				[]fs.Exchange{sequence.Respond(b3, fs.Fail("TRANSACTION_TIMEOUT", "Transaction timed out")), closeStream(b3)}, "TRANSACTION_TIMEOUT"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				if tc.httpOnly != "" {
					httpOnly(t, tp, tc.httpOnly)
				}
				srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(0)),
					fs.Pipeline(b1, fs.Execute(fs.SQL(script))).Respond(b2, many))
				srv.Add(tc.answer...)
				secondFails(t, openDB(t, srv, ""), "DELETE FROM t", script, errs(libsql.ErrTxLost), tc.has)
			})
		}
	})
}

// Ping is one request, a lone close on a new stream.
func TestFakeConnPing(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, fs.Pipeline("", fs.Close()).Respond("", fs.CloseOK()),
		fs.Pipeline("", fs.Close()).Reply(fs.HTTPError(401, "Unauthorized: `Expected authorization header but none given`")))
	db := openDB(t, srv, "")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, db.Ping(), errs(libsql.ErrAuth), nil, "Expected authorization header")
}

// Timeouts: the DSN's timeout bounds each request, a context bounds the
// call; either way the request may have run.
func TestFakeConnTimeouts(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		for _, viaCtx := range []bool{false, true} {
			t.Run(fmt.Sprint("context=", viaCtx), func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL("SELECT 1")), fs.Close()).Reply(fs.Hang()))
				params, ctx := "timeout=150ms", bg
				if viaCtx {
					var cancel context.CancelFunc
					params = ""
					ctx, cancel = context.WithTimeout(bg, 150*time.Millisecond)
					defer cancel()
				}
				db := openDB(t, srv, params)
				start := time.Now()
				_, err := db.QueryContext(ctx, "SELECT 1")
				wantErr(t, err, errs(context.DeadlineExceeded), nil)
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("took %v", d)
				}
				var e *libsql.Error
				if errors.As(err, &e) && e.SafeToRetry() {
					t.Error("a timed-out request is SafeToRetry")
				}
			})
		}
	})
}

// Responses the driver cannot use: not JSON, or not one result per request.
func TestFakeConnBadResponses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply fs.Reply
		has   string
	}{
		{"not json", fs.JSON(200, `<html>`), "decode"},
		{"one result for two requests", fs.PipelineReply("", fs.ExecuteOK(fs.Empty())), "1 results for 2 requests"},
		{"wrong response type", fs.PipelineReply("", fs.CloseOK(), fs.CloseOK()), "answered execute with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL("SELECT 1")), fs.Close()).Reply(tt.reply))
			db := openDB(t, srv, "")
			_, err := db.Query("SELECT 1")
			wantErr(t, err, nil, nil, tt.has)
		})
	}
}

// The driver through database/sql/driver: legacy entry points, prepared
// statements, session checks, and a connection closed with a transaction
// open (which rolls it back).
func TestFakeConnDriverLevel(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		srv := newFake(t, tp, prepared("INSERT INTO t VALUES (?)", false, ""),
			auto(fs.SQL("INSERT INTO t VALUES (?)", fs.Int(1)), fs.Inserted(1, 1)),
			auto(fs.SQL("INSERT INTO t VALUES (?)", fs.Int(2)), fs.Inserted(1, 2)),
			prepared("SELECT a FROM t", true),
			auto(fs.SQL("SELECT a FROM t"), fs.Query(fs.Cols("a"), fs.Vals(fs.Int(1)))),
			begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(2)),
			finish(b1, "ROLLBACK"),
		)
		d := &libsql.Driver{}
		c, err := d.Open(srv.URL + "?codec=gojson&keepStreams=0")
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Prepare("INSERT INTO t VALUES (?)")
		if err != nil {
			t.Fatal(err)
		}
		if st.NumInput() != 1 {
			t.Errorf("NumInput %d, want the 1 parameter describe reported", st.NumInput())
		}
		nv := &driver.NamedValue{Ordinal: 1, Value: int32(1)}
		if err := st.(driver.NamedValueChecker).CheckNamedValue(nv); err != nil || nv.Value != int64(1) {
			t.Errorf("CheckNamedValue: %v, %#v", err, nv.Value)
		}
		for _, v := range []int64{1, 2} {
			//lint:ignore SA1019 the legacy entry point is part of the driver
			if _, err := st.Exec([]driver.Value{v}); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.(driver.StmtExecContext).ExecContext(bg, nil); err == nil {
			t.Error("a closed statement ran")
		}
		if _, err := st.(driver.StmtQueryContext).QueryContext(bg, nil); err == nil {
			t.Error("a closed statement ran")
		}
		q, _ := c.Prepare("SELECT a FROM t")
		//lint:ignore SA1019 the legacy entry point is part of the driver
		rows, err := q.Query(nil)
		if err != nil {
			t.Fatal(err)
		}
		dest := make([]driver.Value, 1)
		if rows.Next(dest) != nil || dest[0] != int64(1) || rows.Next(dest) != io.EOF {
			t.Errorf("rows: %v", dest)
		}
		rows.Close()
		if !c.(driver.Validator).IsValid() || c.(driver.SessionResetter).ResetSession(bg) != nil {
			t.Error("an idle connection is not valid")
		}
		//lint:ignore SA1019 the legacy entry point is part of the driver
		tx, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.(driver.ConnBeginTx).BeginTx(bg, driver.TxOptions{}); err == nil {
			t.Error("a second transaction began on one connection")
		}
		if _, err := c.(driver.ExecerContext).ExecContext(bg, "DELETE FROM t", nil); err != nil {
			t.Fatal(err)
		}
		if c.(driver.Validator).IsValid() || !errors.Is(c.(driver.SessionResetter).ResetSession(bg), driver.ErrBadConn) {
			t.Error("a connection with a transaction open may go back to the pool")
		}
		if err := c.Close(); err != nil { // rolls the transaction back
			t.Fatal(err)
		}
		if err := tx.Commit(); !errors.Is(err, libsql.ErrTxDone) {
			t.Errorf("Commit after the connection closed: %v", err)
		}
	})
}

// Prepare checks the statement with describe, once per text per
// connection: SQL that cannot run fails at Prepare with the server's
// error (not kept: it is asked again); NumInput counts positional
// parameters, -1 with named ones; a script is not described; inside a
// transaction describe runs on a stream of its own.
func TestFakeConnPrepare(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	const syntax = `SQLite input error: near "invalid": syntax error`
	bad := fs.Pipeline("", fs.Describe("invalid sql"), fs.Close()).Respond("", fs.Fail("SQL_INPUT_ERROR", syntax), fs.CloseOK())
	srv := fs.New(t, bad,
		bad,
		prepared("SELECT * FROM t WHERE a = ? AND b = ?3", true, "", "?3"),
		prepared("UPDATE t SET a = :a", false, ":a"),
		begin(b1, fs.SQL("UPDATE t SET a = 1"), fs.Updated(1)),
		prepared("DELETE FROM t WHERE a = ?", false, ""),
		inTx(b1, b1, fs.SQL("DELETE FROM t WHERE a = ?", fs.Int(1)), fs.Updated(1)),
		finish(b1, "COMMIT"),
	)
	db := openDB(t, srv, "")
	c := pinned(t, db)
	for range 2 {
		_, err := c.PrepareContext(bg, "invalid sql")
		wantErr(t, err, errs(libsql.ErrSyntax), nil, syntax)
		if e := asError(t, err); e.Message != syntax || e.Code != "SQL_INPUT_ERROR" {
			t.Errorf("fields %+v: want the server's message and code", e)
		}
	}
	for _, tt := range []struct {
		sql  string
		want int
	}{
		{"SELECT * FROM t WHERE a = ? AND b = ?3", 2},
		{"SELECT * FROM t WHERE a = ? AND b = ?3", 2}, // cached: no second describe
		{"UPDATE t SET a = :a", -1},
		{"CREATE TABLE x (a); CREATE TABLE y (b)", -1}, // a script: not described
	} {
		var n int
		err := c.Raw(func(dc any) error {
			st, err := dc.(driver.ConnPrepareContext).PrepareContext(bg, tt.sql)
			if err != nil {
				return err
			}
			n = st.NumInput()
			return st.Close()
		})
		if err != nil || n != tt.want {
			t.Errorf("Prepare(%q): NumInput %d, %v; want %d", tt.sql, n, err, tt.want)
		}
	}
	tx := mustBegin(t, c, nil)
	mustExec(t, tx, "UPDATE t SET a = 1")
	st, err := tx.Prepare("DELETE FROM t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Exec(1); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
}
