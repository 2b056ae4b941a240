package itest

// sqld restarting under an open pool: a crash (SIGKILL) and a graceful stop
// (SIGTERM), each followed by a start on the same port with the same data.
// Every baton dies with the process.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestRestartUnderOpenPool restarts sqld twice under an open pool.
//
//   - While it is down, statements fail at once with "connection refused",
//     marked safe to retry.
//   - A query in flight when it dies fails (or, on a graceful stop, may
//     complete); it never returns a wrong result.
//   - Afterwards, autocommit statements, a pinned *sql.Conn and a
//     transaction that had not sent anything yet simply work.
//   - A transaction that wrote, or read, before the restart fails with an
//     error matching ErrTxLost, on its next statement or on Commit; none of
//     its writes are there.
//   - Row counts prove that nothing was applied twice or lost.
func TestRestartUnderOpenPool(t *testing.T) {
	// A query that counts n rows of a recursive CTE runs for about n/7M
	// seconds: it is in flight when the server stops. A crash cuts it; a
	// graceful stop lets it finish first, so it is shorter there.
	slowSQL := func(n int) string {
		return fmt.Sprintf(`SELECT count(*) FROM (WITH RECURSIVE c(i) AS
			(SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) SELECT i FROM c)`, n)
	}
	forEachVariantParallel(t, func(t *testing.T, variant testmatrix.Variant) {
		srv := sqlds.Start(t)
		db := openDB(t, srv.URL(), variant)
		table := privateTable(t, db, "restart", "(id INTEGER PRIMARY KEY, v TEXT)")
		ctx := context.Background()
		want := int64(0)
		insert := func(t *testing.T, q interface {
			ExecContext(context.Context, string, ...any) (sql.Result, error)
		}, v string) {
			t.Helper()
			_, err := q.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", v)
			require.NoError(t, err, "insert %s", v)
		}
		for i := range 10 {
			insert(t, db, fmt.Sprintf("auto-%d", i))
			want++
		}
		poolWorks(t, db, table) // several idle HTTP connections
		conn, err := db.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.PingContext(ctx))

		for round, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
			name := map[syscall.Signal]string{syscall.SIGKILL: "crash", syscall.SIGTERM: "graceful"}[sig]
			t.Run(name, func(t *testing.T) {
				// Commit is the first thing the writer does after the
				// restart in the second round, a statement in the first.
				commitFirst := round == 1
				writer, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				insert(t, writer, "lost-"+name)
				reader, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				var n int64
				require.NoError(t, reader.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
				require.Equal(t, want, n)
				pending, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)

				type outcome struct {
					n   int64
					err error
				}
				slowN := 20_000_000
				if sig == syscall.SIGTERM {
					slowN = 3_000_000
				}
				inflight := make(chan outcome, 1)
				go func() {
					var o outcome
					o.err = db.QueryRowContext(ctx, slowSQL(slowN)).Scan(&o.n)
					inflight <- o
				}()
				time.Sleep(300 * time.Millisecond) // let it reach the server

				start := time.Now()
				if sig == syscall.SIGKILL {
					srv.Kill()
				} else if srv.Stop() {
					t.Logf("sqld hung in its graceful shutdown for %v; killed", sqldproc.StopGrace)
				}
				t.Logf("%s stop took %v", name, time.Since(start).Round(time.Millisecond))

				o := <-inflight
				if o.err != nil {
					requireLibsqlError(t, o.err)
					t.Logf("query in flight: %v", o.err)
				} else {
					require.EqualValues(t, slowN, o.n, "a query in flight completes correctly or fails")
					t.Logf("query in flight completed before the server stopped")
				}

				// Down: refused at once, safe to retry. (The first attempt
				// may instead pick an idle HTTP connection whose close
				// net/http has not noticed yet: then it fails as possibly
				// sent; the next one dials.)
				for attempt := 1; ; attempt++ {
					start = time.Now()
					_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('while-down')")
					le := requireLibsqlError(t, err)
					require.Less(t, time.Since(start), 5*time.Second, "fails at once")
					t.Logf("while down: %v", err)
					if errors.Is(err, syscall.ECONNREFUSED) {
						require.True(t, le.SafeToRetry(), "nothing was sent")
						break
					}
					require.Less(t, attempt, 3, "want connection refused, got %v", err)
				}

				start = time.Now()
				require.NoError(t, srv.Restart(ctx))
				t.Logf("restart took %v", time.Since(start).Round(time.Millisecond))

				// Lost transactions.
				if commitFirst {
					err = writer.Commit()
				} else {
					_, err = writer.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", "lost-"+name)
				}
				t.Logf("writer after the restart: %v", err)
				require.Error(t, err)
				// Not fatal: the checks below still run if this fails.
				assert.True(t, errors.Is(err, libsql.ErrTxLost), "writer: want ErrTxLost, got %v", err)
				if !commitFirst {
					require.ErrorIs(t, writer.Commit(), libsql.ErrTxLost)
				}
				err = reader.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
				t.Logf("reader after the restart: %v", err)
				require.True(t, errors.Is(err, libsql.ErrTxLost), "reader: want ErrTxLost, got %v", err)
				require.NoError(t, reader.Rollback())

				// Working again.
				insert(t, pending, "pending-"+name)
				require.NoError(t, pending.Commit())
				want++
				insert(t, db, "after-"+name)
				want++
				require.NoError(t, conn.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n), "the pinned connection")
				poolWorks(t, db, table)

				require.Equal(t, want, countRows(t, db, table), "every committed row once, nothing else")
				require.Zero(t, countWhere(t, db, table, "v LIKE 'lost-%' OR v = 'while-down'"))
				require.EqualValues(t, 1, countWhere(t, db, table, "v = ?", "pending-"+name))
				require.EqualValues(t, 1, countWhere(t, db, table, "v = ?", "after-"+name))
			})
		}
	})
}
