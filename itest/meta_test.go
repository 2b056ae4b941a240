package itest

import (
	"database/sql"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestColumnTypes checks Columns, ColumnTypeDatabaseTypeName (the declared
// type, upper case) and ColumnTypeScanType.
func TestColumnTypes(t *testing.T) {
	var (
		tInt64   = reflect.TypeFor[int64]()
		tFloat64 = reflect.TypeFor[float64]()
		tString  = reflect.TypeFor[string]()
		tBytes   = reflect.TypeFor[[]byte]()
		tTime    = reflect.TypeFor[time.Time]()
		tAny     = reflect.TypeFor[any]()
	)
	cols := []struct {
		name     string
		decl     string // as written in CREATE TABLE
		dbType   string // ColumnTypeDatabaseTypeName
		scanType reflect.Type
	}{
		{"c_integer", "INTEGER", "INTEGER", tInt64},
		{"c_bigint", "bigint", "BIGINT", tInt64},
		{"c_real", "REAL", "REAL", tFloat64},
		{"c_double", "DOUBLE PRECISION", "DOUBLE PRECISION", tFloat64},
		{"c_float", "float", "FLOAT", tFloat64},
		{"c_text", "TEXT", "TEXT", tString},
		{"c_varchar", "varchar(10)", "VARCHAR(10)", tString},
		{"c_blob", "BLOB", "BLOB", tBytes},
		{"c_datetime", "DATETIME", "DATETIME", tTime},
		{"c_date", "date", "DATE", tTime},
		{"c_timestamp", "TIMESTAMP", "TIMESTAMP", tTime},
		{"c_int8", "INT8", "INT8", tInt64},
		{"c_character", "CHARACTER(20)", "CHARACTER(20)", tString},
		{"c_nvarchar", "nvarchar(100)", "NVARCHAR(100)", tString},
		{"c_clob", "CLOB", "CLOB", tString},
		{"c_numeric", "NUMERIC", "NUMERIC", tAny},
		{"c_decimal", "DECIMAL(10,5)", "DECIMAL(10,5)", tAny},
		{"c_string", "STRING", "STRING", tAny},
		{"c_boolean", "BOOLEAN", "BOOLEAN", tAny},
		{"c_untyped", "", "", tAny},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		schema := "(id INTEGER PRIMARY KEY"
		sel := "SELECT "
		for i, c := range cols {
			schema += ", " + c.name + " " + c.decl
			if i > 0 {
				sel += ", "
			}
			sel += c.name
		}
		table := freshTable(t, db, "coltypes", schema+")")
		sel += ", 1 + 1 AS expr, CAST(c_integer AS TEXT) AS cast_expr FROM " + table

		// The table is empty: the metadata must come anyway.
		rows, err := db.QueryContext(t.Context(), sel)
		require.NoError(t, err)
		defer rows.Close()
		names, err := rows.Columns()
		require.NoError(t, err)
		cts, err := rows.ColumnTypes()
		require.NoError(t, err)
		require.Len(t, names, len(cols)+2)
		require.Len(t, cts, len(cols)+2)
		for i, c := range cols {
			t.Run(c.name, func(t *testing.T) {
				require.Equal(t, c.name, names[i], "Columns()[%d]", i)
				require.Equal(t, c.name, cts[i].Name())
				require.Equal(t, c.dbType, cts[i].DatabaseTypeName(), "DatabaseTypeName of %q", c.decl)
				require.Equal(t, c.scanType, cts[i].ScanType(), "ScanType of %q", c.decl)
				_, ok := cts[i].Nullable()
				require.False(t, ok, "Hrana does not report nullability")
			})
		}
		for i, name := range []string{"expr", "cast_expr"} {
			t.Run(name, func(t *testing.T) {
				ct := cts[len(cols)+i]
				require.Equal(t, name, names[len(cols)+i])
				require.Equal(t, "", ct.DatabaseTypeName(), "an expression has no declared type")
				require.Equal(t, tAny, ct.ScanType())
			})
		}
		require.False(t, rows.Next(), "the table is empty")
		require.NoError(t, rows.Err())
	})
}

// TestEmptyResults checks queries that return no rows.
func TestEmptyResults(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "empty", "(id INTEGER PRIMARY KEY, v TEXT)")
		t.Run("query_no_rows", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(), "SELECT id, v FROM "+table+" WHERE id > ?", 0)
			require.NoError(t, err)
			defer rows.Close()
			cols, err := rows.Columns()
			require.NoError(t, err)
			require.Equal(t, []string{"id", "v"}, cols)
			require.False(t, rows.Next())
			require.NoError(t, rows.Err())
		})
		t.Run("query_row_no_rows", func(t *testing.T) {
			var v string
			err := db.QueryRowContext(t.Context(), "SELECT v FROM "+table+" WHERE id = 1").Scan(&v)
			require.True(t, errors.Is(err, sql.ErrNoRows), "want sql.ErrNoRows, got %v", err)
		})
		t.Run("aggregate_over_empty", func(t *testing.T) {
			var n int64
			var mx any
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT count(*), max(id) FROM "+table).Scan(&n, &mx))
			require.Zero(t, n)
			require.Nil(t, mx)
		})
		t.Run("statement_without_result_columns", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(), "UPDATE "+table+" SET v = 'x'")
			require.NoError(t, err)
			defer rows.Close()
			cols, err := rows.Columns()
			require.NoError(t, err)
			require.Empty(t, cols)
			require.False(t, rows.Next())
			require.NoError(t, rows.Err())
		})
	})
}

