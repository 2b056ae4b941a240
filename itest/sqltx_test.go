package itest

// Transactions begun with SQL on a pinned *sql.Conn, the SQLite idiom for
// BEGIN IMMEDIATE that database/sql cannot express, as a database/sql user
// writes them, on every variant (both transports, every codec).

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

func TestSQLTransactions(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
		ctx := t.Context()
		table := freshTable(t, db, "sqltx", "(id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
		pin := func(t *testing.T) *sql.Conn {
			c, err := db.Conn(ctx)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		count := func(t *testing.T, where string) int64 {
			var n int64
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+where).Scan(&n))
			return n
		}

		t.Run("commit", func(t *testing.T) {
			c := pin(t)
			mustExec(t, c, "BEGIN IMMEDIATE")
			mustExec(t, c, "INSERT INTO "+table+" (v) VALUES ('commit')")
			// The statements run on the transaction's stream: its
			// connection state is there, over HTTP too.
			var id, changes int64
			require.NoError(t, c.QueryRowContext(ctx, "SELECT last_insert_rowid(), changes()").Scan(&id, &changes))
			require.NotZero(t, id)
			require.EqualValues(t, 1, changes)
			require.Zero(t, count(t, "v = 'commit'"), "another connection sees the row before COMMIT")
			mustExec(t, c, "COMMIT")
			require.EqualValues(t, 1, count(t, "v = 'commit'"))
			// The connection carries on after the transaction.
			mustExec(t, c, "INSERT INTO "+table+" (v) VALUES ('after')")
			require.EqualValues(t, 1, count(t, "v = 'after'"))
		})

		// Statements that all succeed, run in order on a pinned
		// connection, and the rows they leave (count per condition).
		for _, tc := range []struct {
			name  string
			stmts []string
			want  map[string]int64
		}{
			{"rollback_behind_a_comment", []string{
				"-- note\nbegin immediate",
				"INSERT INTO " + table + " (v) VALUES ('rolled back')",
				"/* note */ ROLLBACK",
			}, map[string]int64{"v = 'rolled back'": 0}},
			{"savepoint", []string{
				"SAVEPOINT outer_sp",
				"INSERT INTO " + table + " (v) VALUES ('outer')",
				"SAVEPOINT inner_sp",
				"INSERT INTO " + table + " (v) VALUES ('inner')",
				"ROLLBACK TO inner_sp",
				"RELEASE outer_sp",
			}, map[string]int64{"v = 'outer'": 1, "v = 'inner'": 0}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := pin(t)
				for _, stmt := range tc.stmts {
					mustExec(t, c, stmt)
				}
				for where, n := range tc.want {
					require.Equal(t, n, count(t, where), "rows where %s", where)
				}
			})
		}

		t.Run("failed_statement_keeps_it", func(t *testing.T) {
			c := pin(t)
			mustExec(t, c, "BEGIN")
			mustExec(t, c, "INSERT INTO "+table+" (v) VALUES ('kept')")
			_, err := c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('kept')")
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrUniqueViolation)
			require.NotErrorIs(t, err, libsql.ErrTxLost)
			mustExec(t, c, "COMMIT")
			require.EqualValues(t, 1, count(t, "v = 'kept'"))
		})

		t.Run("begin_tx_refused_inside", func(t *testing.T) {
			c := pin(t)
			mustExec(t, c, "BEGIN")
			_, err := c.BeginTx(ctx, nil)
			require.Error(t, err)
			mustExec(t, c, "ROLLBACK")
			tx, err := c.BeginTx(ctx, nil)
			require.NoError(t, err, "BeginTx once the SQL transaction is over")
			require.NoError(t, tx.Rollback())
		})

		t.Run("left_open", func(t *testing.T) {
			// Given back with its transaction open, the connection is not
			// reused: closing it rolls the transaction back and releases
			// SQLite's write lock at once, so a writer that does not wait
			// for it (busyTimeout=0) gets through.
			c, err := db.Conn(ctx)
			require.NoError(t, err)
			mustExec(t, c, "BEGIN IMMEDIATE")
			mustExec(t, c, "INSERT INTO "+table+" (v) VALUES ('left open')")
			require.NoError(t, c.Close())

			other, err := sql.Open("libsql", dsn(variant, "busyTimeout=0"))
			require.NoError(t, err)
			defer other.Close()
			_, err = other.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('next writer')")
			require.NoError(t, err, "the write lock outlived the connection")
			require.Zero(t, count(t, "v = 'left open'"))
			// And a pooled BEGIN on *sql.DB cannot leak either.
			mustExec(t, db, "BEGIN IMMEDIATE")
			mustExec(t, other, "INSERT INTO "+table+" (v) VALUES ('after a pooled BEGIN')")
		})
	})
}

// TestSQLTransactionStreamExpires: over HTTP a server stream idle for sqld's
// 10 s expiry takes an open SQL transaction with it; the next statement
// says the transaction is lost, nothing of it is applied, and the
// connection works again. (A WebSocket stream does not expire.)
//
// Each variant runs on a server of its own: the transaction holds SQLite's
// write lock while it idles, which would hold up (and, after sqld's 5 s
// transaction timeout, be taken by) other writers.
func TestSQLTransactionStreamExpires(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 12 s")
	}
	const idle = 12 * time.Second // past sqld's 10 s stream expiry
	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, sqlds.Start(t).URL(), variant)
			ctx := context.Background()
			table := freshTable(t, db, "sqltx_expiry", "(v TEXT)")
			c, err := db.Conn(ctx)
			require.NoError(t, err)
			defer c.Close()
			mustExec(t, c, "BEGIN")
			mustExec(t, c, "INSERT INTO "+table+" (v) VALUES ('lost')")
			time.Sleep(idle)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('after')")
			requireClass(t, err, libsql.ErrTxLost)
			require.Contains(t, err.Error(), "expired")
			var n int64
			require.NoError(t, c.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
			require.Zero(t, n, "nothing of the lost transaction is there")
			_, err = c.ExecContext(ctx, "COMMIT")
			require.Error(t, err, "no transaction is open any more")
		})
	}
}
