package libsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// A server that refuses connections: every call fails with a safe error
// (the request never left) that names the cause; inside a transaction that
// has not begun, nothing is lost either.
func TestFakeConnRefused(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		db := openURL(t, refusedURL(t, tp), "")
		calls := []struct {
			name string
			call func() error
		}{
			{"Exec", func() error { _, err := db.Exec("INSERT INTO t VALUES (1)"); return err }},
			{"Query", func() error { _, err := db.Query("SELECT 1"); return err }},
			{"Ping", func() error { return db.Ping() }},
			{"tx Exec", func() error {
				tx, err := db.Begin()
				if err != nil {
					return err
				}
				defer func() {
					if err := tx.Rollback(); err != nil {
						t.Errorf("Rollback after a refused first statement: %v", err)
					}
				}()
				_, err = tx.Exec("INSERT INTO t VALUES (1)")
				return err
			}},
		}
		for _, c := range calls {
			err := c.call()
			wantErr(t, err, nil, errs(libsql.ErrTxLost), "refused")
			if e := asError(t, err); !e.SafeToRetry() || e.HTTPStatus != 0 {
				t.Errorf("%s: error %+v: want SafeToRetry and no HTTP status", c.name, e)
			}
		}
	})
}

// refusingTransport dials the fake server for the first `ok` connections
// and a port that refuses connections after that; it keeps no idle
// connections, so every request dials.
func refusingTransport(t *testing.T, srv *fs.Server, ok int32) http.RoundTripper {
	refused := strings.TrimPrefix(fs.RefusedURL(t), "http://")
	var n atomic.Int32
	var d net.Dialer
	return &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if n.Add(1) > ok {
				addr = refused
			}
			return d.DialContext(ctx, network, addr)
		},
	}
}

// A connection refused, through a caller's RoundTripper:
// outside a transaction the error is safe; in a transaction that has begun,
// the statement loses it.
func TestFakeConnRefusedLater(t *testing.T) {
	t.Parallel()
	t.Run("autocommit", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t)
		db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(refusingTransport(t, srv, 0)))
		_, err := db.Exec("DELETE FROM t")
		wantErr(t, err, nil, errs(libsql.ErrTxLost), "refused")
		if !asError(t, err).SafeToRetry() {
			t.Error("a refused connection is not SafeToRetry")
		}
	})
	t.Run("transaction", func(t *testing.T) {
		t.Parallel()
		b1 := fs.Baton(1)
		srv := fs.New(t, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(1)))
		db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(refusingTransport(t, srv, 1)))
		tx, _ := db.Begin()
		if _, err := tx.Exec("DELETE FROM t"); err != nil {
			t.Fatal(err)
		}
		_, err := tx.Exec("DELETE FROM u")
		wantErr(t, err, errs(libsql.ErrTxLost), nil, "refused")
		if err := tx.Rollback(); err != nil {
			t.Errorf("Rollback: %v", err)
		}
	})
}

// connectorDB opens a database through NewConnector.
func connectorDB(t *testing.T, url string, cfg *libsql.Config, opts ...libsql.ConnectorOption) *sql.DB {
	t.Helper()
	if cfg == nil {
		cfg = fakeConfig()
	}
	cfg.URL = url
	cn, err := libsql.NewConnector(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// A server that closes the connection after reading the request: the
// request may have run, so the error is not safe to retry.
func TestFakeConnDropped(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		t.Run("statement", func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL("INSERT INTO t VALUES (1)")), fs.Close()).Reply(fs.Drop()))
			db := openDB(t, srv, "")
			_, err := db.Exec("INSERT INTO t VALUES (1)")
			has := "request failed"
			if tp == overWS {
				has = "the server closed the connection while the request was in flight"
			}
			wantErr(t, err, nil, errs(libsql.ErrTxLost), has)
			if asError(t, err).SafeToRetry() {
				t.Error("a request the server read is SafeToRetry")
			}
		})
	})
}

