package libsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// A transaction of k statements costs k+1 requests: BEGIN rides with the
// first statement, COMMIT or ROLLBACK with the stream's close, and each
// request carries the baton the previous one returned. An empty
// transaction sends nothing at all.
func TestFakeTxRequestCounts(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		for _, codec := range []string{"direct", "gojson"} {
			for _, end := range []string{"COMMIT", "ROLLBACK"} {
				for k := 0; k <= 4; k++ {
					t.Run(fmt.Sprintf("%s/%s/%d", codec, end, k), func(t *testing.T) {
						t.Parallel()
						srv := newFake(t, tp)
						if k > 0 {
						}
						baton := ""
						for i := 1; i <= k; i++ {
							st := fs.SQL("INSERT INTO t VALUES (?)", fs.Int(int64(i)))
							next := fs.Baton(i)
							if i == 1 {
								srv.Add(begin(next, st, fs.Inserted(1, int64(i*10))))
							} else {
								srv.Add(inTx(baton, next, st, fs.Inserted(1, int64(i*10))))
							}
							baton = next
						}
						if k > 0 {
							srv.Add(finish(baton, end))
						}
						db := openDB(t, srv, "codec="+codec)
						tx := mustBegin(t, db, nil)
						for i := 1; i <= k; i++ {
							res, err := tx.Exec("INSERT INTO t VALUES (?)", i)
							if err != nil {
								t.Fatalf("statement %d: %v", i, err)
							}
							if id, _ := res.LastInsertId(); id != int64(i*10) {
								t.Errorf("statement %d: LastInsertId = %d", i, id)
							}
							if n, _ := res.RowsAffected(); n != 1 {
								t.Errorf("statement %d: RowsAffected = %d", i, n)
							}
						}
						var err error
						if end == "COMMIT" {
							err = tx.Commit()
						} else {
							err = tx.Rollback()
						}
						if err != nil {
							t.Fatalf("%s: %v", end, err)
						}
						want := k + 1
						if k == 0 {
							want = 0
						}
						if got := roundTrips(srv); got != want {
							t.Errorf("%d round trips, want %d", got, want)
						}
						if k == 0 && srv.Count() != 0 {
							t.Errorf("an empty transaction sent %d requests", srv.Count())
						}
					})
				}
			}
		}
	})
}

// Queries and prepared statements in a transaction follow the same path.
func TestFakeTxQueryAndPrepared(t *testing.T) {
	t.Parallel()
	forTransports(t, testFakeTxQueryAndPrepared)
}

func testFakeTxQueryAndPrepared(t *testing.T, tp string) {
	b1, b2, b3, b4 := fs.Baton(1), fs.Baton(2), fs.Baton(3), fs.Baton(4)
	cols := []fs.Col{{Name: "id", Decltype: "INTEGER"}, {Name: "name", Decltype: "TEXT"}}
	srv := newFake(t, tp,
		begin(b1, fs.SQL("SELECT id, name FROM u WHERE id > ?", fs.Int(0)),
			fs.Query(cols, fs.Vals(fs.Int(1), fs.Text("ada")), fs.Vals(fs.Int(2), fs.Text("bob")))),
		preparedInTx(tp, b1, "UPDATE u SET name = :n WHERE id = :id", false, ":n", ":id"),
		inTx(b1, b2, fs.SQL("UPDATE u SET name = :n WHERE id = :id").Named("n", fs.Text("cy")).Named("id", fs.Int(2)), fs.Updated(1)),
		inTx(b2, b3, fs.SQL("UPDATE u SET name = :n WHERE id = :id").Named("n", fs.Text("di")).Named("id", fs.Int(1)), fs.Updated(1)),
		inTx(b3, b4, fs.SQL("SELECT count(*) FROM u"), fs.Query(fs.Cols("count(*)"), fs.Vals(fs.Int(2)))),
		finish(b4, "COMMIT"),
	)
	db := openDB(t, srv, "")
	tx := mustBegin(t, db, nil)
	rows, err := tx.Query("SELECT id, name FROM u WHERE id > ?", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", id, name))
	}
	if err := rows.Err(); err != nil || strings.Join(got, ",") != "1 ada,2 bob" {
		t.Fatalf("rows %q, %v", got, err)
	}
	rows.Close()
	st, err := tx.Prepare("UPDATE u SET name = :n WHERE id = :id")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		n  string
		id int
	}{{"cy", 2}, {"di", 1}} {
		if _, err := st.Exec(sql.Named("n", a.n), sql.Named("id", a.id)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM u").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	mustCommit(t, tx)
}

// A first statement the server refuses as a whole (sqld compiles the whole
// batch first) means BEGIN did not run either: the statement's error is
// returned, the stream is closed, and the transaction is still usable; its
// next statement begins it on a new stream.
func TestFakeTxRefusedBeforeBegin(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
		srv := newFake(t, tp,
			fs.Pipeline("", beginBatch(fs.SQL("INSRT INTO t VALUES (1)"))).
				Respond(b1, fs.Fail("SQL_PARSE_ERROR", "SQL string could not be parsed: syntax error around L1:1: `INSRT`")),
			closeStream(b1),
			begin(b2, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
			inTx(b2, b3, fs.SQL("INSERT INTO t VALUES (2)"), fs.Inserted(1, 2)),
			finish(b3, "COMMIT"),
		)
		db := openDB(t, srv, "")
		tx := mustBegin(t, db, nil)
		_, err := tx.Exec("INSRT INTO t VALUES (1)")
		wantErr(t, err, errs(libsql.ErrSyntax), errs(libsql.ErrTxLost), "INSRT", "SQL_PARSE_ERROR")
		if e := asError(t, err); e.Code != "SQL_PARSE_ERROR" || e.HTTPStatus != 0 {
			t.Errorf("error %+v", e)
		}
		for i := 1; i <= 2; i++ {
			if _, err := tx.Exec(fmt.Sprintf("INSERT INTO t VALUES (%d)", i)); err != nil {
				t.Fatal(err)
			}
		}
		mustCommit(t, tx)
	})
}

