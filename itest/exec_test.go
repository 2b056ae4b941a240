package itest

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestExecResults runs a sequence of DML statements on one table and checks
// RowsAffected and, for INSERTs, LastInsertId. The steps depend on each
// other and run in order.
func TestExecResults(t *testing.T) {
	const noID = -1 // LastInsertId not checked
	steps := []struct {
		name     string
		sql      string
		args     []any
		affected int64
		lastID   int64
	}{
		{"insert_one", "INSERT INTO {t} (v) VALUES (?)", []any{"a"}, 1, 1},
		{"insert_explicit_id", "INSERT INTO {t} (id, v) VALUES (?, ?)", []any{10, "b"}, 1, 10},
		{"insert_three_rows", "INSERT INTO {t} (v) VALUES ('c'), ('d'), ('e')", nil, 3, 13},
		{"insert_select", "INSERT INTO {t} (v) SELECT v || '2' FROM {t} WHERE id > 10", nil, 3, 16},
		{"update_some", "UPDATE {t} SET v = v || '!' WHERE id > 12", nil, 4, noID},
		{"update_none", "UPDATE {t} SET v = 'x' WHERE id < 0", nil, 0, noID},
		{"insert_or_ignore_duplicate", "INSERT OR IGNORE INTO {t} (id, v) VALUES (1, 'dup')", nil, 0, noID},
		{"upsert", "INSERT INTO {t} (id, v) VALUES (1, 'up') ON CONFLICT (id) DO UPDATE SET v = excluded.v", nil, 1, noID},
		{"replace_existing", "REPLACE INTO {t} (id, v) VALUES (10, 'replaced')", nil, 1, 10},
		{"delete_one", "DELETE FROM {t} WHERE id = ?", []any{1}, 1, noID},
		{"delete_none", "DELETE FROM {t} WHERE id = ?", []any{12345}, 0, noID},
		{"create_index", "CREATE INDEX {t}_v ON {t} (v)", nil, 0, noID},
		{"select_via_exec", "SELECT * FROM {t}", nil, 0, noID},
		{"delete_rest", "DELETE FROM {t}", nil, 7, noID},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "exec_res", "(id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				q := strings.ReplaceAll(st.sql, "{t}", table)
				res, err := db.ExecContext(t.Context(), q, st.args...)
				require.NoError(t, err, q)
				n, err := res.RowsAffected()
				require.NoError(t, err)
				require.Equal(t, st.affected, n, "RowsAffected of %s", q)
				if st.lastID != noID {
					id, err := res.LastInsertId()
					require.NoError(t, err)
					require.Equal(t, st.lastID, id, "LastInsertId of %s", q)
				}
			})
		}
	})
}

// TestDDL creates, alters and drops schema objects and checks
// sqlite_master.
func TestDDL(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := scratchName(t, db, "ddl")
		view := table + "_view"
		t.Cleanup(func() { _, _ = db.Exec("DROP VIEW IF EXISTS " + view) })
		objects := func(t *testing.T) map[string]string {
			rows, err := db.QueryContext(t.Context(),
				"SELECT name, type FROM sqlite_master WHERE name LIKE ? ORDER BY name", table+"%")
			require.NoError(t, err)
			defer rows.Close()
			m := map[string]string{}
			for rows.Next() {
				var name, typ string
				require.NoError(t, rows.Scan(&name, &typ))
				m[name] = typ
			}
			require.NoError(t, rows.Err())
			return m
		}
		steps := []struct {
			name string
			sql  string
			want map[string]string
		}{
			{"create_table", "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, a TEXT)",
				map[string]string{table: "table"}},
			{"alter_add_column", "ALTER TABLE " + table + " ADD COLUMN b INTEGER DEFAULT 7",
				map[string]string{table: "table"}},
			{"create_index", "CREATE INDEX " + table + "_idx ON " + table + " (b)",
				map[string]string{table: "table", table + "_idx": "index"}},
			{"create_view", "CREATE VIEW " + view + " AS SELECT b FROM " + table,
				map[string]string{table: "table", table + "_idx": "index", view: "view"}},
			{"drop_view", "DROP VIEW " + view,
				map[string]string{table: "table", table + "_idx": "index"}},
			{"drop_index", "DROP INDEX " + table + "_idx",
				map[string]string{table: "table"}},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				res, err := db.ExecContext(t.Context(), st.sql)
				require.NoError(t, err, st.sql)
				n, err := res.RowsAffected()
				require.NoError(t, err)
				require.Zero(t, n, "RowsAffected of DDL")
				require.Equal(t, st.want, objects(t), "schema after %s", st.sql)
			})
		}
		t.Run("added_column_default", func(t *testing.T) {
			mustExec(t, db, "INSERT INTO "+table+" (a) VALUES ('x')")
			var b int64
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT b FROM "+table).Scan(&b))
			require.EqualValues(t, 7, b)
		})
		t.Run("drop_table", func(t *testing.T) {
			mustExec(t, db, "DROP TABLE "+table)
			require.Empty(t, objects(t))
		})
	})
}

