package libsql_test

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// execInserts runs INSERT INTO t VALUES (?) on tx with 1 to n, failing the
// test on an error, and returns their results.
func execInserts(t *testing.T, tx *sql.Tx, n int) []sql.Result {
	t.Helper()
	res := make([]sql.Result, 0, n)
	for i := 1; i <= n; i++ {
		r, err := tx.Exec("INSERT INTO t VALUES (?)", i)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

// Deferred Execs send nothing; Commit sends BEGIN, the queue, COMMIT and
// the close in one request. The mode comes from the DSN (either spelling)
// or the transaction's context, which also turns it off.
func TestFakeDeferredCommit(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		tests := []struct {
			name   string
			params string
			ctx    context.Context
			defer_ bool
		}{
			{"dsn", "deferredExec=1", bg, true},
			{"dsn alias", "deferred_exec=true", bg, true},
			{"context", "", libsql.WithDeferredExec(bg, true), true},
			{"context off", "deferredExec=1", libsql.WithDeferredExec(bg, false), false},
			{"config off", "", bg, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp)
				if tt.defer_ {
					srv.Add(fs.Pipeline("", guarded(true, inserts(1, 3), "COMMIT"), fs.Close()).Respond("", allOK(5), fs.CloseOK()))
				} else {
					b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
					srv.Add(begin(b1, ins(1).WantRows(false), fs.Inserted(1, 101)),
						inTx(b1, b2, ins(2).WantRows(false), fs.Inserted(1, 102)),
						inTx(b2, b3, ins(3).WantRows(false), fs.Inserted(1, 103)),
						finish(b3, "COMMIT"))
				}
				db := openDB(t, srv, tt.params)
				tx, err := db.BeginTx(tt.ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				res := execInserts(t, tx, 3)
				if sent := srv.Count() > 0; sent == tt.defer_ {
					t.Errorf("deferred %v, but %d requests before Commit", tt.defer_, srv.Count())
				}
				mustCommit(t, tx)
				for i, r := range res {
					if id, err := r.LastInsertId(); err != nil || id != int64(101+i) {
						t.Errorf("statement %d: LastInsertId %d, %v", i+1, id, err)
					}
				}
			})
		}
	})
}

// The queue is sent when a Query needs the server, when a Result is asked
// for its values, when 128 statements or 512 KiB are queued.
func TestFakeDeferredFlush(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2 := fs.Baton(1), fs.Baton(2)
		t.Run("query", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 2), "")).Respond(b1, allOK(3)),
				inTx(b1, b2, fs.SQL("SELECT count(*) FROM t"), fs.Query(fs.Cols("count(*)"), fs.Vals(fs.Int(2)))),
				finish(b2, "COMMIT"))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			execInserts(t, tx, 2)
			var n int
			if err := tx.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
				t.Fatalf("count %d, %v", n, err)
			}
			mustCommit(t, tx)
		})
		t.Run("result", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, []fs.Stmt{fs.SQL("UPDATE t SET a = 0").WantRows(false)}, "")).
				Respond(b1, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Updated(4)))),
				// BEGIN has run: the rest of the queue goes with COMMIT.
				fs.Pipeline(b1, guarded(false, inserts(2, 2), "COMMIT"), fs.Close()).Respond("", allOK(2), fs.CloseOK()))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			r, err := tx.Exec("UPDATE t SET a = 0")
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count() != 0 {
				t.Fatal("a deferred Exec sent a request")
			}
			if n, err := r.RowsAffected(); err != nil || n != 4 {
				t.Fatalf("RowsAffected %d, %v", n, err)
			}
			if id, err := r.LastInsertId(); err != nil || id != 0 {
				t.Errorf("LastInsertId %d, %v", id, err)
			}
			if _, err := tx.Exec("INSERT INTO t VALUES (?)", 2); err != nil {
				t.Fatal(err)
			}
			mustCommit(t, tx)
		})
		t.Run("128 statements", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 128), "")).Respond(b1, allOK(129)),
				fs.Pipeline(b1, guarded(false, inserts(129, 130), "COMMIT"), fs.Close()).Respond("", allOK(3), fs.CloseOK()))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			for i := 1; i <= 130; i++ {
				if _, err := tx.Exec("INSERT INTO t VALUES (?)", i); err != nil {
					t.Fatal(err)
				}
				want := 0 // nothing until the 128th statement, then the flush
				if i >= 128 {
					want = 1
				}
				if roundTrips(srv) != want {
					t.Fatalf("after %d statements: %d round trips, want %d", i, roundTrips(srv), want)
				}
			}
			mustCommit(t, tx)
			if roundTrips(srv) != 2 {
				t.Errorf("%d round trips for 130 statements", roundTrips(srv))
			}
		})
		t.Run("512 KiB", func(t *testing.T) {
			t.Parallel()
			big := bytes.Repeat([]byte{0xab}, 400<<10)
			st := fs.SQL("INSERT INTO b VALUES (?)", fs.Blob(big)).WantRows(false)
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, []fs.Stmt{st}, "")).Respond(b1, allOK(2)),
				finish(b1, "COMMIT"))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			arg := bytes.Clone(big)
			if _, err := tx.Exec("INSERT INTO b VALUES (?)", arg); err != nil {
				t.Fatal(err)
			}
			if roundTrips(srv) != 1 {
				t.Fatalf("%d round trips after a 400 KiB statement, want the flush", roundTrips(srv))
			}
			mustCommit(t, tx)
		})
	})
}