// Whichever call sends a transaction's BEGIN (its first statement, a Batch,
// or the deferred statements at Commit), BEGIN's failure is the same error:
// the server's message untouched in Message, "BEGIN" in SQL, and the text
// "BEGIN failed: ...". Only deferred statements, which the application
// took for done, lose the transaction with it.
func TestFakeTxBeginFailsAlike(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		const locked = "SQLite error: database is locked"
		busy := fs.StepFailed("SQLITE_BUSY", locked)
		st := fs.SQL("UPDATE t SET v = 1")
		tests := []struct {
			name     string
			exchange []fs.Exchange
			params   string
			run      func(c *sql.Conn, tx *sql.Tx) error
			lost     bool
		}{
			{"statement", []fs.Exchange{
				fs.Pipeline("", beginBatch(st)).Respond(b1, fs.BatchOK(busy, fs.StepSkipped())),
				closeStream(b1),
			}, "busyTimeout=0", func(_ *sql.Conn, tx *sql.Tx) error {
				_, err := tx.Exec("UPDATE t SET v = 1")
				return err
			}, false},
			{"batch", []fs.Exchange{
				fs.Pipeline("", savepointSteps("BEGIN", st)).Respond(b1, fs.BatchOK(
					busy, fs.StepSkipped(), fs.StepSkipped(), fs.StepSkipped(), fs.StepSkipped(), fs.StepSkipped())),
				closeStream(b1),
			}, "busyTimeout=0", func(c *sql.Conn, _ *sql.Tx) error {
				_, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "UPDATE t SET v = 1"}})
				return err
			}, false},
			{"deferred", []fs.Exchange{
				fs.Pipeline("", guarded(true, inserts(1, 1), "COMMIT"), fs.Close()).
					Respond("", fs.BatchOK(busy, fs.StepSkipped(), fs.StepSkipped()), fs.CloseOK()),
			}, "deferredExec=1&busyTimeout=0", func(_ *sql.Conn, tx *sql.Tx) error {
				if _, err := tx.Exec("INSERT INTO t VALUES (?)", 1); err != nil {
					return fmt.Errorf("queued: %w", err)
				}
				return tx.Commit()
			}, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				c, tx := pinnedTx(t, tp, tt.params, nil, tt.exchange...)
				err := tt.run(c, tx)
				isNot := errs(libsql.ErrTxLost)
				is := errs(libsql.ErrBusy)
				if tt.lost {
					is, isNot = append(is, libsql.ErrTxLost), nil
				}
				wantErr(t, err, is, isNot, "BEGIN failed: "+locked+" (SQLITE_BUSY)")
				if e := asError(t, err); e.Message != locked || e.SQL != "BEGIN" || e.Statement != 0 || e.Deferred || e.RolledBack {
					t.Errorf("fields %+v: want the server's message and SQL BEGIN alone", e)
				}
				if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
					t.Errorf("Rollback: %v", err)
				}
			})
		}
	})
}

