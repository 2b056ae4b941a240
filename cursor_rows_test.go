package libsql_test

import (
	"database/sql"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// countRows reads the rest of rows and returns how many there were.
func countRows(rows *sql.Rows) int {
	n := 0
	for rows.Next() {
		n++
	}
	return n
}

// wantRows reads the rest of rows, failing the test unless they were n
// and ended without an error.
func wantRows(t *testing.T, rows *sql.Rows, n int) {
	t.Helper()
	if got := countRows(rows); rows.Err() != nil || got != n {
		t.Fatalf("%d rows, %v", got, rows.Err())
	}
}

// A read-only query whose result is over sqld's response limit runs again
// through /v3/cursor and its rows stream: 4 requests (the failed pipeline,
// describe, the cursor, the stream's close); describe's answer is cached.
func TestFakeCursorLargeReadOnly(t *testing.T) {
	t.Parallel()
	c1, c2 := fs.Baton(1), fs.Baton(2)
	body := []fs.Line{fs.StepBegin(0, bigCols...), bigRow(1, "ada"), bigRow(2, "bob"), fs.StepEnd(), fs.ReplicationIndex(9)}
	srv := fs.New(t, tooLargeAuto(bigSQL),
		describe(bigSQL, true),
		fs.Cursor("", fs.Step(fs.SQL(bigSQL))).Stream(c1, body...),
		closeStream(c1),
		// Again on the same connection: describe is not asked twice.
		tooLargeAuto(bigSQL),
		fs.Cursor("", fs.Step(fs.SQL(bigSQL))).Stream(c2, body...),
		closeStream(c2),
	)
	db := openDB(t, srv, "readYourWrites=0") // the cursor's index would ride on later requests; see replication_test.go
	db.SetMaxOpenConns(1)
	for round := range 2 {
		rows, err := db.Query(bigSQL)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			cts, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			var names, types []string
			for _, ct := range cts {
				names = append(names, ct.Name())
				types = append(types, ct.DatabaseTypeName())
				if _, ok := ct.Nullable(); ok {
					t.Errorf("column %s claims to know its nullability", ct.Name())
				}
			}
			if strings.Join(names, ",") != "id,name,at" || strings.Join(types, ",") != "INTEGER,TEXT,DATETIME" {
				t.Errorf("columns %v %v", names, types)
			}
			if st := cts[0].ScanType(); st != reflect.TypeFor[int64]() {
				t.Errorf("scan type of id: %v", st)
			}
		}
		var got []string
		for rows.Next() {
			var id int64
			var name string
			var at time.Time
			if err := rows.Scan(&id, &name, &at); err != nil {
				t.Fatal(err)
			}
			if at != time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) {
				t.Errorf("at = %v", at)
			}
			got = append(got, name)
		}
		if err := rows.Err(); err != nil || strings.Join(got, ",") != "ada,bob" {
			t.Fatalf("rows %v, %v", got, err)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.CountPath("/v3/pipeline") + srv.CountPath("/v3/cursor"); n != 7 {
		t.Errorf("%d requests for two streamed queries, want 4 + 3", n)
	}
}

// A statement that writes has already run when its answer is too large: it
// is not run again, and the error says so. When describe cannot tell, the
// driver does not guess.
func TestFakeCursorLargeWrite(t *testing.T) {
	t.Parallel()
	const upd = "UPDATE t SET a = a + 1 RETURNING a"
	tests := []struct {
		name     string
		describe fs.Exchange
		says     string
	}{
		{"writes", describe(upd, false), "it writes, so it is not run again"},
		{"describe fails", fs.Pipeline("", fs.Describe(upd), fs.Close()).Reply(fs.HTTPError(500, "Internal Error")),
			"asking whether it writes failed: libsql: HTTP 500 Internal Server Error: Internal Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, tooLargeAuto(upd), tt.describe)
			db := openDB(t, srv, "")
			_, err := db.Query(upd)
			wantErr(t, err, nil, nil, "RESPONSE_TOO_LARGE", tt.says)
			if e := asError(t, err); e.Code != "RESPONSE_TOO_LARGE" || e.SafeToRetry() {
				t.Errorf("error %+v", e)
			}
			if srv.CountPath("/v3/cursor") != 0 {
				t.Error("the write ran again through a cursor")
			}
		})
	}
}