// TestLargeResult reads 10,000 rows in one query.
func TestLargeResult(t *testing.T) {
	const n = 10000
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "large", "(id INTEGER PRIMARY KEY, label TEXT, half REAL, b BLOB)")
		res := mustExec(t, db, `
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
			INSERT INTO `+table+` (id, label, half, b)
			SELECT x, 'row ' || x, x / 2.0, zeroblob(x % 7) FROM c`, n)
		affected, err := res.RowsAffected()
		require.NoError(t, err)
		require.EqualValues(t, n, affected)

		t.Run("from_table", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(), "SELECT id, label, half, b FROM "+table+" ORDER BY id")
			require.NoError(t, err)
			defer rows.Close()
			count := 0
			for rows.Next() {
				var (
					id    int64
					label string
					half  float64
					b     []byte
				)
				require.NoError(t, rows.Scan(&id, &label, &half, &b))
				count++
				require.EqualValues(t, count, id, "rows in order")
				if label != "row "+strconv.Itoa(count) || half != float64(count)/2 || len(b) != count%7 {
					require.Failf(t, "wrong row", "row %d: %q %v %d bytes", count, label, half, len(b))
				}
			}
			require.NoError(t, rows.Err())
			require.Equal(t, n, count)
		})
		t.Run("generated", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(),
				"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x FROM c", n)
			require.NoError(t, err)
			defer rows.Close()
			var count, sum int64
			for rows.Next() {
				var x int64
				require.NoError(t, rows.Scan(&x))
				count++
				sum += x
			}
			require.NoError(t, rows.Err())
			require.EqualValues(t, n, count)
			require.EqualValues(t, n*(n+1)/2, sum)
		})
		t.Run("close_early", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(), "SELECT id FROM "+table)
			require.NoError(t, err)
			require.True(t, rows.Next())
			require.NoError(t, rows.Close())
			require.NoError(t, db.PingContext(t.Context()), "the connection is usable after closing rows early")
		})
	})
}

// TestPing pings through the pool and through a pinned connection.
func TestPing(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		t.Run("db", func(t *testing.T) {
			require.NoError(t, db.PingContext(t.Context()))
		})
		t.Run("conn", func(t *testing.T) {
			c, err := db.Conn(t.Context())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.PingContext(t.Context()))
		})
	})
}