// BEGIN itself failing (or an answer that does not fit the batch) ends the
// attempt: the stream is closed, and nothing is left to roll back.
func TestFakeTxBeginFails(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		st := fs.SQL("INSERT INTO t VALUES (1)")
		tests := []struct {
			name   string
			answer fs.Result
			is     []error
			isNot  []error
			has    string
			active bool // the transaction began, so Rollback sends ROLLBACK
		}{
			{"busy", fs.BatchOK(fs.StepFailed("SQLITE_BUSY", "SQLite error: database is locked"), fs.StepSkipped()),
				errs(libsql.ErrBusy), errs(libsql.ErrTxLost), "database is locked", false},
			{"BEGIN skipped", fs.BatchOK(fs.StepSkipped(), fs.StepSkipped()), nil, errs(libsql.ErrTxLost), "the server skipped BEGIN", false},
			{"three results", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty())),
				errs(libsql.ErrTxLost), nil, "2-step batch with 3 results", false},
			{"statement skipped", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepSkipped()), nil, errs(libsql.ErrTxLost),
				"skipped the statement after BEGIN", true},
			{"statement failed", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepFailed("SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.a")),
				errs(libsql.ErrConstraint), errs(libsql.ErrTxLost), "UNIQUE constraint failed", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				end := closeStream(b1)
				if tt.active {
					end = finish(b1, "ROLLBACK")
				}
				srv := newFake(t, tp, fs.Pipeline("", beginBatch(st)).Respond(b1, tt.answer), end)
				db := openDB(t, srv, "busyTimeout=0") // a BEGIN that failed with SQLITE_BUSY is not retried
				tx := mustBegin(t, db, nil)
				_, err := tx.Exec("INSERT INTO t VALUES (1)")
				wantErr(t, err, tt.is, tt.isNot, tt.has)
				mustRollback(t, tx)
			})
		}
	})
}

// The server losing a transaction (lock stolen after the transaction
// timeout, stream expired, a restart, any HTTP error, a connection that
// died with the request) fails the statement with ErrTxLost; later
// statements fail the same way without a request; Rollback succeeds, and
// Commit returns the loss. A stream the server may still hold is closed.
func TestFakeTxLost(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2 := fs.Baton(1), fs.Baton(2)
		st2 := fs.SQL("UPDATE t SET a = 2")
		tests := []struct {
			name string
			fail fs.Exchange
			// closeWith is the baton the driver still holds, so it closes the
			// stream when the transaction ends; "" if the stream is gone.
			closeWith string
			code      string
			has       string
		}{
			{"TRANSACTION_TIMEOUT", fs.Pipeline(b1, fs.Execute(st2)).Respond(b2, fs.Fail("TRANSACTION_TIMEOUT", "Transaction timed out")),
				b2, "TRANSACTION_TIMEOUT", "Transaction timed out"},
			{"STREAM_EXPIRED", fs.Pipeline(b1, fs.Execute(st2)).Reply(fs.StreamExpired()),
				"", "STREAM_EXPIRED", "The stream has expired due to inactivity"},
			{"invalid baton", fs.Pipeline(b1, fs.Execute(st2)).Reply(fs.ProtocolError("Received an invalid baton")),
				"", "", "Received an invalid baton"},
			{"HTTP 500", fs.Pipeline(b1, fs.Execute(st2)).Reply(fs.HTTPError(500, "Internal Error: `boom`")),
				"", "", "Internal Error"},
			{"connection closed", fs.Pipeline(b1, fs.Execute(st2)).Reply(fs.Drop()),
				b1, "", "request failed"},
			{"undecodable answer", fs.Pipeline(b1, fs.Execute(st2)).Reply(fs.JSON(200, `{"baton":"x","results":[{"type":"ok"`)),
				"", "", "decode"},
		}
		for _, tt := range tests {
			if tp == overWS && !tt.fail.OverWS() {
				continue // an HTTP status or body has no WebSocket form
			}
			if tp == overWS && tt.name == "connection closed" {
				// The stream went with the socket; the transport says so.
				tt.closeWith, tt.has = "", "the server closed the connection"
			}
			for _, end := range []string{"ROLLBACK", "COMMIT"} {
				t.Run(tt.name+"/"+end, func(t *testing.T) {
					t.Parallel()
					srv := newFake(t, tp, begin(b1, fs.SQL("UPDATE t SET a = 1"), fs.Updated(1)), tt.fail)
					if tt.closeWith != "" {
						srv.Add(closeStream(tt.closeWith))
					}
					db := openDB(t, srv, "")
					tx := mustBegin(t, db, nil)
					mustExec(t, tx, "UPDATE t SET a = 1")
					_, err := tx.Exec("UPDATE t SET a = 2")
					wantErr(t, err, errs(libsql.ErrTxLost), nil, tt.has)
					if e := asError(t, err); e.Code != tt.code {
						t.Errorf("code %q, want %q", e.Code, tt.code)
					}
					n := srv.Count()
					_, err2 := tx.Exec("UPDATE t SET a = 3")
					wantErr(t, err2, errs(libsql.ErrTxLost), nil, tt.has)
					_, err3 := tx.Query("SELECT 1")
					wantErr(t, err3, errs(libsql.ErrTxLost), nil)
					if srv.Count() != n {
						t.Errorf("statements after the loss sent %d requests", srv.Count()-n)
					}
					if end == "ROLLBACK" {
						if err := tx.Rollback(); err != nil {
							t.Errorf("Rollback of a lost transaction: %v", err)
						}
					} else {
						wantErr(t, tx.Commit(), errs(libsql.ErrTxLost), nil, tt.has)
					}
				})
			}
		}
	})
}