// Failures while a cursor streams surface from rows.Err (or from Query, for
// a cursor that fails before its first step begins); the cursor's stream
// is closed whenever it holds a baton.
func TestFakeCursorErrors(t *testing.T) {
	t.Parallel()
	c1 := fs.Baton(1)
	sb := fs.StepBegin(0, bigCols...)
	tests := []struct {
		name     string
		reply    fs.Reply
		params   string
		close    bool   // the stream is closed afterwards
		queryErr bool   // Query itself fails
		rows     int    // rows read before the failure
		has      string // in the error
		is       []error
	}{
		{"step_error", fs.CursorReply(c1, sb, bigRow(1, "a"), fs.StepError(0, "SQLITE_UNKNOWN", "SQLite error: integer overflow")),
			"", true, false, 1, "integer overflow", nil},
		{"batch error", fs.CursorReply(c1, sb, bigRow(1, "a"), fs.BatchError("SQLITE_BUSY", "SQLite error: database is locked")),
			"", true, false, 1, "database is locked", errs(libsql.ErrBusy)},
		{"truncated", fs.CursorReply(c1, sb, bigRow(1, "a"), bigRow(2, "b")),
			"", true, false, 2, "ended before its last row", nil},
		// PROTOCOL.md §7.2.5: without its terminator the body failed, even
		// after step_end.
		{"no terminator", fs.CursorReply(c1, sb, bigRow(1, "a"), fs.StepEnd()),
			"", true, false, 1, "ended before its last row", nil},
		{"cut", fs.CursorReply(c1, sb, bigRow(1, "a"), fs.Cut()),
			"", true, false, 1, "unexpected EOF", nil},
		{"wrong row", fs.CursorReply(c1, sb, fs.Row(fs.Int(1))),
			"", true, false, 0, "wrong number of values", nil},
		{"second step", fs.CursorReply(c1, sb, bigRow(1, "a"), fs.StepBegin(1), fs.StepEnd(), fs.ReplicationIndex(1)),
			"", true, false, 1, "ended without step_end", nil},
		{"bad line", fs.CursorReply(c1, sb, fs.RawLine(`{"type":"row","row":[{"type":"integer","value":"x"}]}`)),
			"", true, false, 0, "decode", nil},
		{"prepare error", fs.CursorReply(c1, fs.StepError(0, "SQL_INPUT_ERROR", "SQL input error: no such table: big (at offset 22)"), fs.ReplicationIndex(1)),
			"", true, true, 0, "no such table", errs(libsql.ErrSyntax)},
		{"no step_begin", fs.CursorReply(c1, bigRow(1, "a")),
			"", true, true, 0, "did not start with step_begin", nil},
		{"empty body", fs.CursorReply(c1),
			"", true, true, 0, "ended before its last row", nil},
		{"HTTP 500", fs.HTTPError(500, "Internal Error: `SQL string could not be parsed`"),
			"", false, true, 0, "could not be parsed", nil},
		{"slow first line", fs.Delay(2*time.Second, fs.CursorReply(c1, sb)),
			"timeout=150ms", false, true, 0, "deadline", nil},
		{"bad first line", fs.Raw(200, nil, []byte("{\"baton\":5}\n")),
			"", false, true, 0, "decode", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, tooLargeAuto(bigSQL), describe(bigSQL, true),
				fs.Cursor("", fs.Step(fs.SQL(bigSQL))).Reply(tt.reply))
			if tt.close {
				srv.Add(closeStream(c1))
			}
			db := openDB(t, srv, tt.params)
			rows, err := db.Query(bigSQL)
			if tt.queryErr {
				wantErr(t, err, tt.is, nil, tt.has)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := countRows(rows)
			wantErr(t, rows.Err(), tt.is, nil, tt.has)
			if n != tt.rows {
				t.Errorf("%d rows before the failure, want %d", n, tt.rows)
			}
		})
	}
}