// A flush that fails loses the transaction: the Exec that filled the
// queue reports it, and so does a Query whose flush the server refuses as
// a whole. Named arguments are queued as they are.
// HTTP only: the failure is an HTTP status.
func TestFakeDeferredFlushFails(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	t.Run("128th statement", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, fs.Pipeline("", guarded(true, inserts(1, 128), "")).Reply(fs.HTTPError(503, "Replicator exited")))
		db := openDB(t, srv, "deferredExec=1")
		tx := mustBegin(t, db, nil)
		execInserts(t, tx, 127)
		_, err := tx.Exec("INSERT INTO t VALUES (?)", 128)
		wantErr(t, err, errs(libsql.ErrTxLost, libsql.ErrTooManyRequests), nil, "Replicator exited")
		mustRollback(t, tx)
	})
	t.Run("refused batch", func(t *testing.T) {
		t.Parallel()
		st := fs.SQL("INSERT INTO t VALUES (:a, :b)").Named("a", fs.Int(1)).Named("b", fs.Text("x")).WantRows(false)
		srv := fs.New(t, fs.Pipeline("", guarded(true, []fs.Stmt{st}, "")).
			Respond(b1, fs.Fail("ARGS_BOTH_POSITIONAL_AND_NAMED", "Arguments do not match SQL parameters: both positional and named")),
			closeStream(b1))
		db := openDB(t, srv, "deferredExec=1")
		tx := mustBegin(t, db, nil)
		if _, err := tx.Exec("INSERT INTO t VALUES (:a, :b)", sql.Named("a", 1), sql.Named("b", "x")); err != nil {
			t.Fatal(err)
		}
		_, err := tx.Query("SELECT 1")
		wantErr(t, err, errs(libsql.ErrTxLost), nil, "deferred statements refused", "ARGS_BOTH_POSITIONAL_AND_NAMED")
		mustRollback(t, tx)
	})

}

