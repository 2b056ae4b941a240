package itest

// libsql.Batch against sqld on every variant: one request, all or nothing,
// on its own or inside a transaction.

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

func TestBatch(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
		ctx := t.Context()
		table := freshTable(t, db, "batch", "(id INTEGER PRIMARY KEY, v TEXT UNIQUE, b BLOB, at DATETIME)")
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		count := func() int64 {
			var n int64
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
			return n
		}
		at := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)

		out, err := libsql.Batch(ctx, c, []libsql.Statement{
			{SQL: "INSERT INTO " + table + " (v, b, at) VALUES (?, ?, ?)", Args: []any{"one", []byte{1, 2, 3}, at}},
			{SQL: "INSERT INTO " + table + " (v) VALUES (:v)", Args: []any{sql.Named("v", "two")}},
			{SQL: "SELECT id, v, b, at FROM " + table + " ORDER BY id"},
		}, libsql.WithBatchMode(libsql.BatchWrite))
		require.NoError(t, err)
		require.Len(t, out, 3)
		require.EqualValues(t, 1, out[0].RowsAffected)
		require.NotZero(t, out[1].LastInsertID)
		require.Equal(t, []string{"id", "v", "b", "at"}, out[2].Columns)
		require.Len(t, out[2].Rows, 2)
		row := out[2].Rows[0]
		require.IsType(t, int64(0), row[0])
		require.Equal(t, "one", row[1])
		require.Equal(t, []byte{1, 2, 3}, row[2])
		require.Equal(t, at, row[3], "a DATETIME column gives a time.Time, as rows.Scan into any does")
		require.Nil(t, out[2].Rows[1][2])

		t.Run("all_or_nothing", func(t *testing.T) {
			before := count()
			_, err := libsql.Batch(ctx, c, []libsql.Statement{
				{SQL: "INSERT INTO " + table + " (v) VALUES ('three')"},
				{SQL: "INSERT INTO " + table + " (v) VALUES ('one')"},
			})
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrUniqueViolation)
			require.Contains(t, err.Error(), "batch statement #2")
			require.Equal(t, before, count(), "the first statement was rolled back")
		})

		t.Run("read", func(t *testing.T) {
			out, err := libsql.Batch(ctx, c, []libsql.Statement{{SQL: "SELECT count(*) FROM " + table}}, libsql.WithBatchMode(libsql.BatchRead))
			require.NoError(t, err)
			require.EqualValues(t, count(), out[0].Rows[0][0])
			_, err = libsql.Batch(ctx, c, []libsql.Statement{{SQL: "DELETE FROM " + table}}, libsql.WithBatchMode(libsql.BatchRead))
			requireClass(t, err, libsql.ErrReadOnly)
			require.NotZero(t, count())
		})

		t.Run("in_tx", func(t *testing.T) {
			tx, err := c.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = libsql.Batch(ctx, c, []libsql.Statement{{SQL: "INSERT INTO " + table + " (v) VALUES ('in tx')"}})
			require.NoError(t, err, "a batch as the transaction's first request")
			// A failing batch rolls back to its savepoint; the transaction
			// and what it did before go on.
			_, err = libsql.Batch(ctx, c, []libsql.Statement{
				{SQL: "INSERT INTO " + table + " (v) VALUES ('undone')"},
				{SQL: "INSERT INTO " + table + " (v) VALUES ('in tx')"},
			})
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrUniqueViolation)
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('after')")
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			var n int64
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE v IN ('in tx', 'after')").Scan(&n))
			require.EqualValues(t, 2, n)
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE v = 'undone'").Scan(&n))
			require.Zero(t, n)
		})

		t.Run("in_sql_tx", func(t *testing.T) {
			_, err := c.ExecContext(ctx, "BEGIN IMMEDIATE")
			require.NoError(t, err)
			_, err = libsql.Batch(ctx, c, []libsql.Statement{{SQL: "INSERT INTO " + table + " (v) VALUES ('sql tx')"}})
			require.NoError(t, err)
			_, err = c.ExecContext(ctx, "ROLLBACK")
			require.NoError(t, err)
			var n int64
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE v = 'sql tx'").Scan(&n))
			require.Zero(t, n, "the batch was part of the rolled-back transaction")
		})
	})
}