// Rows closed before the end cut the cursor off and close its stream.
func TestFakeCursorClosedEarly(t *testing.T) {
	t.Parallel()
	c1 := fs.Baton(1)
	srv := fs.New(t, tooLargeAuto(bigSQL), describe(bigSQL, true),
		fs.Cursor("", fs.Step(fs.SQL(bigSQL))).Stream(c1, fs.StepBegin(0, bigCols...), bigRow(1, "a"), bigRow(2, "b"),
			fs.Pause(10*time.Second), fs.StepEnd(), fs.ReplicationIndex(1)),
		closeStream(c1))
	db := openDB(t, srv, "")
	rows, err := db.Query(bigSQL)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	start := time.Now()
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close waited %v for the rest of the body", d)
	}
}

// Inside a transaction the cursor runs on the transaction's stream, whose
// baton moves on with the cursor's; a statement while rows still stream
// ends them; a cursor error that loses the transaction is seen by Commit.
func TestFakeCursorInTx(t *testing.T) {
	t.Parallel()
	b1, b2, c3, b4 := fs.Baton(1), fs.Baton(2), fs.Baton(3), fs.Baton(4)
	first := begin(b1, fs.SQL("DELETE FROM u"), fs.Updated(1))
	large := fs.Pipeline(b1, fs.Execute(fs.SQL(bigSQL))).Respond(b2, fs.Fail("RESPONSE_TOO_LARGE", tooLarge))
	cursor := fs.Cursor(b2, fs.Step(fs.SQL(bigSQL)))
	startTx := func(t *testing.T, srv *fs.Server) (*sql.Tx, *sql.Rows) {
		t.Helper()
		db := openDB(t, srv, "readYourWrites=0") // the cursor's index would ride on later requests; see replication_test.go
		tx := mustBegin(t, db, nil)
		mustExec(t, tx, "DELETE FROM u")
		rows, err := tx.Query(bigSQL)
		if err != nil {
			t.Fatal(err)
		}
		return tx, rows
	}
	t.Run("commit", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, first, large, describe(bigSQL, true),
			cursor.Stream(c3, fs.StepBegin(0, bigCols...), bigRow(1, "a"), fs.StepEnd(), fs.ReplicationIndex(1)),
			finish(c3, "COMMIT"))
		tx, rows := startTx(t, srv)
		wantRows(t, rows, 1)
		mustCommit(t, tx)
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, first, large, describe(bigSQL, true),
			// The next statement waits for the cursor's answer to end
			// (PROTOCOL.md §4.4: fakesqld fails a request on a busy stream).
			cursor.Stream(c3, fs.StepBegin(0, bigCols...), bigRow(1, "a"), fs.Pause(time.Second), fs.StepEnd(), fs.ReplicationIndex(1)),
			inTx(c3, b4, fs.SQL("DELETE FROM v"), fs.Updated(0)),
			finish(b4, "COMMIT"))
		tx, rows := startTx(t, srv)
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		mustExec(t, tx, "DELETE FROM v")
		if rows.Next() {
			t.Error("rows went on after another statement ran on the stream")
		}
		wantErr(t, rows.Err(), nil, nil, "another statement ran")
		rows.Close()
		mustCommit(t, tx)
	})
	t.Run("lost", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, first, large, describe(bigSQL, true),
			cursor.Stream(c3, fs.StepBegin(0, bigCols...), fs.StepError(0, "TRANSACTION_TIMEOUT", "Transaction timed out")),
			closeStream(c3))
		tx, rows := startTx(t, srv)
		for rows.Next() {
		}
		wantErr(t, rows.Err(), errs(libsql.ErrTxLost), nil, "TRANSACTION_TIMEOUT")
		wantErr(t, tx.Commit(), errs(libsql.ErrTxLost), nil)
	})
	// A body without its terminator is fatal for the stream too (PROTOCOL.md
	// §7.2.5): the stream is closed and the transaction cannot commit.
	t.Run("no terminator", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, first, large, describe(bigSQL, true),
			cursor.Stream(c3, fs.StepBegin(0, bigCols...), bigRow(1, "a"), fs.StepEnd()),
			closeStream(c3))
		tx, rows := startTx(t, srv)
		countRows(rows)
		wantErr(t, rows.Err(), nil, nil, "ended before its last row")
		wantErr(t, tx.Commit(), errs(libsql.ErrTxLost), nil)
		srv.Verify()
	})
	t.Run("cursor refused", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t, first, large, describe(bigSQL, true), cursor.Reply(fs.StreamExpired()))
		db := openDB(t, srv, "readYourWrites=0") // the cursor's index would ride on later requests; see replication_test.go
		tx := mustBegin(t, db, nil)
		mustExec(t, tx, "DELETE FROM u")
		_, err := tx.Query(bigSQL)
		wantErr(t, err, errs(libsql.ErrTxLost), nil, "STREAM_EXPIRED")
		mustRollback(t, tx)
	})
}