// The queue holds its own copy of []byte arguments: the caller may reuse
// its buffer as soon as Exec returns.
func TestFakeDeferredCopiesBlobs(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp, fs.Pipeline("", guarded(true, []fs.Stmt{
			fs.SQL("INSERT INTO b VALUES (?)", fs.Blob([]byte("one"))).WantRows(false),
			fs.SQL("INSERT INTO b VALUES (?)", fs.Blob([]byte("two"))).WantRows(false),
		}, "COMMIT"), fs.Close()).Respond("", allOK(4), fs.CloseOK()))
		db := openDB(t, srv, "deferredExec=1")
		tx := mustBegin(t, db, nil)
		buf := []byte("one")
		if _, err := tx.Exec("INSERT INTO b VALUES (?)", buf); err != nil {
			t.Fatal(err)
		}
		copy(buf, "two")
		if _, err := tx.Exec("INSERT INTO b VALUES (?)", buf); err != nil {
			t.Fatal(err)
		}
		copy(buf, "xxx")
		mustCommit(t, tx)
	})
}

// A queued statement that fails is reported late, by the call that sent
// it, with its position, SQL and class, and ErrTxLost: the statements
// after it never ran (each is guarded by the one before), and the
// transaction is over.
func TestFakeDeferredFailure(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		tests := []struct {
			name  string
			code  string
			msg   string
			class error
		}{
			{"constraint", "SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.a", libsql.ErrConstraint},
			{"busy", "SQLITE_BUSY", "SQLite error: database is locked", libsql.ErrBusy},
			{"timeout", "TRANSACTION_TIMEOUT", "Transaction timed out", libsql.ErrTxLost},
		}
		for _, tt := range tests {
			t.Run("at commit/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 3), "COMMIT"), fs.Close()).Respond("", fs.BatchOK(
					fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)), fs.StepFailed(tt.code, tt.msg),
					fs.StepSkipped(), fs.StepSkipped()), fs.CloseOK()))
				db := openDB(t, srv, "deferredExec=1")
				tx := mustBegin(t, db, nil)
				res := execInserts(t, tx, 3)
				err := tx.Commit()
				wantErr(t, err, errs(tt.class, libsql.ErrTxLost), nil, "deferred statement #2", "INSERT INTO t VALUES (?)", tt.msg)
				if id, err := res[0].LastInsertId(); err != nil || id != 1 {
					t.Errorf("the statement before the failure: %d, %v", id, err)
				}
				_, err = res[1].RowsAffected()
				wantErr(t, err, errs(tt.class, libsql.ErrTxLost), nil, "#2")
				_, err = res[2].RowsAffected()
				wantErr(t, err, errs(tt.class, libsql.ErrTxLost), nil, "#2")
			})
		}
		t.Run("at query", func(t *testing.T) {
			t.Parallel()
			b1 := fs.Baton(1)
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 2), "")).Respond(b1, fs.BatchOK(
				fs.StepOK(fs.Empty()), fs.StepFailed("SQLITE_CONSTRAINT", "SQLite error: NOT NULL constraint failed: t.a"), fs.StepSkipped())),
				// The transaction is rolled back at once, releasing its locks.
				closeStream(b1))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			execInserts(t, tx, 2)
			_, err := tx.Query("SELECT * FROM t")
			wantErr(t, err, errs(libsql.ErrConstraint, libsql.ErrTxLost), nil, "deferred statement #1", "NOT NULL")
			// Over WebSocket the stream's close goes out without waiting
			// for its answer, and may reach the fake a little later.
			for deadline := time.Now().Add(5 * time.Second); roundTrips(srv) < 2 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			n := srv.Count()
			_, err = tx.Exec("INSERT INTO t VALUES (?)", 3)
			wantErr(t, err, errs(libsql.ErrConstraint, libsql.ErrTxLost), nil)
			if err := tx.Rollback(); err != nil {
				t.Errorf("Rollback: %v", err)
			}
			if srv.Count() != n {
				t.Errorf("%d requests after the loss", srv.Count()-n)
			}
		})
	})
}

