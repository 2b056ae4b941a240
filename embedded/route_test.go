package embedded

import (
	"errors"
	"testing"

	"github.com/gohrana/libsql/sqlscan"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		sql  string
		want route
	}{
		{"SELECT * FROM t WHERE id = ?", routeLocal},
		{"  -- c\n select 1", routeLocal},
		{"WITH x AS (SELECT 1) SELECT * FROM x", routeLocal},
		{"VALUES (1), (2)", routeLocal},
		{"EXPLAIN QUERY PLAN SELECT * FROM t", routeLocal},
		{"INSERT INTO t VALUES (1)", routePrimary},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", routePrimary},
		{"UPDATE t SET a = 1", routePrimary},
		{"CREATE TABLE t (a)", routePrimary},
		{"SELECT 1; SELECT 2", routePrimary},
		{"BEGIN", routePrimary},
		{"COMMIT", routePrimary},
		{"ATTACH 'x' AS y", routePrimary},
		{"", routePrimary},
		{"SELECT vector_distance_cos(e, vector('[1,2]')) FROM items", routeLocal},
		{"SELECT * FROM vector_top_k('items_idx', vector32('[1,2]'), 3)", routeLocal},
		{`SELECT "vector_extract"(e) FROM items`, routeLocal},
		{"SELECT libsql_vector_idx(e) FROM items", routePrimary},
		{"SELECT libsql_server_version()", routePrimary},
		{"PRAGMA user_version", routeLocal},
		{"PRAGMA main.page_count", routeLocal},
		{"PRAGMA table_info(t)", routeTables},
		{"PRAGMA index_list(t)", routeIndexes},
		{"PRAGMA main.index_info(i)", routeIndexes},
		{"PRAGMA table_list", routeTables},
		{"SELECT name FROM pragma_table_info('t')", routeTables},
		{"SELECT name FROM pragma_index_list('t')", routeIndexes},
		{`SELECT name FROM "PRAGMA_INDEX_XINFO"('i')`, routeIndexes},
		{"SELECT * FROM pragma_table_info('t') JOIN pragma_index_list('t')", routeIndexes},
		{"SELECT * FROM pragma_function_list", routeLocal},
		{"PRAGMA integrity_check", routeCheck},
		{"PRAGMA main.quick_check", routeCheck},
		{"PRAGMA quick_check(10)", routeCheck},
		{"PRAGMA integrity_check = 3", routeCheck},
		{"PRAGMA integrity_check(t)", routeLocal},
		{"PRAGMA page_count", routeLocal},
		{"PRAGMA journal_mode = DELETE", routeRefuse},
		{"PRAGMA foreign_keys = ON", routeRefuse},
		{"PRAGMA main.synchronous(0)", routeRefuse},
		{"PRAGMA wal_checkpoint", routeRefuse},
		{"PRAGMA optimize", routeRefuse},
		{"PRAGMA user_version; PRAGMA user_version = 3", routePrimary},
		{"PRAGMA", routePrimary},
	}
	for _, tt := range tests {
		st := sqlscan.Analyze(tt.sql)
		if got := classify(tt.sql, &st); got != tt.want {
			t.Errorf("classify(%q) = %d, want %d", tt.sql, got, tt.want)
		}
	}
}

func TestLocalFallback(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("SQL logic error: unknown function: libsql_vector_idx() (1)"), true},
		{errors.New("SQL logic error: no such function: vector32 (1)"), true},
		{errors.New("SQL logic error: no such table: t (1)"), false},
	}
	for _, tt := range tests {
		if got := localFallback(tt.err); got != tt.want {
			t.Errorf("localFallback(%v) = %v", tt.err, got)
		}
	}
}
