package itest

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestTxCommitRollback covers the life of a transaction: commit, rollback,
// isolation from other connections, and statement errors inside it.
func TestTxCommitRollback(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		newTable := func(t *testing.T) string {
			return freshTable(t, db, "tx", "(id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
		}
		// newTx begins a transaction beside a table of the subtest's own.
		newTx := func(t *testing.T) (string, *sql.Tx) {
			table := newTable(t)
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			return table, tx
		}
		t.Run("commit", func(t *testing.T) {
			table, tx := newTx(t)
			for _, v := range []string{"a", "b", "c"} {
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (?)", v)
			}
			require.EqualValues(t, 3, countRows(t, tx, table), "own writes visible inside the transaction")
			require.Zero(t, countRows(t, db, table), "uncommitted writes invisible to other connections")
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 3, countRows(t, db, table), "committed")
		})
		t.Run("rollback_discards", func(t *testing.T) {
			table := newTable(t)
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('kept')")
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('discarded')")
			mustExec(t, tx, "UPDATE "+table+" SET v = 'changed' WHERE v = 'kept'")
			mustExec(t, tx, "DELETE FROM "+table+" WHERE v = 'changed'")
			require.NoError(t, tx.Rollback())
			var v string
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT group_concat(v) FROM "+table).Scan(&v))
			require.Equal(t, "kept", v, "insert, update and delete all rolled back")
		})
		t.Run("rollback_after_constraint_error", func(t *testing.T) {
			table, tx := newTx(t)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('x')")
			_, err := tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('x')")
			require.ErrorIs(t, err, libsql.ErrConstraint)
			require.False(t, errors.Is(err, libsql.ErrTxLost), "a constraint error does not end the transaction")
			require.NoError(t, tx.Rollback())
			require.Zero(t, countRows(t, db, table), "nothing applied")
		})
		t.Run("commit_after_constraint_error_keeps_other_statements", func(t *testing.T) {
			table, tx := newTx(t)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('x')")
			_, err := tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('y'), ('x')")
			require.ErrorIs(t, err, libsql.ErrConstraint)
			_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('z')")
			require.NoError(t, err, "the transaction goes on after a failed statement")
			require.NoError(t, tx.Commit())
			var v string
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT group_concat(v, ',') FROM (SELECT v FROM "+table+" ORDER BY v)").Scan(&v))
			require.Equal(t, "x,z", v, "SQLite undoes only the failed statement ('y' too)")
		})
		t.Run("error_in_first_statement", func(t *testing.T) {
			// The first statement travels with BEGIN.
			table, tx := newTx(t)
			_, err := tx.ExecContext(t.Context(), "INSERT INTO no_such_table_for_tx VALUES (1)")
			require.Error(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('after')")
			require.Zero(t, countRows(t, db, table), "still inside the transaction")
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 1, countRows(t, db, table))
		})
		t.Run("syntax_error_in_first_statement", func(t *testing.T) {
			table, tx := newTx(t)
			_, err := tx.ExecContext(t.Context(), "INSRT INTO "+table+" VALUES (1)")
			require.ErrorIs(t, err, libsql.ErrSyntax)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('one')")
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('two')")
			require.Zero(t, countRows(t, db, table), "the statements after the syntax error are inside the transaction")
			require.NoError(t, tx.Rollback())
			require.Zero(t, countRows(t, db, table), "rolled back")
		})
		t.Run("empty_transaction", func(t *testing.T) {
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			tx, err = db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			require.NoError(t, tx.Rollback())
		})
		t.Run("finished_transaction", func(t *testing.T) {
			table, tx := newTx(t)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('once')")
			require.NoError(t, tx.Commit())
			require.ErrorIs(t, tx.Commit(), sql.ErrTxDone)
			require.ErrorIs(t, tx.Rollback(), sql.ErrTxDone)
			_, err := tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('twice')")
			require.ErrorIs(t, err, sql.ErrTxDone)
			require.EqualValues(t, 1, countRows(t, db, table))
		})
		t.Run("query_rows_in_transaction", func(t *testing.T) {
			table, tx := newTx(t)
			defer func() { _ = tx.Rollback() }()
			res, err := tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('a'), ('b')")
			require.NoError(t, err)
			last, err := res.LastInsertId()
			require.NoError(t, err)
			var rowid int64
			require.NoError(t, tx.QueryRowContext(t.Context(), "SELECT last_insert_rowid()").Scan(&rowid))
			require.Equal(t, last, rowid, "the transaction's statements share one server connection")
			require.Equal(t, []string{"a", "b"}, queryColumn[string](t, tx, "SELECT v FROM "+table+" ORDER BY v"))
		})
		t.Run("savepoints_in_transaction", func(t *testing.T) {
			table, tx := newTx(t)
			defer func() { _ = tx.Rollback() }()
			for _, q := range []string{
				"INSERT INTO " + table + " (v) VALUES ('before')",
				"SAVEPOINT sp1",
				"INSERT INTO " + table + " (v) VALUES ('undone')",
				"ROLLBACK TO sp1",
				"INSERT INTO " + table + " (v) VALUES ('after')",
				"RELEASE sp1",
			} {
				_, err := tx.ExecContext(t.Context(), q)
				require.NoError(t, err, q)
			}
			require.NoError(t, tx.Commit())
			var v string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT group_concat(v, ',') FROM (SELECT v FROM "+table+" ORDER BY id)").Scan(&v))
			require.Equal(t, "before,after", v, "the savepoint rolled back only its part")
		})
	})
}