// The batch refused as a whole, BEGIN failing, a skipped or failed COMMIT:
// Commit reports each as the transaction's loss; a malformed answer as an
// unknown outcome.
func TestFakeDeferredCommitFails(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		tests := []struct {
			name   string
			answer fs.Result
			is     []error
			has    string
			// The statement ran, and its Result says so (as a Result does
			// when a later COMMIT fails without deferred execution).
			ranOK bool
		}{
			{"refused", fs.Fail("SQL_PARSE_ERROR", "SQL string could not be parsed: syntax error around L1:1: `INSRT`"),
				errs(libsql.ErrSyntax, libsql.ErrTxLost), "deferred statements refused", false},
			{"BEGIN failed", fs.BatchOK(fs.StepFailed("SQLITE_BUSY", "SQLite error: database is locked"), fs.StepSkipped(), fs.StepSkipped()),
				errs(libsql.ErrBusy, libsql.ErrTxLost), "database is locked", false},
			{"BEGIN skipped", fs.BatchOK(fs.StepSkipped(), fs.StepSkipped(), fs.StepSkipped()), errs(libsql.ErrTxLost), "the server skipped BEGIN", false},
			{"COMMIT failed", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)), fs.StepFailed("SQLITE_BUSY", "SQLite error: database is locked")),
				errs(libsql.ErrBusy, libsql.ErrTxLost), "database is locked", true},
			{"COMMIT skipped", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)), fs.StepSkipped()),
				errs(libsql.ErrTxLost), "skipped COMMIT", true},
			{"statement skipped", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepSkipped(), fs.StepSkipped()),
				errs(libsql.ErrTxLost), "the server skipped it", false},
			// The answer does not say what happened to COMMIT.
			{"wrong count", allOK(4), nil, "the outcome of COMMIT is unknown: server answered a 3-step batch with 4 results", false},
			// Missing trailing steps are skipped ones (Protobuf leaves them
			// out): COMMIT did not run.
			{"short answer", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1))),
				errs(libsql.ErrTxLost), "skipped COMMIT", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 1), "COMMIT"), fs.Close()).Respond("", tt.answer, fs.CloseOK()))
				db := openDB(t, srv, "deferredExec=1&busyTimeout=0") // a busy BEGIN is not retried
				tx := mustBegin(t, db, nil)
				r, err := tx.Exec("INSERT INTO t VALUES (?)", 1)
				if err != nil {
					t.Fatal(err)
				}
				err = tx.Commit()
				wantErr(t, err, tt.is, nil, tt.has)
				if n, err := r.RowsAffected(); (err == nil) != tt.ranOK || (tt.ranOK && n != 1) {
					t.Errorf("the statement's Result: %d, %v", n, err)
				}
			})
		}
	})
}

// A deferred Commit's request: never sent (the server is unreachable and
// BEGIN was in it) is a plain safe error; sent without an answer is an
// unknown outcome.
func TestFakeDeferredCommitTransport(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		t.Run("unreachable", func(t *testing.T) {
			t.Parallel()
			db := openURL(t, refusedURL(t, tp), "deferredExec=1")
			tx := mustBegin(t, db, nil)
			r, err := tx.Exec("INSERT INTO t VALUES (?)", 1)
			if err != nil {
				t.Fatal(err)
			}
			err = tx.Commit()
			wantErr(t, err, nil, errs(libsql.ErrTxLost), "refused")
			if e := asError(t, err); !e.SafeToRetry() || strings.Contains(e.Error(), "unknown") {
				t.Errorf("error %v: want a safe error, not an unknown outcome", e)
			}
			if _, err2 := r.RowsAffected(); err2 == nil {
				t.Error("the statement's Result reports success")
			}
		})
		t.Run("connection closed", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 1), "COMMIT"), fs.Close()).Reply(fs.Drop()))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			if _, err := tx.Exec("INSERT INTO t VALUES (?)", 1); err != nil {
				t.Fatal(err)
			}
			err := tx.Commit()
			wantErr(t, err, nil, nil, "the outcome of COMMIT is unknown")
			if asError(t, err).SafeToRetry() {
				t.Error("an unknown outcome is SafeToRetry")
			}
		})
		t.Run("flush fails", func(t *testing.T) {
			t.Parallel()
			httpOnly(t, tp, "WebSocket streams do not expire")
			b1 := fs.Baton(1)
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 1), "")).Respond(b1, allOK(2)),
				fs.Pipeline(b1, guarded(false, inserts(2, 2), "")).Reply(fs.StreamExpired()))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			r1, _ := tx.Exec("INSERT INTO t VALUES (?)", 1)
			if _, err := r1.RowsAffected(); err != nil {
				t.Fatal(err)
			}
			r2, _ := tx.Exec("INSERT INTO t VALUES (?)", 2)
			_, err := r2.RowsAffected()
			wantErr(t, err, errs(libsql.ErrTxLost), nil, "STREAM_EXPIRED")
			mustRollback(t, tx)
		})
	})
}