// TestPreparedReuse reuses one prepared statement 1,000 times.
func TestPreparedReuse(t *testing.T) {
	const n = 1000
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "prep", "(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, sq INTEGER NOT NULL)")
		t.Run("exec_1000_times", func(t *testing.T) {
			ins, err := db.PrepareContext(t.Context(), "INSERT INTO "+table+" (k, sq) VALUES (?, ?)")
			require.NoError(t, err)
			defer ins.Close()
			for i := range n {
				res, err := ins.ExecContext(t.Context(), i, i*i)
				require.NoError(t, err, "execution %d", i)
				id, err := res.LastInsertId()
				require.NoError(t, err)
				require.EqualValues(t, i+1, id, "LastInsertId of execution %d", i)
			}
			var cnt, sumK, sumSq int64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT count(*), sum(k), sum(sq) FROM "+table).Scan(&cnt, &sumK, &sumSq))
			require.EqualValues(t, n, cnt)
			require.EqualValues(t, n*(n-1)/2, sumK)
			require.EqualValues(t, (n-1)*n*(2*n-1)/6, sumSq)
		})
		t.Run("query_reused", func(t *testing.T) {
			sel, err := db.PrepareContext(t.Context(), "SELECT sq FROM "+table+" WHERE k = :k")
			require.NoError(t, err)
			defer sel.Close()
			for i := 0; i < n; i += 50 {
				var sq int64
				require.NoError(t, sel.QueryRowContext(t.Context(), sql.Named("k", i)).Scan(&sq))
				require.EqualValues(t, i*i, sq, "k=%d", i)
			}
		})
		t.Run("closed_statement", func(t *testing.T) {
			st, err := db.PrepareContext(t.Context(), "SELECT 1")
			require.NoError(t, err)
			require.NoError(t, st.Close())
			_, err = st.ExecContext(t.Context())
			require.Error(t, err, "a closed statement must not run")
		})
	})
}