// The lock stolen during the first statement: BEGIN ran, the statement got
// TRANSACTION_TIMEOUT.
func TestFakeTxTimeoutInFirstStatement(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		st := fs.SQL("INSERT INTO t VALUES (1)")
		srv := newFake(t, tp, fs.Pipeline("", beginBatch(st)).Respond(b1, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepFailed("TRANSACTION_TIMEOUT", "Transaction timed out"))),
			closeStream(b1))
		db := openDB(t, srv, "")
		tx := mustBegin(t, db, nil)
		_, err := tx.Exec("INSERT INTO t VALUES (1)")
		wantErr(t, err, errs(libsql.ErrTxLost), nil, "TRANSACTION_TIMEOUT")
		wantErr(t, tx.Commit(), errs(libsql.ErrTxLost), nil)
	})
}

// database/sql refuses a second Commit itself (sql.ErrTxDone); the driver's
// own transaction says libsql.ErrTxDone when used through driver.Conn.
func TestFakeTxDone(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		t.Run("database/sql", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(0)), finish(b1, "COMMIT"))
			db := openDB(t, srv, "")
			tx := mustBegin(t, db, nil)
			mustExec(t, tx, "DELETE FROM t")
			mustCommit(t, tx)
			if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("second Commit: %v", err)
			}
			if _, err := tx.Exec("DELETE FROM t"); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("Exec after Commit: %v", err)
			}
		})
		for _, second := range []string{"COMMIT", "ROLLBACK"} {
			t.Run("driver/"+second, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(0)), finish(b1, "COMMIT"))
				conn := driverConn(t, srv.URL, nil)
				tx, err := conn.(driver.ConnBeginTx).BeginTx(bg, driver.TxOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.(driver.ExecerContext).ExecContext(bg, "DELETE FROM t", nil); err != nil {
					t.Fatal(err)
				}
				mustCommit(t, tx)
				if second == "COMMIT" {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if !errors.Is(err, libsql.ErrTxDone) {
					t.Errorf("%s after COMMIT: %v", second, err)
				}
			})
		}
	})
}

// A read-only transaction asks describe (once per SQL text and connection)
// whether each statement only reads, and refuses writes with ErrReadOnly
// before sending them.
func TestFakeTxReadOnly(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b0, b1, b2 := fs.Baton(10), fs.Baton(1), fs.Baton(2)
		const ins, sel, multi = "INSERT INTO t VALUES (1)", "SELECT a FROM t", "SELECT 1; SELECT 2"
		res := fs.Query(fs.Cols("a"), fs.Vals(fs.Int(7)))
		srv := newFake(t, tp,
			describe(ins, false),
			// describe looks at the first statement of a script only; the
			// batch refuses the script, and a sequence is not allowed.
			describe(multi, true),
			fs.Pipeline("", beginBatch(fs.SQL(multi))).
				Respond(b0, fs.Fail("SQL_MANY_STATEMENTS", "SQL string contains more than one statement")),
			closeStream(b0),
			describe(sel, true),
			begin(b1, fs.SQL(sel), res),
			inTx(b1, b2, fs.SQL(sel), res),
			finish(b2, "COMMIT"),
		)
		db := openDB(t, srv, "")
		db.SetMaxOpenConns(1) // the describe cache is per connection
		tx := mustBegin(t, db, &sql.TxOptions{ReadOnly: true})
		_, err := tx.Exec(ins)
		wantErr(t, err, errs(libsql.ErrReadOnly), errs(libsql.ErrTxLost), "read-only transaction")
		if e := asError(t, err); e.HTTPStatus != 0 || e.SafeToRetry() {
			t.Errorf("error %+v", e)
		}
		_, err = tx.Exec(multi)
		wantErr(t, err, errs(libsql.ErrReadOnly), errs(libsql.ErrTxLost), "multi-statement")
		for range 2 {
			var a int
			if err := tx.QueryRow(sel).Scan(&a); err != nil || a != 7 {
				t.Fatalf("query: %d, %v", a, err)
			}
		}
		n := srv.Count()
		_, err = tx.Exec(ins)
		wantErr(t, err, errs(libsql.ErrReadOnly), nil)
		if srv.Count() != n {
			t.Errorf("the refused write sent %d requests; describe's answer is cached", srv.Count()-n)
		}
		mustCommit(t, tx)
	})
}