// Rollback drops the queue unsent: the statements' Results say they never
// ran (libsql.ErrTxDone).
func TestFakeDeferredRollback(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp)
		db := openDB(t, srv, "deferredExec=1")
		tx := mustBegin(t, db, nil)
		res := execInserts(t, tx, 3)
		mustRollback(t, tx)
		if srv.Count() != 0 {
			t.Errorf("Rollback of a deferred transaction sent %d requests", srv.Count())
		}
		for _, r := range res {
			_, err := r.RowsAffected()
			wantErr(t, err, errs(libsql.ErrTxDone), nil, "not run")
			_, err = r.LastInsertId()
			wantErr(t, err, errs(libsql.ErrTxDone), nil, "not run")
		}
	})
}

// A multi-statement Exec is never queued: the queue is sent first, then the
// script runs as a sequence once the server says it holds several
// statements. Read-only transactions never defer.
func TestFakeDeferredNotQueued(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
		const script = "CREATE TABLE a (x); CREATE TABLE b (y)"
		t.Run("script", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", guarded(true, inserts(1, 1), "")).Respond(b1, allOK(2)),
				fs.Pipeline(b1, fs.Execute(fs.SQL(script))).Respond(b2, fs.Fail("SQL_MANY_STATEMENTS", "SQL string contains more than one statement")),
				fs.Pipeline(b2, fs.Sequence(script)).Respond(b3, fs.SequenceOK()),
				finish(b3, "COMMIT"))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, nil)
			if _, err := tx.Exec("INSERT INTO t VALUES (?)", 1); err != nil {
				t.Fatal(err)
			}
			mustExec(t, tx, script)
			mustCommit(t, tx)
		})
		t.Run("read-only", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, describe("SELECT 1", true),
				begin(b1, fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))), finish(b1, "COMMIT"))
			db := openDB(t, srv, "deferredExec=1")
			tx := mustBegin(t, db, &sql.TxOptions{ReadOnly: true})
			mustExec(t, tx, "SELECT 1")
			mustCommit(t, tx)
		})
		t.Run("autocommit", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, auto(fs.SQL("INSERT INTO t VALUES (?)", fs.Int(1)), fs.Inserted(1, 1)))
			db := openDB(t, srv, "deferredExec=1")
			if _, err := db.Exec("INSERT INTO t VALUES (?)", 1); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// A transaction whose context ended refuses to send its queue.
func TestFakeDeferredContextEnds(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp)
		db := openDB(t, srv, "deferredExec=1")
		ctx, cancel := context.WithCancel(bg)
		tx, _ := db.BeginTx(ctx, nil)
		r, err := tx.Exec("INSERT INTO t VALUES (?)", 1)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := r.RowsAffected(); err == nil {
			t.Error("a queued statement ran after its transaction's context ended")
		}
		_ = tx.Rollback()
		if srv.Count() != 0 {
			t.Errorf("%d requests", srv.Count())
		}
	})
}
