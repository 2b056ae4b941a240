package libsql_test

// Tests for a behaviour the driver's refactor adds: a request that
// certainly never left the process (the dial was refused) outside a
// transaction fails with an error matching driver.ErrBadConn, so that
// database/sql retries it on a fresh connection; inside a transaction (and
// for requests that may have reached the server) it must not.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// dialScript is an http.Transport that dials the fake server, except for
// the dials whose numbers (from 1) are refused; it keeps no idle
// connections, so every request dials.
type dialScript struct {
	mu      sync.Mutex
	n       int
	refused map[int]bool
}

func newDialScript(t *testing.T, refuse ...int) (*dialScript, http.RoundTripper) {
	d := &dialScript{refused: map[int]bool{}}
	for _, n := range refuse {
		d.refused[n] = true
	}
	refusedAddr := strings.TrimPrefix(fs.RefusedURL(t), "http://")
	var dialer net.Dialer
	return d, &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d.mu.Lock()
			d.n++
			if d.refused[d.n] {
				addr = refusedAddr
			}
			d.mu.Unlock()
			return dialer.DialContext(ctx, network, addr)
		},
	}
}

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
	for _, tt := range []struct {
		name   string
		refuse int
	}{{"statement", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fs.New(t, auto(fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)))
			dials, rt := newDialScript(t, tt.refuse)
			db := connectorDB(t, srv.URL, nil, libsql.WithRoundTripper(rt))
			if _, err := db.Exec("INSERT INTO t VALUES (1)"); err != nil {
				t.Fatalf("a refused request was not retried: %v", err)
			}
			if dials.dials() != 2 {
				t.Errorf("%d dials, want 2 (one refused)", dials.dials())
			}
		})
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
			_, rt := newDialScript(t, tt.refuse...)
			cfg := fakeConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			db := connectorDB(t, srv.URL, cfg, libsql.WithRoundTripper(rt))
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
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