// describe failing, and a failing statement read-only: the errors come
// back as they are.
// HTTP only: the failure is an HTTP status.
func TestFakeTxReadOnlyDescribeFails(t *testing.T) {
	t.Parallel()
	srv := fs.New(t,
		fs.Pipeline("", fs.Describe("SELEC 1"), fs.Close()).
			Respond("", fs.Fail("SQL_INPUT_ERROR", `SQL input error: near "SELEC": syntax error (at offset 0)`), fs.CloseOK()),
		fs.Pipeline("", fs.Describe("SELECT 1"), fs.Close()).Reply(fs.HTTPError(503, "Namespace store has shut down")),
	)
	db := openDB(t, srv, "")
	tx := mustBegin(t, db, &sql.TxOptions{ReadOnly: true})
	_, err := tx.Query("SELEC 1")
	wantErr(t, err, errs(libsql.ErrSyntax), errs(libsql.ErrReadOnly), "SQL_INPUT_ERROR")
	_, err = tx.Query("SELECT 1")
	wantErr(t, err, errs(libsql.ErrTooManyRequests), nil, "shut down")
	mustRollback(t, tx)

}

// Only the default and serializable isolation levels are accepted; BeginTx
// sends nothing either way.
func TestFakeTxIsolation(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp)
		db := openDB(t, srv, "")
		if _, err := db.BeginTx(bg, &sql.TxOptions{Isolation: sql.LevelReadCommitted}); err == nil || !strings.Contains(err.Error(), "isolation level") {
			t.Errorf("read committed: %v", err)
		}
		tx := mustBegin(t, db, &sql.TxOptions{Isolation: sql.LevelSerializable})
		mustRollback(t, tx)
		ctx, cancel := context.WithCancel(bg)
		cancel()
		if _, err := db.BeginTx(ctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("BeginTx with an ended context: %v", err)
		}
		if srv.Count() != 0 {
			t.Errorf("%d requests", srv.Count())
		}
	})
}

// When BeginTx's context ends, database/sql rolls the transaction back
// from its own goroutine; the ROLLBACK still goes out, and the
// transaction's statements are refused.
func TestFakeTxContextEnds(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(1)), finish(b1, "ROLLBACK"))
		db := openDB(t, srv, "")
		ctx, cancel := context.WithCancel(bg)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "DELETE FROM t")
		cancel()
		if !srv.Await(5 * time.Second) {
			t.Fatal("no ROLLBACK after the context ended")
		}
		// The ROLLBACK has arrived; database/sql's goroutine that sent it must
		// also have read its answer before the test ends and the fake closes
		// its connections.
		deadline := time.Now().Add(5 * time.Second)
		for db.Stats().InUse > 0 {
			if time.Now().After(deadline) {
				t.Fatal("the connection is still in use after the ROLLBACK")
			}
			time.Sleep(time.Millisecond)
		}
		if _, err := tx.Exec("DELETE FROM t"); err == nil {
			t.Error("a statement ran after the transaction's context ended")
		}
		if err := tx.Commit(); err == nil {
			t.Error("Commit after the context ended succeeded")
		}
	})
}

// A transaction's statement whose own context ends while it waits for the
// server loses the transaction: the request may have run.
func TestFakeTxStatementContextEnds(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(1)),
			fs.Pipeline(b1, fs.Execute(fs.SQL("DELETE FROM u"))).Reply(fs.Hang()))
		// Over WebSocket the statement's goroutine reads the answer on the
		// transaction's own socket, and closes it when its context ends
		// (transport/ws, lockstep.go): that ends the stream with its
		// transaction, and nothing is left to close.
		if tp == overHTTP {
			srv.Add(closeStream(b1))
		}
		db := openDB(t, srv, "")
		tx := mustBegin(t, db, nil)
		mustExec(t, tx, "DELETE FROM t")
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		defer cancel()
		_, err := tx.ExecContext(ctx, "DELETE FROM u")
		wantErr(t, err, errs(libsql.ErrTxLost, context.DeadlineExceeded), nil)
		mustRollback(t, tx)
	})
}