// HTTP errors: sqld's three body shapes, classified by status.
func TestFakeConnHTTPClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply fs.Reply
		is    []error
		isNot []error
		has   string
		code  string
		safe  bool
	}{
		{"401", fs.HTTPError(401, "Unauthorized: `The JWT is invalid`"), errs(libsql.ErrAuth), errs(libsql.ErrPermission), "The JWT is invalid", "", false},
		{"403", fs.HTTPError(403, "Authorization forbidden: Current session doesn't not have Write permission to namespace default"),
			errs(libsql.ErrPermission), errs(libsql.ErrAuth), "Write permission", "", false},
		// A 404 ran nothing (PROTOCOL.md §9.3); the request goes again to
		// /v2/pipeline (the server may speak only Hrana 2), and the first
		// answer is the error when that is 404 too.
		{"404 empty", fs.NotFound(), errs(libsql.ErrNotFound), nil, "Not Found", "", true},
		{"404 namespace", fs.HTTPError(404, "Namespace `mydb` doesn't exist"), errs(libsql.ErrNotFound), nil, "doesn't exist", "", true},
		{"429", fs.TooManyRequests("Too many concurrent requests", "60"), errs(libsql.ErrTooManyRequests), nil, "Too many concurrent requests", "", true},
		{"503", fs.HTTPError(503, "Replicator exited"), errs(libsql.ErrTooManyRequests), nil, "Replicator exited", "", false},
		{"500", fs.HTTPError(500, "invalid utf-8 sequence of 1 bytes from index 0"), nil, errs(libsql.ErrTooManyRequests), "invalid utf-8", "", false},
		{"400 text", fs.ProtocolError("Cannot deserialize client message from JSON: unknown variant `open_stream`"), nil, nil, "unknown variant", "", false},
		// sqld checks the baton before anything else: an expired stream ran
		// nothing.
		{"400 expired", fs.StreamExpired(), nil, errs(libsql.ErrTxLost), "expired", "STREAM_EXPIRED", true},
		{"502 html", fs.Raw(502, http.Header{"Content-Type": {"text/html"}}, []byte("<html>bad gateway</html>")), nil, nil, "Bad Gateway", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := fs.Pipeline("", fs.Execute(fs.SQL("SELECT 1")), fs.Close())
			srv := fs.New(t, req.Reply(tt.reply))
			if strings.HasPrefix(tt.name, "404") {
				srv.Add(req.At("/v2/pipeline").Reply(fs.NotFound()))
			}
			db := openDB(t, srv, "")
			_, err := db.Query("SELECT 1")
			wantErr(t, err, tt.is, tt.isNot, tt.has)
			e := asError(t, err)
			if e.HTTPStatus == 0 || e.Code != tt.code || e.SafeToRetry() != tt.safe {
				t.Errorf("error %+v: want an HTTP status, code %q, SafeToRetry %v", e, tt.code, tt.safe)
			}
		})
	}
}

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
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	srv.Verify()
}

