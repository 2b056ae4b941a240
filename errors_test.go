package libsql_test

// The errors calls return against the scripted fake, as the application
// sees them: their classes, SafeToRetry, the token never shown, and
// driver.ErrBadConn. A request that certainly never left the process (the
// dial was refused) outside a transaction fails with an error matching
// driver.ErrBadConn, so that database/sql retries it on a fresh
// connection; inside a transaction (and for requests that may have reached
// the server) it must not.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// dialScript counts the dials of the http.Transport newDialScript returns.
type dialScript struct {
	mu sync.Mutex
	n  int
}

// newDialScript returns an http.Transport that dials the fake server,
// except for the dials (numbered from 1) that refuse says to refuse, which
// go to a port that refuses connections; it keeps no idle connections, so
// every request dials.
func newDialScript(t *testing.T, refuse func(dial int) bool) (*dialScript, http.RoundTripper) {
	d := &dialScript{}
	refusedAddr := strings.TrimPrefix(fs.RefusedURL(t), "http://")
	var dialer net.Dialer
	return d, &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d.mu.Lock()
			d.n++
			if refuse(d.n) {
				addr = refusedAddr
			}
			d.mu.Unlock()
			return dialer.DialContext(ctx, network, addr)
		},
	}
}

// refusing is newDialScript's refuse for the dials numbered ns.
func refusing(ns ...int) func(int) bool {
	return func(dial int) bool { return slices.Contains(ns, dial) }
}

// refusingAfter is newDialScript's refuse for every dial after the first ok.
func refusingAfter(ok int) func(int) bool {
	return func(dial int) bool { return dial > ok }
}

// dials is the number of dials so far.
func (d *dialScript) dials() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Outside a transaction, a refused dial is driver.ErrBadConn, with the
// cause in the message, whatever the call.
func TestFakeBadConnRefused(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		db := openURL(t, refusedURL(t, tp), "")
		calls := map[string]func() error{
			"Exec":  func() error { _, err := db.Exec("INSERT INTO t VALUES (1)"); return err },
			"Query": func() error { _, err := db.Query("SELECT 1"); return err },
			"Ping":  func() error { return db.Ping() },
			"prepared": func() error {
				st, err := db.Prepare("SELECT ?")
				if err != nil {
					return err
				}
				defer st.Close()
				_, err = st.Query(1)
				return err
			},
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, driver.ErrBadConn) {
				t.Errorf("%s: %v does not match driver.ErrBadConn", name, err)
			}
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("%s: error %v does not name its cause", name, err)
			}
			// What happened, in the user's terms: no internal step names.
			if err != nil && (!strings.HasPrefix(err.Error(), "libsql: cannot connect to the server: dial tcp ")) {
				t.Errorf("%s: error %q, want \"libsql: cannot connect to the server: dial tcp ...\"", name, err)
			}
		}
		// The driver's own connection says the same to database/sql.
		c := driverConn(t, refusedURL(t, tp), nil)
		_, err := c.(driver.ExecerContext).ExecContext(bg, "DELETE FROM t", nil)
		if !errors.Is(err, driver.ErrBadConn) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("driver.Conn ExecContext: %v", err)
		}
	})
}

// database/sql retries a refused request on a fresh connection: the caller
// sees success, after one dial more.
// HTTP only: the dials are scripted through WithRoundTripper.
func TestFakeBadConnRetried(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, auto(fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)))
	dials, rt := newDialScript(t, refusing(1))
	db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(rt))
	if _, err := db.Exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("a refused request was not retried: %v", err)
	}
	if dials.dials() != 2 {
		t.Errorf("%d dials, want 2 (one refused)", dials.dials())
	}
}