// sqld refuses with 429 before it touches the stream, so the transaction
// and its write lock live on there. A refusal the driver does not wait out
// (its Retry-After is over 10 s) loses the transaction to the caller, and
// Rollback closes the stream rather than leave the lock until the stream
// expires.
// HTTP only: 429 is an HTTP status.
func TestFakeTx429ClosesStream(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	srv := fs.New(t, begin(b1, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
		fs.Pipeline(b1, fs.Execute(fs.SQL("INSERT INTO t VALUES (2)"))).Reply(fs.TooManyRequests("Too many concurrent requests", "60")),
		closeStream(b1))
	secondFails(t, openDB(t, srv, ""), "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)",
		errs(libsql.ErrTooManyRequests, libsql.ErrTxLost), "Too many concurrent requests")
}

// _txlock says which BEGIN a transaction sends, wherever it rides: with
// its first statement, before a Batch, at the head of deferred
// statements. A read-only transaction keeps BEGIN.
func TestFakeTxLock(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		st := fs.SQL("UPDATE t SET v = 1")
		first := func(begin string) []fs.Exchange {
			return []fs.Exchange{
				fs.Pipeline("", fs.Batch(fs.Step(fs.SQL(begin)), fs.Step(st).If(fs.OK(0)))).
					Respond(b1, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()))),
				finish(b1, "COMMIT"),
			}
		}
		exec := func(_ *sql.Conn, tx *sql.Tx) error {
			_, err := tx.Exec("UPDATE t SET v = 1")
			return err
		}
		tests := []struct {
			name     string
			params   string
			readOnly bool
			exchange []fs.Exchange
			run      func(c *sql.Conn, tx *sql.Tx) error
		}{
			{"default", "", false, first("BEGIN"), exec},
			{"deferred", "_txlock=deferred", false, first("BEGIN"), exec},
			{"immediate", "_txlock=immediate", false, first("BEGIN IMMEDIATE"), exec},
			{"exclusive", "_txlock=exclusive", false, first("BEGIN EXCLUSIVE"), exec},
			{"read-only", "_txlock=immediate", true, append([]fs.Exchange{describe("UPDATE t SET v = 1", true)}, first("BEGIN")...), exec},
			{"batch", "_txlock=immediate", false, []fs.Exchange{
				fs.Pipeline("", savepointSteps("BEGIN IMMEDIATE", st)).Respond(b1, fs.BatchOK(
					fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepSkipped(), fs.StepSkipped())),
				finish(b1, "COMMIT"),
			}, func(c *sql.Conn, _ *sql.Tx) error {
				_, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "UPDATE t SET v = 1"}})
				return err
			}},
			{"deferred statements", "_txlock=exclusive&deferredExec=1", false, []fs.Exchange{
				fs.Pipeline("", guardedWith("BEGIN EXCLUSIVE", inserts(1, 1), "COMMIT"), fs.Close()).
					Respond("", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty())), fs.CloseOK()),
			}, func(_ *sql.Conn, tx *sql.Tx) error {
				_, err := tx.Exec("INSERT INTO t VALUES (?)", 1)
				return err
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				c, tx := pinnedTx(t, tp, tt.params, &sql.TxOptions{ReadOnly: tt.readOnly}, tt.exchange...)
				if err := tt.run(c, tx); err != nil {
					t.Fatal(err)
				}
				mustCommit(t, tx)
			})
		}
	})
}

// A BEGIN that failed with SQLITE_BUSY, with every step after it skipped,
// began nothing: the transaction's batch is sent again on a new stream,
// wherever BEGIN rode; one whose answer shows a later step ran is not.
func TestFakeTxBeginBusyRetried(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2 := fs.Baton(1), fs.Baton(2)
		const locked = "SQLite error: database is locked"
		busy := fs.StepFailed("SQLITE_BUSY", locked)
		st := fs.SQL("UPDATE t SET v = 1")
		immediate := fs.Batch(fs.Step(fs.SQL("BEGIN IMMEDIATE")), fs.Step(st).If(fs.OK(0)))
		tests := []struct {
			name     string
			params   string
			exchange []fs.Exchange
			run      func(tx *sql.Tx) error
			wantErr  string // "": the transaction commits
		}{
			{"statement", "_txlock=immediate", []fs.Exchange{
				fs.Pipeline("", immediate).Respond(b1, fs.BatchOK(busy, fs.StepSkipped())),
				closeStream(b1),
				fs.Pipeline("", immediate).Respond(b1, fs.BatchOK(busy, fs.StepSkipped())),
				closeStream(b1),
				fs.Pipeline("", immediate).Respond(b2, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()))),
				finish(b2, "COMMIT"),
			}, func(tx *sql.Tx) error {
				_, err := tx.Exec("UPDATE t SET v = 1")
				return err
			}, ""},
			{"deferred statements", "_txlock=immediate&deferredExec=1", []fs.Exchange{
				fs.Pipeline("", guardedWith("BEGIN IMMEDIATE", inserts(1, 2), "COMMIT"), fs.Close()).
					Respond("", fs.BatchOK(busy, fs.StepSkipped(), fs.StepSkipped(), fs.StepSkipped()), fs.CloseOK()),
				fs.Pipeline("", guardedWith("BEGIN IMMEDIATE", inserts(1, 2), "COMMIT"), fs.Close()).
					Respond("", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty())), fs.CloseOK()),
			}, func(tx *sql.Tx) error {
				for i := 1; i <= 2; i++ {
					if _, err := tx.Exec("INSERT INTO t VALUES (?)", i); err != nil {
						return err
					}
				}
				return nil
			}, ""},
			{"a later step ran", "_txlock=immediate", []fs.Exchange{
				fs.Pipeline("", immediate).Respond(b1, fs.BatchOK(busy, fs.StepFailed("SQLITE_BUSY", locked))),
				closeStream(b1),
			}, func(tx *sql.Tx) error {
				_, err := tx.Exec("UPDATE t SET v = 1")
				return err
			}, "BEGIN failed: " + locked},
			{"busyTimeout=0", "_txlock=immediate&busyTimeout=0", []fs.Exchange{
				fs.Pipeline("", immediate).Respond(b1, fs.BatchOK(busy, fs.StepSkipped())),
				closeStream(b1),
			}, func(tx *sql.Tx) error {
				_, err := tx.Exec("UPDATE t SET v = 1")
				return err
			}, "BEGIN failed: " + locked},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, tt.exchange...)
				db := openDB(t, srv, tt.params)
				tx := mustBegin(t, db, nil)
				err := tt.run(tx)
				if err == nil {
					err = tx.Commit()
				} else {
					_ = tx.Rollback()
				}
				if tt.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				wantErr(t, err, errs(libsql.ErrBusy), errs(libsql.ErrTxLost), tt.wantErr)
			})
		}
	})
}

