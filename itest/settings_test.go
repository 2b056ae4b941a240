package itest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// foreignKeys reads PRAGMA foreign_keys on q.
func foreignKeys(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) int {
	t.Helper()
	var on int
	require.NoError(t, q.QueryRowContext(t.Context(), "PRAGMA foreign_keys").Scan(&on))
	return on
}

// TestSettingsPersist: over HTTP every autocommit statement runs on a new
// server stream, yet a PRAGMA set on a connection holds for its later
// statements and transactions (the driver replays it at the head of each
// new stream). The GORM AlterColumn sequence (foreign keys off, then a
// transaction that rebuilds a referenced table) works because of it, and
// fails with foreign keys on.
func TestSettingsPersist(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		parent := freshTable(t, db, "fk_parent", "(id INTEGER PRIMARY KEY, name TEXT)")
		child := freshTable(t, db, "fk_child", fmt.Sprintf("(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES %s(id))", parent))
		mustExec(t, db, "INSERT INTO "+parent+" (id, name) VALUES (1, 'a')")
		mustExec(t, db, "INSERT INTO "+child+" (id, parent_id) VALUES (1, 1)")

		conn, err := db.Conn(t.Context())
		require.NoError(t, err)
		defer conn.Close()
		require.Equal(t, 1, foreignKeys(t, conn), "sqld's default")

		rebuild := func() error {
			tx, err := conn.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			for _, q := range []string{
				"CREATE TABLE " + parent + "_new (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '')",
				"INSERT INTO " + parent + "_new (id, name) SELECT id, name FROM " + parent,
				"DROP TABLE " + parent,
				"ALTER TABLE " + parent + "_new RENAME TO " + parent,
			} {
				if _, err := tx.ExecContext(t.Context(), q); err != nil {
					return err
				}
			}
			return tx.Commit()
		}
		// With foreign keys on, dropping the referenced table fails.
		err = rebuild()
		require.True(t, errors.Is(err, libsql.ErrConstraint), "with foreign keys on: %v", err)

		mustExec(t, conn, "PRAGMA foreign_keys = OFF")
		for range 3 {
			require.Equal(t, 0, foreignKeys(t, conn), "the setting holds on later statements")
		}
		_, err = conn.ExecContext(t.Context(), "INSERT INTO "+child+" (id, parent_id) VALUES (2, 99)")
		require.NoError(t, err, "no foreign key check")
		require.NoError(t, rebuild(), "foreign keys are off inside the transaction too")
		require.Equal(t, 0, foreignKeys(t, conn))

		mustExec(t, conn, "PRAGMA foreign_keys = ON")
		require.Equal(t, 1, foreignKeys(t, conn))
		_, err = conn.ExecContext(t.Context(), "INSERT INTO "+child+" (id, parent_id) VALUES (3, 98)")
		require.True(t, errors.Is(err, libsql.ErrConstraint), "foreign keys are on again: %v", err)

		// Another connection of the pool never saw the setting.
		other, err := db.Conn(t.Context())
		require.NoError(t, err)
		defer other.Close()
		mustExec(t, conn, "PRAGMA foreign_keys = OFF")
		require.Equal(t, 1, foreignKeys(t, other))
	})
}

// TestDSNPragma: _pragma settings apply to every stream of every
// connection, and a statement's own PRAGMA overrides them on its
// connection.
func TestDSNPragma(t *testing.T) {
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			// sqld 0.24 accepts only these two connection PRAGMAs.
			db, err := sql.Open("libsql", dsn(c, "_pragma=foreign_keys(0)", "_pragma=defer_foreign_keys(1)"))
			require.NoError(t, err)
			defer db.Close()
			for range 3 {
				require.Equal(t, 0, foreignKeys(t, db))
			}
			var deferred int
			require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA defer_foreign_keys").Scan(&deferred))
			require.Equal(t, 1, deferred)
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			require.Equal(t, 0, foreignKeys(t, tx))
			require.NoError(t, tx.Commit())

			conn, err := db.Conn(t.Context())
			require.NoError(t, err)
			defer conn.Close()
			mustExec(t, conn, "PRAGMA foreign_keys = ON")
			require.Equal(t, 1, foreignKeys(t, conn))

			// A setting sqld refuses is the error of every statement.
			bad, err := sql.Open("libsql", dsn(c, "_pragma=cache_size(100)"))
			require.NoError(t, err)
			defer bad.Close()
			err = bad.PingContext(t.Context())
			require.ErrorContains(t, err, `connection setting "PRAGMA cache_size(100)" failed`)
		})
	}
}

