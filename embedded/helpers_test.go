package embedded_test

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/embedded/internal/readloop"
)

// testCtx returns a context that ends with the test, bounded.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// primaryDB opens the primary directly through the driver.
func primaryDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(libsql.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// replica is an embedded Connector and its *sql.DB.
type replica struct {
	c    *embedded.Connector
	db   *sql.DB
	path string
}

// openReplica opens a replica at path (a new one in a temporary
// directory if path is "") of the primary at dsn.
func openReplica(t testing.TB, path, dsn string, opts ...embedded.Option) *replica {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "replica.db")
	}
	c, err := embedded.NewConnector(path, dsn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	r := &replica{c: c, db: db, path: path}
	t.Cleanup(r.close)
	return r
}

func (r *replica) close() {
	r.db.Close()
	r.c.Close()
}

func (r *replica) sync(t testing.TB) embedded.Replicated {
	t.Helper()
	res, err := r.c.Sync(testCtx(t))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.ExecContext(testCtx(t), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// one returns the single value of a query.
func one[T any](t testing.TB, db *sql.DB, q string, args ...any) T {
	t.Helper()
	var v T
	if err := db.QueryRowContext(testCtx(t), q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// fill inserts n rows into a new table name (id, v) on the primary, in
// one statement.
func fill(t testing.TB, db *sql.DB, name string, n int) {
	t.Helper()
	mustExec(t, db, "CREATE TABLE "+name+" (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
	mustExec(t, db, `INSERT INTO `+name+` (id, v, n)
		WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < ?)
		SELECT x, printf('row-%08d', x), x * 3 FROM g`, n)
}

// localFile opens the replica's file directly with modernc.org/sqlite,
// read-only.
func localFile(t testing.TB, path string) *sql.DB {
	t.Helper()
	return localFileKey(t, path, "")
}

// localFileKey is localFile of a replica encrypted under key ("": in the
// clear), through the replica's own read-only connections (the encrypting
// VFS, and libSQL's schema, a vector index included).
func localFileKey(t testing.TB, path, key string) *sql.DB {
	t.Helper()
	if key == "" {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	k, err := encrypt.Load(path, key, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close) // after the db's Close, registered below
	db, err := localdb.OpenReaders(path, 1, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// logRecorder is a slog.Handler that keeps the messages logged.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// count returns how many messages contain s.
func (l *logRecorder) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// bank is the table of the torn-read tests: accounts whose total only
// transfers between them move, so every consistent read sees the same sum.
type bank struct{ rows, each int64 }

// newBank creates the accounts on the primary, each with a padding that
// spreads them over many pages.
func newBank(t testing.TB, prim *sql.DB) bank {
	b := bank{rows: 50, each: 1000}
	mustExec(t, prim, "CREATE TABLE acct (id INTEGER PRIMARY KEY, bal INTEGER NOT NULL, pad TEXT)")
	mustExec(t, prim, `INSERT INTO acct WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < ?)
		SELECT x, ?, printf('%.*c', 800, 'p') FROM g`, b.rows, b.each)
	return b
}

// transfer moves an amount between two accounts chosen by i, in one
// transaction on db, and rewrites the padding of one of them.
func (b bank) transfer(ctx context.Context, db *sql.DB, i int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	from, to, amt := int64(i)%b.rows+1, int64(i*7+3)%b.rows+1, i%13+1
	if _, err := tx.ExecContext(ctx, "UPDATE acct SET bal = bal - ?, pad = printf('%.*c', 800 + ?, 'q') WHERE id = ?", amt, i%50, from); err != nil {
		tx.Rollback()
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE acct SET bal = bal + ? WHERE id = ?", amt, to); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// watch reads the accounts' count and total on db from n goroutines until
// the returned function is called, which reports how many reads there were
// and how many saw a total other than the bank's.
func (b bank) watch(t testing.TB, db *sql.DB, n int) (stop func() (reads, torn int64)) {
	return readloop.Start(t, n, func() (bool, error) {
		var count, sum int64
		if err := db.QueryRow("SELECT count(*), sum(bal) FROM acct").Scan(&count, &sum); err != nil {
			return false, err
		}
		return count == b.rows && sum == b.rows*b.each, nil
	})
}

// checkSynced checks that the replica's accounts are the primary's, after
// a sync.
func (b bank) checkSynced(t testing.TB, r *replica, prim *sql.DB) {
	t.Helper()
	r.sync(t)
	if got, want := one[int64](t, r.db, "SELECT sum(bal * id) FROM acct"), one[int64](t, prim, "SELECT sum(bal * id) FROM acct"); got != want {
		t.Errorf("after the last sync: %d, primary %d", got, want)
	}
}