// A transaction whose stream the server no longer has, whatever its words
// (sqld after a restart: "Received an invalid baton"; after 10 s idle:
// STREAM_EXPIRED; PROTOCOL.md's servers: 404), fails with one error: the
// transaction is lost, in plain words, and the statement did not run
// (SafeToRetry).
// HTTP only: batons are HTTP's.
func TestFakeTxStreamGone(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	st2 := fs.SQL("UPDATE t SET a = 2")
	for _, tt := range []struct {
		name  string
		reply fs.Reply
		said  string
	}{
		{"restarted", fs.ProtocolError("Received an invalid baton"), "Received an invalid baton"},
		{"expired", fs.StreamExpired(), "The stream has expired due to inactivity"},
		{"not found", fs.HTTPError(404, "stream not found"), "stream not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, begin(b1, fs.SQL("UPDATE t SET a = 1"), fs.Updated(1)), fs.Pipeline(b1, fs.Execute(st2)).Reply(tt.reply))
			db := openDB(t, srv, "")
			tx := mustBegin(t, db, nil)
			mustExec(t, tx, "UPDATE t SET a = 1")
			_, err := tx.Exec("UPDATE t SET a = 2")
			wantErr(t, err, errs(libsql.ErrTxLost), nil, "the server no longer has this connection's stream (it restarted, or the stream was idle past its timeout)", tt.said)
			if !asError(t, err).SafeToRetry() {
				t.Errorf("%v: not SafeToRetry, though the server refused the statement before running it", err)
			}
			_ = tx.Rollback()
			srv.Verify()
		})
	}
}