// While a streamed result is read inside a transaction, the driver reads
// the body ahead, and once it is in (never while the cursor request is in
// flight: PROTOCOL.md §4.4; transport/http's TestCursorHeldKeepAlive
// pauses a body) touches the stream every 4 s with a get_autocommit on the
// cursor's baton (sqld starts the stream's 10 s expiry when the response
// starts), and goes on with the baton the touch got back: here the
// transaction commits on it.
func TestFakeCursorKeepAlive(t *testing.T) {
	t.Parallel()
	b1, b2, c3, k4 := fs.Baton(1), fs.Baton(2), fs.Baton(3), fs.Baton(4)
	srv := fs.New(t, begin(b1, fs.SQL("DELETE FROM u"), fs.Updated(1)),
		fs.Pipeline(b1, fs.Execute(fs.SQL(bigSQL))).Respond(b2, fs.Fail("RESPONSE_TOO_LARGE", tooLarge)),
		describe(bigSQL, true),
		fs.Cursor(b2, fs.Step(fs.SQL(bigSQL))).Stream(c3,
			fs.StepBegin(0, bigCols...), bigRow(1, "a"), bigRow(2, "b"), fs.StepEnd(), fs.ReplicationIndex(1)),
		fs.Pipeline(c3, fs.GetAutocommit()).Respond(k4, fs.GetAutocommitOK(false)), // the touch
		finish(k4, "COMMIT"),
	)
	db := openDB(t, srv, "")
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, "DELETE FROM u")
	rows, err := tx.Query(bigSQL)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	// A slow reader: past the 4 s interval, with the body in.
	for deadline := time.Now().Add(6 * time.Second); srv.Count() < 5; {
		if time.Now().After(deadline) {
			t.Fatal("no touch while the rows were read")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := srv.Requests()[4].Time.Sub(srv.Requests()[3].Time); d < 3*time.Second {
		t.Errorf("the touch came %v after the cursor, want about 4 s", d)
	}
	wantRows(t, rows, 1) // the second row; the first was read above
	mustCommit(t, tx)
	srv.Verify()
}

// A server without Hrana 3 (POST /v3/pipeline is 404) gets /v2/pipeline
// from the first request on, and a too large result cannot be streamed
// there.
func TestFakeCursorHrana2(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"))).Reply(fs.NotFound()),
		auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))).At("/v2/pipeline"),
		tooLargeAuto(bigSQL).At("/v2/pipeline"),
		describe(bigSQL, true).At("/v2/pipeline"))
	db := openDB(t, srv, "")
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("%d, %v", one, err)
	}
	_, err := db.Query(bigSQL)
	wantErr(t, err, nil, nil, "does not support Hrana 3 cursors")
}

// A transaction whose first statement is a query too large to answer: the
// batch [BEGIN, query] fails as a whole and its stream is closed (undoing
// the BEGIN), so the driver begins again on its own and streams the rows
// through a cursor inside the transaction.
func TestFakeCursorFirstInTx(t *testing.T) {
	t.Parallel()
	b1, b2, c3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
	srv := fs.New(t, fs.Pipeline("", beginBatch(fs.SQL(bigSQL))).Respond(b1, fs.Fail("RESPONSE_TOO_LARGE", tooLarge)),
		closeStream(b1),
		describe(bigSQL, true),
		begin(b2, fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))),
		fs.Cursor(b2, fs.Step(fs.SQL(bigSQL))).Stream(c3, fs.StepBegin(0, bigCols...), bigRow(1, "a"), bigRow(2, "b"), fs.StepEnd(), fs.ReplicationIndex(1)),
		finish(c3, "COMMIT"))
	db := openDB(t, srv, "readYourWrites=0") // the cursor's index would ride on later requests; see replication_test.go
	tx := mustBegin(t, db, nil)
	rows, err := tx.Query(bigSQL)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows, 2)
	mustCommit(t, tx)
}