// TestTxOptions covers isolation levels and read-only transactions.
func TestTxOptions(t *testing.T) {
	levels := []struct {
		level sql.IsolationLevel
		ok    bool
	}{
		{sql.LevelDefault, true},
		{sql.LevelSerializable, true},
		{sql.LevelReadUncommitted, false},
		{sql.LevelReadCommitted, false},
		{sql.LevelWriteCommitted, false},
		{sql.LevelRepeatableRead, false},
		{sql.LevelSnapshot, false},
		{sql.LevelLinearizable, false},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "txopt", "(id INTEGER PRIMARY KEY, v TEXT)")
		mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('seed')")
		for _, lv := range levels {
			t.Run("isolation_"+lv.level.String(), func(t *testing.T) {
				tx, err := db.BeginTx(t.Context(), &sql.TxOptions{Isolation: lv.level})
				if !lv.ok {
					require.Error(t, err, "isolation level %v must be refused", lv.level)
					require.ErrorContains(t, err, "isolation")
					return
				}
				require.NoError(t, err, "isolation level %v", lv.level)
				mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES (?)", lv.level.String())
				require.NoError(t, tx.Commit())
			})
		}
		t.Run("pool_works_after_refused_level", func(t *testing.T) {
			require.NoError(t, db.PingContext(t.Context()))
		})

		writes := []struct {
			name string
			sql  string
		}{
			{"insert", "INSERT INTO " + table + " (v) VALUES ('ro')"},
			{"update", "UPDATE " + table + " SET v = 'ro'"},
			{"delete", "DELETE FROM " + table},
			{"create_table", "CREATE TABLE ro_never_created (x)"},
			{"script", "INSERT INTO " + table + " (v) VALUES ('ro1'); INSERT INTO " + table + " (v) VALUES ('ro2');"},
		}
		for _, w := range writes {
			t.Run("read_only_refuses_"+w.name, func(t *testing.T) {
				before := countRows(t, db, table)
				tx, err := db.BeginTx(t.Context(), &sql.TxOptions{ReadOnly: true})
				require.NoError(t, err)
				defer func() { _ = tx.Rollback() }()
				require.EqualValues(t, before, countRows(t, tx, table), "SELECT works in a read-only transaction")
				_, err = tx.ExecContext(t.Context(), w.sql)
				require.ErrorIs(t, err, libsql.ErrReadOnly, "%s in a read-only transaction", w.sql)
				var le *libsql.Error
				require.True(t, errors.As(err, &le), "want *libsql.Error, got %T", err)
				require.EqualValues(t, before, countRows(t, tx, table), "the transaction is still usable")
				require.NoError(t, tx.Commit())
				require.EqualValues(t, before, countRows(t, db, table), "nothing written")
			})
		}
		t.Run("read_only_serializable", func(t *testing.T) {
			tx, err := db.BeginTx(t.Context(), &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelSerializable})
			require.NoError(t, err)
			var v string
			require.NoError(t, tx.QueryRowContext(t.Context(), "SELECT v FROM "+table+" WHERE id = 1").Scan(&v))
			require.Equal(t, "seed", v)
			require.NoError(t, tx.Rollback())
		})
	})
}