// The end of a transaction, COMMIT or ROLLBACK (sent with the stream's
// close), failing.
//
// Inside a successful response: the error is the statement's, with its
// code; the close after a failed COMMIT rolled the transaction back.
//
// A COMMIT that reached the server and got no usable answer may have run:
// the error says its outcome is unknown, is not safe to retry, and does not
// claim the transaction was lost. A COMMIT refused with 4xx did not run
// (sqld refuses the whole pipeline and drops the stream): the transaction
// is lost.
//
// ROLLBACK refused with 4xx succeeds (the server dropped the stream, which
// rolled back); a ROLLBACK without an answer is an error, but never an
// unknown COMMIT.
func TestFakeTxEndFails(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		type endCase struct {
			end, name string
			reply     fs.Reply // the answer to the end's request
			params    string
			// after are the exchanges that follow over HTTP: where the
			// driver still holds the baton (no HTTP answer), it closes the
			// stream, which rolls back whatever is left. Over WebSocket the
			// close_stream goes out in the end's burst.
			after []fs.Exchange
			check func(t *testing.T, err error)
		}
		// inResponse is the end's statement failing with code in a
		// successful response.
		inResponse := func(end, code string, is, isNot []error) endCase {
			return endCase{end, code, fs.PipelineReply("", fs.Fail(code, "SQLite error: it failed"), fs.CloseOK()), "", nil,
				func(t *testing.T, err error) {
					shown := code
					if shown == "SQLITE_UNKNOWN" {
						shown = "SQLITE_ERROR" // sqld's name for it; the text uses SQLite's
					}
					wantErr(t, err, is, isNot, "it failed", shown)
					if e := asError(t, err); e.Code != code {
						t.Errorf("Code %q, want %q", e.Code, code)
					}
				}}
		}
		// unknown is a COMMIT whose outcome is unknown, lost one the server
		// refused: each matches the classes in is and mentions has.
		unknown := func(is []error, has string) func(*testing.T, error) {
			return func(t *testing.T, err error) {
				wantErr(t, err, is, errs(libsql.ErrTxLost), "the outcome of COMMIT is unknown", has)
				if e := asError(t, err); e.SafeToRetry() {
					t.Errorf("an unknown outcome is SafeToRetry: %+v", e)
				}
			}
		}
		lost := func(is []error, has string) func(*testing.T, error) {
			return func(t *testing.T, err error) {
				wantErr(t, err, append(is, libsql.ErrTxLost), nil, has)
				asError(t, err)
			}
		}
		rolledBack := func(t *testing.T, err error) {
			if err != nil {
				t.Errorf("Rollback: %v", err)
			}
		}
		rollbackFailed := func(t *testing.T, err error) {
			wantErr(t, err, nil, nil)
			if err != nil && strings.Contains(err.Error(), "outcome") {
				t.Errorf("a ROLLBACK error speaks of an outcome: %v", err)
			}
		}
		// What the WebSocket transport says where its words differ.
		dropped := "request failed"
		if tp == overWS {
			dropped = "the server closed the connection while the request was in flight"
		}
		gone := []fs.Exchange{fs.Pipeline(b1, fs.Close()).Reply(fs.ProtocolError("Received an invalid baton"))}
		closed := []fs.Exchange{closeStream(b1)}
		tests := []endCase{
			inResponse("COMMIT", "SQLITE_BUSY", errs(libsql.ErrBusy, libsql.ErrTxLost), nil),
			inResponse("COMMIT", "TRANSACTION_TIMEOUT", errs(libsql.ErrTxLost), nil),
			inResponse("COMMIT", "SQLITE_UNKNOWN", errs(libsql.ErrTxLost), nil),
			inResponse("ROLLBACK", "SQLITE_UNKNOWN", nil, errs(libsql.ErrTxLost)),
			inResponse("ROLLBACK", "TRANSACTION_TIMEOUT", errs(libsql.ErrTxLost), nil),

			{"COMMIT", "connection closed", fs.Drop(), "", gone, unknown(nil, dropped)},
			{"COMMIT", "no answer in time", fs.Hang(), "timeout=1s", gone, unknown(nil, "deadline")},
			{"COMMIT", "late answer", fs.Delay(2*time.Second, fs.PipelineReply("", fs.ExecuteOK(fs.Empty()), fs.CloseOK())), "timeout=1s", gone,
				unknown(nil, "deadline")},
			{"COMMIT", "HTTP 500", fs.HTTPError(500, "Internal Error: `database disk image is malformed`"), "", nil, unknown(nil, "malformed")},
			{"COMMIT", "HTTP 502", fs.PlainText(502, "Bad Gateway"), "", nil, unknown(nil, "Bad Gateway")},
			{"COMMIT", "HTTP 503", fs.HTTPError(503, "Replicator exited"), "", nil, unknown(errs(libsql.ErrTooManyRequests), "Replicator exited")},
			{"COMMIT", "HTTP 400 invalid baton", fs.ProtocolError("Received an invalid baton"), "", nil, lost(nil, "invalid baton")},
			{"COMMIT", "HTTP 400 expired", fs.StreamExpired(), "", nil, lost(nil, "expired due to inactivity")},
			{"COMMIT", "HTTP 401", fs.HTTPError(401, "Unauthorized: `The JWT has expired`"), "", nil, lost(errs(libsql.ErrAuth), "JWT has expired")},
			{"COMMIT", "HTTP 403", fs.HTTPError(403, "Authorization forbidden: Current session doesn't not have Write permission to namespace default"), "", nil,
				lost(errs(libsql.ErrPermission), "Write permission")},
			// sqld refuses with 429 before it touches the stream, which lives
			// on with the transaction's lock: the driver closes it.
			{"COMMIT", "HTTP 429", fs.TooManyRequests("Too many concurrent requests", "60"), "", gone,
				lost(errs(libsql.ErrTooManyRequests), "Too many concurrent requests")},

			{"ROLLBACK", "HTTP 400", fs.ProtocolError("Received an invalid baton"), "", nil, rolledBack},
			{"ROLLBACK", "HTTP 400 expired", fs.StreamExpired(), "", nil, rolledBack},
			{"ROLLBACK", "connection closed", fs.Drop(), "", closed, rollbackFailed},
			{"ROLLBACK", "HTTP 500", fs.HTTPError(500, "Internal Error"), "", nil, rollbackFailed},
		}
		for _, tt := range tests {
			if tp == overWS && !tt.reply.OverWS() {
				continue // an HTTP status has no WebSocket form
			}
			t.Run(tt.end+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, begin(b1, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
					fs.Pipeline(b1, fs.Execute(fs.SQL(tt.end)), fs.Close()).Reply(tt.reply))
				if tp == overHTTP {
					srv.Add(tt.after...)
				}
				db := openDB(t, srv, tt.params)
				tx := mustBegin(t, db, nil)
				mustExec(t, tx, "INSERT INTO t VALUES (1)")
				var err error
				if tt.end == "COMMIT" {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				tt.check(t, err)
			})
		}
	})
}