// TestScripts runs multi-statement texts through Exec.
func TestScripts(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		t.Run("schema_with_trigger", func(t *testing.T) {
			items := scratchName(t, db, "script_items")
			log := scratchName(t, db, "script_log")
			script := `
				-- a schema file
				CREATE TABLE ` + items + ` (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
				CREATE TABLE ` + log + ` (item_id INTEGER, note TEXT);
				CREATE TRIGGER ` + items + `_ai AFTER INSERT ON ` + items + ` BEGIN
					INSERT INTO ` + log + ` (item_id, note) VALUES (new.id, 'added; ' || new.name);
					UPDATE ` + log + ` SET note = upper(note) WHERE item_id = new.id;
				END;
				INSERT INTO ` + items + ` (name) VALUES ('one');
				INSERT INTO ` + items + ` (name) VALUES ('two; with semicolon');
			`
			_, err := db.ExecContext(t.Context(), script)
			require.NoError(t, err)
			require.EqualValues(t, 2, countRows(t, db, items))
			var note string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT note FROM "+log+" WHERE item_id = 2").Scan(&note))
			require.Equal(t, "ADDED; TWO; WITH SEMICOLON", note, "the trigger ran both its statements")

			// The trigger keeps working for single statements.
			mustExec(t, db, "INSERT INTO "+items+" (name) VALUES (?)", "three")
			require.EqualValues(t, 3, countRows(t, db, log))
		})
		// A CREATE TRIGGER whose body has several statements is one
		// statement (sqlscan's Multi): it runs as one outside a
		// transaction, prepared, and as a deferred statement of one.
		t.Run("trigger_alone", func(t *testing.T) {
			items := scratchName(t, db, "trig_items")
			log := scratchName(t, db, "trig_log")
			mustExec(t, db, "CREATE TABLE "+items+" (id INTEGER PRIMARY KEY, name TEXT)")
			mustExec(t, db, "CREATE TABLE "+log+" (item_id INTEGER, note TEXT)")
			body := " BEGIN INSERT INTO " + log + " VALUES (1, 'a'); INSERT INTO " + log + " VALUES (1, 'b'); END;"
			mustExec(t, db, "CREATE TRIGGER "+items+"_ai AFTER INSERT ON "+items+body)
			st, err := db.PrepareContext(t.Context(), "CREATE TRIGGER "+items+"_au AFTER UPDATE ON "+items+body)
			require.NoError(t, err)
			_, err = st.ExecContext(t.Context())
			require.NoError(t, err)
			require.NoError(t, st.Close())
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(t.Context(), "CREATE TRIGGER "+items+"_ad AFTER DELETE ON "+items+body)
			require.NoError(t, err)
			_, err = tx.ExecContext(t.Context(), "INSERT INTO "+items+" (id, name) VALUES (1, 'x')")
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			mustExec(t, db, "UPDATE "+items+" SET name = 'y'")
			mustExec(t, db, "DELETE FROM "+items)
			require.EqualValues(t, 6, countRows(t, db, log), "each trigger ran both its statements")
		})
		t.Run("error_in_the_middle_stops", func(t *testing.T) {
			table := scratchName(t, db, "script_err")
			script := "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY);" +
				"INSERT INTO " + table + " VALUES (1);" +
				"INSERT INTO " + table + " VALUES (1);" + // UNIQUE violation
				"INSERT INTO " + table + " VALUES (3);"
			_, err := db.ExecContext(t.Context(), script)
			require.Error(t, err)
			require.ErrorIs(t, err, libsql.ErrConstraint)
			require.Equal(t, []int64{1}, queryColumn[int64](t, db, "SELECT id FROM "+table+" ORDER BY id"),
				"statements before the error applied, those after it did not")
		})
		t.Run("syntax_error_runs_nothing", func(t *testing.T) {
			table := scratchName(t, db, "script_syntax")
			script := "CREATE TABLE " + table + " (id INTEGER PRIMARY KEY); INSERT INTO " + table + " VALUES (1); SELEC 1;"
			_, err := db.ExecContext(t.Context(), script)
			require.ErrorIs(t, err, libsql.ErrSyntax)
			var n int64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT count(*) FROM sqlite_master WHERE name = ?", table).Scan(&n))
			require.Zero(t, n, "the server parses the whole script before running any of it")
		})
		t.Run("explicit_transaction_in_script", func(t *testing.T) {
			table := freshTable(t, db, "script_begin", "(id INTEGER PRIMARY KEY)")
			_, err := db.ExecContext(t.Context(),
				"BEGIN; INSERT INTO "+table+" VALUES (1); INSERT INTO "+table+" VALUES (2); COMMIT;")
			require.NoError(t, err)
			require.EqualValues(t, 2, countRows(t, db, table))
		})
		t.Run("explicit_transaction_in_failing_script_applies_nothing", func(t *testing.T) {
			table := freshTable(t, db, "script_begin_err", "(id INTEGER PRIMARY KEY)")
			_, err := db.ExecContext(t.Context(),
				"BEGIN; INSERT INTO "+table+" VALUES (1); INSERT INTO "+table+" VALUES (1); COMMIT;")
			require.ErrorIs(t, err, libsql.ErrConstraint)
			require.Zero(t, countRows(t, db, table), "the script stopped before COMMIT; its transaction was rolled back")
			mustExec(t, db, "INSERT INTO "+table+" VALUES (3)")
			require.EqualValues(t, 1, countRows(t, db, table), "no transaction was left open")
		})
		t.Run("script_with_args_is_refused", func(t *testing.T) {
			table := freshTable(t, db, "script_args", "(id INTEGER PRIMARY KEY)")
			_, err := db.ExecContext(t.Context(),
				"INSERT INTO "+table+" VALUES (?); INSERT INTO "+table+" VALUES (2);", 1)
			require.ErrorIs(t, err, libsql.ErrSyntax, "only a text without arguments may hold several statements")
			require.Zero(t, countRows(t, db, table))
		})
		t.Run("script_through_query_is_refused", func(t *testing.T) {
			table := freshTable(t, db, "script_query", "(id INTEGER PRIMARY KEY)")
			rows, err := db.QueryContext(t.Context(),
				"INSERT INTO "+table+" VALUES (1); SELECT * FROM "+table)
			if err == nil {
				rows.Close()
			}
			require.ErrorIs(t, err, libsql.ErrSyntax, "Query runs one statement")
			require.Zero(t, countRows(t, db, table))
		})
		t.Run("script_in_transaction_rolled_back", func(t *testing.T) {
			table := freshTable(t, db, "script_tx", "(id INTEGER PRIMARY KEY)")
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(t.Context(),
				"INSERT INTO "+table+" VALUES (1); INSERT INTO "+table+" VALUES (2);")
			require.NoError(t, err)
			require.EqualValues(t, 2, countRows(t, tx, table), "visible inside the transaction")
			require.NoError(t, tx.Rollback())
			require.Zero(t, countRows(t, db, table), "rolled back")
		})
	})
}

// TestReturning checks that INSERT/UPDATE/DELETE ... RETURNING rows come
// back through Query.
func TestReturning(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "returning", "(id INTEGER PRIMARY KEY, v TEXT, n INTEGER DEFAULT 0)")
		t.Run("insert_returning", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(),
				"INSERT INTO "+table+" (v) VALUES (?), (?) RETURNING id, v, n", "a", "b")
			require.NoError(t, err)
			defer rows.Close()
			type row struct {
				id int64
				v  string
				n  int64
			}
			var got []row
			for rows.Next() {
				var r row
				require.NoError(t, rows.Scan(&r.id, &r.v, &r.n))
				got = append(got, r)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []row{{1, "a", 0}, {2, "b", 0}}, got)
			require.EqualValues(t, 2, countRows(t, db, table), "the RETURNING insert was applied")
		})
		t.Run("update_returning", func(t *testing.T) {
			var id, n int64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"UPDATE "+table+" SET n = n + 5 WHERE v = ? RETURNING id, n", "b").Scan(&id, &n))
			require.EqualValues(t, 2, id)
			require.EqualValues(t, 5, n)
		})
		t.Run("delete_returning", func(t *testing.T) {
			var v string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"DELETE FROM "+table+" WHERE id = 1 RETURNING v").Scan(&v))
			require.Equal(t, "a", v)
			require.EqualValues(t, 1, countRows(t, db, table))
		})
	})
}
