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
			_, err := c.ExecContext(ctx, "BEGIN IMMEDIATE")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('commit')")
			require.NoError(t, err)
			// The statements run on the transaction's stream: its
			// connection state is there, over HTTP too.
			var id, changes int64
			require.NoError(t, c.QueryRowContext(ctx, "SELECT last_insert_rowid(), changes()").Scan(&id, &changes))
			require.NotZero(t, id)
			require.EqualValues(t, 1, changes)
			require.Zero(t, count(t, "v = 'commit'"), "another connection sees the row before COMMIT")
			_, err = c.ExecContext(ctx, "COMMIT")
			require.NoError(t, err)
			require.EqualValues(t, 1, count(t, "v = 'commit'"))
			// The connection carries on after the transaction.
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('after')")
			require.NoError(t, err)
			require.EqualValues(t, 1, count(t, "v = 'after'"))
		})

		t.Run("rollback_behind_a_comment", func(t *testing.T) {
			c := pin(t)
			_, err := c.ExecContext(ctx, "-- note\nbegin immediate")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('rolled back')")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "/* note */ ROLLBACK")
			require.NoError(t, err)
			require.Zero(t, count(t, "v = 'rolled back'"))
		})

		t.Run("failed_statement_keeps_it", func(t *testing.T) {
			c := pin(t)
			_, err := c.ExecContext(ctx, "BEGIN")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('kept')")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('kept')")
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrUniqueViolation)
			require.NotErrorIs(t, err, libsql.ErrTxLost)
			_, err = c.ExecContext(ctx, "COMMIT")
			require.NoError(t, err)
			require.EqualValues(t, 1, count(t, "v = 'kept'"))
		})

		t.Run("savepoint", func(t *testing.T) {
			c := pin(t)
			_, err := c.ExecContext(ctx, "SAVEPOINT outer_sp")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('outer')")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "SAVEPOINT inner_sp")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('inner')")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "ROLLBACK TO inner_sp")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "RELEASE outer_sp")
			require.NoError(t, err)
			require.EqualValues(t, 1, count(t, "v = 'outer'"))
			require.Zero(t, count(t, "v = 'inner'"))
		})

		t.Run("begin_tx_refused_inside", func(t *testing.T) {
			c := pin(t)
			_, err := c.ExecContext(ctx, "BEGIN")
			require.NoError(t, err)
			_, err = c.BeginTx(ctx, nil)
			require.Error(t, err)
			_, err = c.ExecContext(ctx, "ROLLBACK")
			require.NoError(t, err)
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
			_, err = c.ExecContext(ctx, "BEGIN IMMEDIATE")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('left open')")
			require.NoError(t, err)
			require.NoError(t, c.Close())

			other, err := sql.Open("libsql", dsn(variant, "busyTimeout=0"))
			require.NoError(t, err)
			defer other.Close()
			_, err = other.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('next writer')")
			require.NoError(t, err, "the write lock outlived the connection")
			require.Zero(t, count(t, "v = 'left open'"))
			// And a pooled BEGIN on *sql.DB cannot leak either.
			_, err = db.ExecContext(ctx, "BEGIN IMMEDIATE")
			require.NoError(t, err)
			_, err = other.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('after a pooled BEGIN')")
			require.NoError(t, err)
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
			db := openDB(t, startSqld(t).URL(), variant)
			ctx := context.Background()
			table := freshTable(t, db, "sqltx_expiry", "(v TEXT)")
			c, err := db.Conn(ctx)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.ExecContext(ctx, "BEGIN")
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('lost')")
			require.NoError(t, err)
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