// Inside a transaction a refused request is never driver.ErrBadConn:
// database/sql cannot move a transaction to another connection.
// HTTP only: the dials are scripted through WithRoundTripper.
func TestFakeBadConnNotInTx(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	first := begin(b1, fs.SQL("DELETE FROM t"), fs.Updated(1))
	type step func(tx *sql.Tx) error
	cases := []struct {
		name   string
		script []fs.Exchange
		refuse []int // dial numbers refused
		cfg    func(*libsql.Config)
		steps  []step // the last one must fail with a refused dial
	}{
		{"first statement", nil, []int{1}, nil,
			[]step{func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err }}},
		{"later statement", []fs.Exchange{first}, []int{2, 3}, nil,
			[]step{
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err },
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM u"); return err },
			}},
		{"commit", []fs.Exchange{first}, []int{2, 3}, nil,
			[]step{
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err },
				func(tx *sql.Tx) error { return tx.Commit() },
			}},
		{"rollback", []fs.Exchange{first}, []int{2, 3}, nil,
			[]step{
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err },
				func(tx *sql.Tx) error { return tx.Rollback() },
			}},
		{"deferred commit", nil, []int{1}, func(c *libsql.Config) { c.DeferredExec = true },
			[]step{
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err },
				func(tx *sql.Tx) error { return tx.Commit() },
			}},
		{"deferred flush", nil, []int{1}, func(c *libsql.Config) { c.DeferredExec = true },
			[]step{
				func(tx *sql.Tx) error { _, err := tx.Exec("DELETE FROM t"); return err },
				func(tx *sql.Tx) error { _, err := tx.Query("SELECT 1"); return err },
			}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, tt.script...)
			_, rt := newDialScript(t, refusing(tt.refuse...))
			cfg := fakeConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			db := connectorDB(t, srv.URL, cfg, libsql.WithRoundTripper(rt))
			tx := mustBegin(t, db, nil)
			defer func() { _ = tx.Rollback() }()
			for i, s := range tt.steps {
				err := s(tx)
				if i < len(tt.steps)-1 {
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					continue
				}
				if err == nil {
					t.Fatal("no error from a refused request")
				}
				if errors.Is(err, driver.ErrBadConn) {
					t.Errorf("inside a transaction: %v matches driver.ErrBadConn", err)
				}
				if !strings.Contains(err.Error(), "refused") {
					t.Errorf("error %v does not name its cause", err)
				}
			}
		})
	}

}

// Requests that may have reached the server are never driver.ErrBadConn,
// and database/sql does not send them again (the script has room for one).
func TestFakeBadConnNotAfterSending(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		for _, tt := range []struct {
			name   string
			reply  fs.Reply
			params string
		}{
			{"connection closed", fs.Drop(), ""},
			{"HTTP 503", fs.HTTPError(503, "Replicator exited"), ""},
			{"HTTP 500", fs.HTTPError(500, "Internal Error"), ""},
			{"timeout", fs.Hang(), "timeout=150ms"},
		} {
			if tp == overWS && !tt.reply.OverWS() {
				continue // an HTTP status has no WebSocket form
			}
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, fs.Pipeline("", fs.Execute(fs.SQL("INSERT INTO t VALUES (1)")), fs.Close()).Reply(tt.reply))
				db := openDB(t, srv, tt.params)
				_, err := db.Exec("INSERT INTO t VALUES (1)")
				if err == nil || errors.Is(err, driver.ErrBadConn) {
					t.Errorf("error %v: want one that does not match driver.ErrBadConn", err)
				}
			})
		}
	})
}

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

// A connection refused, through a caller's RoundTripper:
// outside a transaction the error is safe; in a transaction that has begun,
// the statement loses it.
func TestFakeConnRefusedLater(t *testing.T) {
	t.Parallel()
	t.Run("autocommit", func(t *testing.T) {
		t.Parallel()
		srv := fs.New(t)
		_, rt := newDialScript(t, refusingAfter(0))
		db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(rt))
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
		_, rt := newDialScript(t, refusingAfter(1))
		db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(rt))
		secondFails(t, db, "DELETE FROM t", "DELETE FROM u", errs(libsql.ErrTxLost), "refused")
	})
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