// TestTxLarge inserts 1,000 rows in one transaction.
func TestTxLarge(t *testing.T) {
	const n = 1000
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "txlarge", "(id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
		tx, err := db.BeginTx(t.Context(), nil)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }()
		st, err := tx.PrepareContext(t.Context(), "INSERT INTO "+table+" (id, v) VALUES (?, ?)")
		require.NoError(t, err)
		for i := 1; i <= n; i++ {
			_, err := st.ExecContext(t.Context(), i, fmt.Sprintf("value %d", i))
			require.NoError(t, err, "insert %d", i)
		}
		require.NoError(t, st.Close())
		require.Zero(t, countRows(t, db, table), "nothing visible before commit")
		require.NoError(t, tx.Commit())
		var cnt, sum int64
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT count(*), sum(id) FROM "+table).Scan(&cnt, &sum))
		require.EqualValues(t, n, cnt)
		require.EqualValues(t, n*(n+1)/2, sum)
	})
}

// TestTxTwoConcurrent runs two transactions on different connections, each
// writing its own table, overlapping in time.
func TestTxTwoConcurrent(t *testing.T) {
	const n = 50
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		ta := freshTable(t, db, "txconc_a", "(id INTEGER PRIMARY KEY, v INTEGER)")
		tb := freshTable(t, db, "txconc_b", "(id INTEGER PRIMARY KEY, v INTEGER)")

		// A starts and writes first, so it holds the write lock; B runs
		// meanwhile and waits on the server for the lock until A commits.
		txA, err := db.BeginTx(t.Context(), nil)
		require.NoError(t, err)
		defer func() { _ = txA.Rollback() }()
		mustExec(t, txA, "INSERT INTO "+ta+" (v) VALUES (0)")

		doneB := make(chan error, 1)
		go func() {
			doneB <- func() error {
				txB, err := db.BeginTx(t.Context(), nil)
				if err != nil {
					return err
				}
				defer func() { _ = txB.Rollback() }()
				for i := range n {
					if _, err := txB.ExecContext(t.Context(), "INSERT INTO "+tb+" (v) VALUES (?)", i); err != nil {
						return fmt.Errorf("B insert %d: %w", i, err)
					}
				}
				return txB.Commit()
			}()
		}()
		for i := 1; i < n; i++ {
			_, err := txA.ExecContext(t.Context(), "INSERT INTO "+ta+" (v) VALUES (?)", i)
			require.NoError(t, err, "A insert %d", i)
		}
		require.NoError(t, txA.Commit(), "commit A")
		require.NoError(t, <-doneB, "transaction B")
		require.EqualValues(t, n, countRows(t, db, ta))
		require.EqualValues(t, n, countRows(t, db, tb))
	})
}

// TestConnPinning uses a *sql.Conn: the same driver connection for every
// call, inside and outside transactions.
func TestConnPinning(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "pin", "(id INTEGER PRIMARY KEY, v TEXT)")
		c, err := db.Conn(t.Context())
		require.NoError(t, err)
		defer c.Close()
		driverConn := func() any {
			var dc any
			require.NoError(t, c.Raw(func(x any) error { dc = x; return nil }))
			return dc
		}
		first := driverConn()

		t.Run("autocommit_statements", func(t *testing.T) {
			for _, v := range []string{"a", "b", "c"} {
				mustExec(t, c, "INSERT INTO "+table+" (v) VALUES (?)", v)
			}
			require.EqualValues(t, 3, countRows(t, c, table))
			require.EqualValues(t, 3, countRows(t, db, table), "autocommit writes are visible to the pool")
		})
		t.Run("transaction_on_conn", func(t *testing.T) {
			tx, err := c.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			mustExec(t, tx, "INSERT INTO "+table+" (v) VALUES ('d')")
			require.EqualValues(t, 4, countRows(t, tx, table))
			require.EqualValues(t, 3, countRows(t, db, table), "not committed yet")
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 4, countRows(t, c, table))
		})
		t.Run("rolled_back_transaction_on_conn", func(t *testing.T) {
			tx, err := c.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			mustExec(t, tx, "DELETE FROM "+table)
			require.NoError(t, tx.Rollback())
			require.EqualValues(t, 4, countRows(t, c, table))
		})
		t.Run("same_driver_connection", func(t *testing.T) {
			require.True(t, first == driverConn(), "a *sql.Conn keeps one driver connection")
		})
		t.Run("pool_works_alongside", func(t *testing.T) {
			require.NoError(t, db.PingContext(t.Context()))
			require.EqualValues(t, 4, countRows(t, db, table))
		})
	})
}
