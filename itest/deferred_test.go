package itest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
)

// TestDeferredExec covers deferred execution (deferredExec=1 or
// WithDeferredExec): Exec in a transaction queues, the queue goes out in
// batches, results and errors arrive late, and a late error rolls the
// whole transaction back.
func TestDeferredExec(t *testing.T) {
	forEachCountedVariant(t, func(t *testing.T, db *sql.DB, ct *countingTransport) {
		ctx := context.Background()
		newTable := func(t *testing.T) string {
			return freshTable(t, db, "deferred", "(id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE, b BLOB)")
		}

		t.Run("commit_in_batches", func(t *testing.T) {
			table := newTable(t)
			const n = 300 // queue limit 128: batches of 128, 128, then 44 with COMMIT
			results := make([]sql.Result, n)
			// 4: Prepare's describe (once per text per connection) and
			// the three batches.
			ct.requireRequests(t, 4, func() {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" (id, v) VALUES (?, ?)")
				require.NoError(t, err)
				for i := range n {
					results[i], err = stmt.ExecContext(ctx, 1000+i, fmt.Sprint("v", i))
					require.NoError(t, err)
				}
				require.NoError(t, tx.Commit())
			})
			for i, r := range results {
				id, err := r.LastInsertId()
				require.NoError(t, err)
				require.EqualValues(t, 1000+i, id)
				aff, err := r.RowsAffected()
				require.NoError(t, err)
				require.EqualValues(t, 1, aff)
			}
			require.EqualValues(t, n, countRows(t, db, table))
		})

		t.Run("result_waits_for_answer", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer tx.Rollback()
			var r sql.Result
			ct.requireRequests(t, 0, func() {
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('a')")
				r, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('b')")
				require.NoError(t, err)
			})
			ct.requireRequests(t, 1, func() {
				id, err := r.LastInsertId()
				require.NoError(t, err)
				require.EqualValues(t, 2, id)
			})
			ct.requireRequests(t, 1, func() {
				require.EqualValues(t, 2, countRows(t, tx, table), "a query sees the queued writes")
			})
			ct.requireRequests(t, 1, func() { require.NoError(t, tx.Commit()) })
			require.EqualValues(t, 2, countRows(t, db, table))
		})

		t.Run("late_error_loses_the_transaction", func(t *testing.T) {
			table := newTable(t)
			other := freshTable(t, db, "deferred_other", "(x INTEGER)")
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('taken')")
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('fresh')")
			dup, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('taken')")
			require.NoError(t, err, "queued: the constraint error comes later")
			after, err := tx.ExecContext(ctx, "INSERT INTO "+other+" (x) VALUES (1)")
			require.NoError(t, err)

			var n int
			err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
			require.ErrorIs(t, err, libsql.ErrConstraint)
			require.ErrorIs(t, err, libsql.ErrTxLost)
			require.ErrorContains(t, err, "deferred statement #2")

			_, err = dup.RowsAffected()
			require.ErrorIs(t, err, libsql.ErrConstraint)
			_, err = after.RowsAffected()
			require.ErrorIs(t, err, libsql.ErrTxLost, "the statement after the failure did not run")
			_, err = tx.ExecContext(ctx, "INSERT INTO "+other+" (x) VALUES (2)")
			require.ErrorIs(t, err, libsql.ErrTxLost, "the transaction refuses more statements")
			require.ErrorIs(t, tx.Commit(), libsql.ErrTxLost)

			require.EqualValues(t, 1, countRows(t, db, table), "'fresh' rolled back")
			require.Zero(t, countRows(t, db, other), "nothing after the failure ran")
		})

		t.Run("late_error_at_commit", func(t *testing.T) {
			table := newTable(t)
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('taken')")
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			for _, v := range []string{"a", "taken", "b"} {
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (?)", v)
			}
			// The batch of the queue and COMMIT fails half-way, which
			// leaves the transaction open on the connection's stream:
			// the driver closes it (rolling it back) before it returns.
			ct.requireRequests(t, 2, func() {
				err = tx.Commit()
			})
			require.ErrorIs(t, err, libsql.ErrConstraint)
			require.ErrorIs(t, err, libsql.ErrTxLost)
			require.EqualValues(t, 1, countRows(t, db, table), "nothing committed")
		})

		t.Run("refused_batch", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('a')")
			mustExec(t, tx, "INSERT INTO no_such_table_anywhere (v) VALUES ('a')")
			err = tx.Commit()
			require.ErrorIs(t, err, libsql.ErrTxLost)
			require.Zero(t, countRows(t, db, table))
		})

		t.Run("rollback_sends_nothing", func(t *testing.T) {
			table := newTable(t)
			var r sql.Result
			ct.requireRequests(t, 0, func() {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				r, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('a')")
				require.NoError(t, err)
				require.NoError(t, tx.Rollback())
			})
			_, err := r.LastInsertId()
			require.ErrorIs(t, err, libsql.ErrTxDone)
			require.Zero(t, countRows(t, db, table))
		})

		t.Run("rollback_after_flush", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			r, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('a')")
			require.NoError(t, err)
			_, err = r.RowsAffected() // sends it
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('b')")
			require.NoError(t, tx.Rollback())
			require.Zero(t, countRows(t, db, table))
		})

		t.Run("arguments_are_copied", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			buf := []byte("original")
			mustExec(t, tx, "INSERT INTO "+table+" (v, b) VALUES ('a', ?)", buf)
			copy(buf, "CLOBBER!")
			require.NoError(t, tx.Commit())
			var got []byte
			require.NoError(t, db.QueryRowContext(ctx, "SELECT b FROM "+table).Scan(&got))
			require.Equal(t, "original", string(got))
		})

		t.Run("script_runs_at_once", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('q')")
			// The queue, then the script as one execute, which sqld refuses
			// with SQL_MANY_STATEMENTS before running anything, then as a
			// sequence: the same two requests a script costs without
			// deferral, plus the queue's.
			ct.requireRequests(t, 3, func() {
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('s1'); INSERT INTO "+table+" (v) VALUES ('s2')")
			})
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 3, countRows(t, db, table))
		})

		t.Run("context_overrides_dsn", func(t *testing.T) {
			table := newTable(t)
			ct.requireRequests(t, 3, func() { // BEGIN with the first, the second, COMMIT
				tx, err := db.BeginTx(libsql.WithDeferredExec(ctx, false), nil)
				require.NoError(t, err)
				for _, v := range []string{"a", "b"} {
					mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (?)", v)
				}
				require.NoError(t, tx.Commit())
			})
		})

		t.Run("read_only_not_deferred", func(t *testing.T) {
			table := newTable(t)
			tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			require.NoError(t, err)
			defer tx.Rollback()
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('a')")
			require.ErrorIs(t, err, libsql.ErrReadOnly, "refused at once, not later")
		})
	}, "deferredExec=1")
}