// busyProxy forwards requests to the shared sqld, but answers the first
// n pipelines whose body holds marker with the SQLITE_BUSY result sqld
// sends when its write lock cannot be had (the statement did not run).
// sqld itself waits for its lock (up to its 5 s transaction timeout), so a
// real SQLITE_BUSY only comes under load this test cannot make on demand.
func busyProxy(t *testing.T, variant testmatrix.Variant, marker string, n int) (url string, refused *atomic.Int32) {
	t.Helper()
	target, err := neturl.Parse(serverURL)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target)
	refused = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.URL.Path == pipelinePath(variant) && bytes.Contains(body, []byte(marker)) && refused.Load() < int32(n) {
			refused.Add(1)
			ct, answer := wireAnswer(t, variant, `{"baton":null,"base_url":null,"results":[{"type":"error","error":{"message":"SQLite error: database is locked","code":"SQLITE_BUSY"}},{"type":"ok","response":{"type":"close"}}]}`)
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(answer)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, refused
}

// TestBusyRetry: an autocommit statement that failed with SQLITE_BUSY did
// not apply, and the driver runs it again until it gets through, exactly
// once; with busyTimeout=0 the SQLITE_BUSY is returned; inside a
// transaction it is never retried; a context ends the retries.
func TestBusyRetry(t *testing.T) {
	for _, c := range httpVariants {
		t.Run(c.Name, func(t *testing.T) {
			db, err := sql.Open("libsql", dsn(c))
			require.NoError(t, err)
			defer db.Close()
			table := freshTable(t, db, "busy", "(id INTEGER PRIMARY KEY, v TEXT)")
			open := func(url string, params ...string) *sql.DB {
				d, err := sql.Open("libsql", url+"?"+strings.Join(append([]string{"codec=" + c.Codec}, params...), "&"))
				require.NoError(t, err)
				t.Cleanup(func() { _ = d.Close() })
				return d
			}

			url, refused := busyProxy(t, c, "'retried'", 3)
			_, err = open(url).ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('retried')")
			require.NoError(t, err, "retried until it got through")
			require.EqualValues(t, 3, refused.Load())
			require.EqualValues(t, 1, countWhere(t, db, table, "v = 'retried'"), "applied once")

			url, refused = busyProxy(t, c, "'unretried'", 1)
			_, err = open(url, "busyTimeout=0").ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('unretried')")
			require.True(t, errors.Is(err, libsql.ErrBusy), "%v", err)
			require.EqualValues(t, 1, refused.Load())
			require.Zero(t, countWhere(t, db, table, "v = 'unretried'"))

			url, refused = busyProxy(t, c, "'bounded'", 1000)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = open(url).ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('bounded')")
			// The last SQLITE_BUSY, or, when the context ends while an
			// attempt is on its way (a loaded machine), that attempt's end.
			require.True(t, errors.Is(err, libsql.ErrBusy) || errors.Is(err, context.DeadlineExceeded), "%v", err)
			require.Less(t, time.Since(start), 2*time.Second, "the context bounds the retries")
			require.Greater(t, refused.Load(), int32(1))
			_, err = open(url, "busyTimeout=200ms").ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('bounded')")
			require.True(t, errors.Is(err, libsql.ErrBusy), "busyTimeout bounds the retries: %v", err)
		})
	}
}