// The token travels in the Authorization header of every pipeline and
// never in an error, even when an error page echoes it.
func TestFakeConnTokenRedacted(t *testing.T) {
	t.Parallel()
	const tok = "eyJhbGciOiJFZERTQSJ9.eyJhIjoicnciLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJl"
	tests := []struct {
		name  string
		reply fs.Reply
	}{
		{"text", fs.ProtocolError("bad request; headers were: Authorization: Bearer " + tok)},
		{"json error", fs.HTTPError(401, "Unauthorized: `token "+tok+" is invalid`")},
		{"json message and code", fs.JSON(400, `{"message":"token `+tok+`","code":"`+tok+`"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL("SELECT 1")), fs.Close()).WithHeader("Authorization", "Bearer "+tok).Reply(tt.reply))
			db := openDB(t, srv, "authToken="+tok)
			_, err := db.Query("SELECT 1")
			if err == nil {
				t.Fatal("no error")
			}
			if msg := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(msg, tok) || strings.Contains(msg, tok[10:30]) {
				t.Errorf("the token is in the error: %s", msg)
			}
			if !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("error %q does not show where the token was", err)
			}
		})
	}
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
			tx, _ := db.Begin()
			if _, err := tx.Exec(script); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("BEGIN for a sequence fails", func(t *testing.T) {
			t.Parallel()
			httpOnly(t, tp, "the failure is an HTTP status")
			b1 := fs.Baton(1)
			srv := newFake(t, tp, fs.Pipeline("", beginBatch(fs.SQL(script))).Respond(b1, many),
				closeStream(b1),
				fs.Pipeline("", beginBatch(fs.SQL("SELECT 1"))).Reply(fs.HTTPError(503, "Replicator exited")))
			db := openDB(t, srv, "")
			tx, _ := db.Begin()
			_, err := tx.Exec(script)
			wantErr(t, err, errs(libsql.ErrTooManyRequests), nil, "Replicator exited")
			if err := tx.Rollback(); err != nil {
				t.Error(err)
			}
		})
		t.Run("sequence request fails", func(t *testing.T) {
			t.Parallel()
			httpOnly(t, tp, "WebSocket streams do not expire")
			b1, b2 := fs.Baton(1), fs.Baton(2)
			srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(0)),
				fs.Pipeline(b1, fs.Execute(fs.SQL(script))).Respond(b2, many),
				fs.Pipeline(b2, fs.Sequence(script)).Reply(fs.StreamExpired()))
			db := openDB(t, srv, "")
			tx, _ := db.Begin()
			if _, err := tx.Exec("DELETE FROM t"); err != nil {
				t.Fatal(err)
			}
			_, err := tx.Exec(script)
			wantErr(t, err, errs(libsql.ErrTxLost), nil, "STREAM_EXPIRED")
			if err := tx.Rollback(); err != nil {
				t.Error(err)
			}
		})
		t.Run("transaction lost in a sequence", func(t *testing.T) {
			t.Parallel()
			b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
			srv := newFake(t, tp, begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(0)),
				fs.Pipeline(b1, fs.Execute(fs.SQL(script))).Respond(b2, many),
				fs.Pipeline(b2, fs.Sequence(script)).Respond(b3, fs.Fail("TRANSACTION_TIMEOUT", "Transaction timed out")),
				closeStream(b3))
			db := openDB(t, srv, "")
			tx, _ := db.Begin()
			if _, err := tx.Exec("DELETE FROM t"); err != nil {
				t.Fatal(err)
			}
			_, err := tx.Exec(script)
			wantErr(t, err, errs(libsql.ErrTxLost), nil, "TRANSACTION_TIMEOUT")
			if err := tx.Rollback(); err != nil {
				t.Error(err)
			}
		})
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
			req := fs.Pipeline("", fs.Execute(fs.SQL("SELECT 1")), fs.Close())
			srv := fs.New(t, req.Reply(tt.reply))
			if strings.HasPrefix(tt.name, "404") {
				srv.Add(req.At("/v2/pipeline").Reply(fs.NotFound()))
			}
			db := openDB(t, srv, "")
			_, err := db.Query("SELECT 1")
			wantErr(t, err, nil, nil, tt.has)
		})
	}
}

// Values come back typed by SQLite type and declared column type;
// arguments go out as sqld binds them (named parameters by name, from
// sql.Named or by position).
func TestFakeConnValuesAndArgs(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		cols := []fs.Col{{Name: "i", Decltype: "INTEGER"}, {Name: "f", Decltype: "REAL"}, {Name: "s", Decltype: "TEXT"},
			{Name: "b", Decltype: "BLOB"}, {Name: "n"}, {Name: "d", Decltype: "date"}, {Name: "ts", Decltype: "TIMESTAMP"}, {Name: "inf"}}
		row := fs.Vals(fs.Int(-5), fs.Float(2.5), fs.Text("héllo"), fs.Blob([]byte{0, 1, 0xff}), fs.Null(),
			fs.Text("2024-01-02"), fs.Text("not a time"), fs.Float(math.Inf(1)))
		when := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
		srv := newFake(t, tp, auto(fs.SQL("SELECT * FROM v WHERE i = ? AND s = ?", fs.Int(-5), fs.Text("héllo")), fs.Query(cols, row)),
			auto(fs.SQL("INSERT INTO t VALUES (:a, @b, $c)").Named(":a", fs.Int(1)).Named("@b", fs.Float(0.5)).Named("$c", fs.Null()), fs.Inserted(1, 9)),
			auto(fs.SQL("INSERT INTO t VALUES (:a, :b)").Named("a", fs.Blob([]byte("x"))).Named("b", fs.Text("2024-01-02 03:04:05.0000006")), fs.Inserted(1, 10)),
			auto(fs.SQL("UPDATE t SET a = ?2 WHERE b = ?1", fs.Int(1), fs.Int(1)), fs.Updated(3)),
		)
		db := openDB(t, srv, "")
		rows, err := db.Query("SELECT * FROM v WHERE i = ? AND s = ?", -5, "héllo")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cts, _ := rows.ColumnTypes()
		var scan []string
		for _, ct := range cts {
			scan = append(scan, fmt.Sprint(ct.ScanType()))
		}
		if got := strings.Join(scan, " "); got != "int64 float64 string []uint8 interface {} time.Time time.Time interface {}" {
			t.Errorf("scan types %s", got)
		}
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		var vals [8]any
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		want := []any{int64(-5), 2.5, "héllo", []byte{0, 1, 0xff}, nil, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), "not a time", math.NaN()} // JSON null float: PROTOCOL.md §8.2
		if fmt.Sprintf("%#v", vals[:]) != fmt.Sprintf("%#v", want) {
			t.Errorf("values\n got %#v\nwant %#v", vals[:], want)
		}
		if rows.Next() {
			t.Error("a second row")
		}
		rows.Close()
		if _, err := db.Exec("INSERT INTO t VALUES (:a, @b, $c)", 1, float32(0.5), nil); err != nil {
			t.Fatal(err)
		}
		if r, err := db.Exec("INSERT INTO t VALUES (:a, :b)", sql.Named("a", []byte("x")), sql.Named("b", when), sql.Named("unused", 1)); err != nil {
			t.Fatal(err)
		} else if id, _ := r.LastInsertId(); id != 10 {
			t.Errorf("LastInsertId %d", id)
		}
		if r, err := db.Exec("UPDATE t SET a = ?2 WHERE b = ?1", true, uint8(1)); err != nil {
			t.Fatal(err)
		} else if n, _ := r.RowsAffected(); n != 3 {
			t.Errorf("RowsAffected %d", n)
		}
		// Refused before anything is sent.
		n := srv.Count()
		for _, bad := range []struct {
			sql  string
			args []any
		}{
			{"SELECT ?, :a", []any{1, 2}},
			{"SELECT :a", []any{1, sql.Named("a", 2)}},
			{"SELECT :a, :b", []any{1}},
			{"SELECT ?", []any{math.Inf(1)}}, // JSON cannot carry it
			{"SELECT ?", []any{uint64(math.MaxUint64)}},
			{"SELECT ?", []any{"\xff"}},
		} {
			if _, err := db.Exec(bad.sql, bad.args...); err == nil {
				t.Errorf("Exec %s %v: no error", bad.sql, bad.args)
			}
			if _, err := db.Query(bad.sql, bad.args...); err == nil {
				t.Errorf("Query %s %v: no error", bad.sql, bad.args)
			}
		}
		if srv.Count() != n {
			t.Errorf("refused arguments sent %d requests", srv.Count()-n)
		}
	})
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

// Connectors: options, redaction, and what they send (nothing until used).
// HTTP only: compression and its headers are HTTP's.
func TestFakeConnConnector(t *testing.T) {
	t.Parallel()
	if _, err := libsql.NewConnector(nil); err == nil {
		t.Error("NewConnector(nil) succeeded")
	}
	bad := fakeConfig()
	bad.URL = "ftp://x"
	if _, err := libsql.NewConnector(bad); err == nil {
		t.Error("an ftp URL was accepted")
	}
	srv := fs.New(t, auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))).WithHeader("Accept-Encoding", "gzip"),
		auto(fs.SQL("SELECT 2"), fs.Query(fs.Cols("2"), fs.Vals(fs.Int(2)))).WithHeader("Accept-Encoding", "identity"))
	cfg := fakeConfig()
	cfg.URL = srv.URL
	cfg.AuthToken = "s3cret-token-value"
	cfg.Compression = "gzip"
	cn, err := libsql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{cn.String(), cn.GoString(), fmt.Sprintf("%v %+v %#v %s", cn, cn, cn, cn)} {
		if strings.Contains(s, cfg.AuthToken) || !strings.Contains(s, "[REDACTED]") {
			t.Errorf("connector shown as %s", s)
		}
	}
	if _, ok := cn.Driver().(*libsql.Driver); !ok {
		t.Error("Driver is not the libsql driver")
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := cn.Connect(ctx); err == nil {
		t.Error("Connect with an ended context succeeded")
	}
	db := sql.OpenDB(cn)
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// compression=none, through the DSN; auto on loopback is none too.
	db2 := openDB(t, srv, "compression=none")
	if err := db2.QueryRow("SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}

}

// codec=auto asks for Protobuf first; a server that answers
// /v3-protobuf/pipeline 404 gets the same request in JSON, and every later
// one in JSON at once.
func TestFakeConnAutoCodecFallsBack(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, fs.Expect(http.MethodPost, "/v3-protobuf/pipeline").Reply(fs.NotFound()),
		auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))),
		auto(fs.SQL("SELECT 2"), fs.Query(fs.Cols("2"), fs.Vals(fs.Int(2)))))
	db, err := sql.Open("libsql", srv.URL+"?codec=auto&keepStreams=0")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"SELECT 1", "SELECT 2"} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if srv.Count() != 3 {
		t.Fatalf("%d requests, want 3", srv.Count())
	}
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
	defer c.Close()
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
	tx, err := c.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE t SET a = 1"); err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare("DELETE FROM t WHERE a = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Exec(1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