// TestDeferredExecByContext turns deferred execution on for one transaction
// of a database opened without it.
func TestDeferredExecByContext(t *testing.T) {
	forEachCountedVariant(t, func(t *testing.T, db *sql.DB, ct *countingTransport) {
		table := freshTable(t, db, "deferred_ctx", "(id INTEGER PRIMARY KEY, v INTEGER)")
		ctx := context.Background()
		ct.requireRequests(t, 1, func() {
			tx, err := db.BeginTx(libsql.WithDeferredExec(ctx, true), nil)
			require.NoError(t, err)
			for i := range 10 {
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (?)", i)
			}
			require.NoError(t, tx.Commit())
		}, "BEGIN, 10 INSERTs, COMMIT and close in one request")
		var sum int
		require.NoError(t, db.QueryRowContext(ctx, "SELECT sum(v) FROM "+table).Scan(&sum))
		require.Equal(t, 45, sum)

		// The next transaction on the same pool is not deferred.
		ct.requireRequests(t, 3, func() {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (1)")
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (id, v) VALUES (1, 1)")
			require.Error(t, err, "reported at once")
			require.False(t, errors.Is(err, libsql.ErrTxLost))
			require.NoError(t, tx.Rollback())
		})
	})
}

// TestDeferredExecUnreachable commits a deferred transaction to a server
// that cannot be reached: nothing was sent, so the error is safe to retry,
// and the queued statements report it too.
func TestDeferredExecUnreachable(t *testing.T) {
	db, err := sql.Open("libsql", "http://"+closedAddr(t)+"?deferredExec=1")
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.BeginTx(t.Context(), nil)
	require.NoError(t, err)
	r, err := tx.ExecContext(t.Context(), "INSERT INTO t VALUES (1)")
	require.NoError(t, err, "queued, not sent")
	err = tx.Commit()
	require.Error(t, err)
	var le *libsql.Error
	require.ErrorAs(t, err, &le)
	require.True(t, le.SafeToRetry(), "the request never left: %v", err)
	require.False(t, errors.Is(err, libsql.ErrTxLost))
	_, rerr := r.RowsAffected()
	require.Equal(t, err, rerr)
}
