package libsql

import (
	"testing"

	"github.com/gohrana/libsql/sqlscan"
)

func TestReadOnlySQL(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1":                             true,
		"select * from t":                      true,
		"  \n\tSELECT 1":                       true,
		"-- note\nSELECT 1":                    true,
		"/* a */ /* b */ SELECT 1":             true,
		"VALUES (1), (2)":                      true,
		"EXPLAIN QUERY PLAN SELECT 1":          true,
		"EXPLAIN DELETE FROM t":                true, // EXPLAIN runs nothing
		"WITH x AS (SELECT 1) SELECT * FROM x": true,
		"with recursive c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 9) SELECT n FROM c": true,
		"WITH x AS (SELECT updated_at, deleted FROM t) SELECT * FROM x":                             true, // words inside names

		"WITH x AS (SELECT 1) /* delete */ SELECT 1 -- update": true, // words in comments (was false)
		"; SELECT 1":              true,  // an empty statement first (was false)
		"SELECT 1; DELETE FROM t": false, // several statements (was true)
		"ſelect 1":                false, // not ASCII: no keyword
		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x":  false,
		"WITH x AS (SELECT 1) update t SET a = 1":             false,
		"WITH x AS (SELECT 1) DELETE FROM t":                  false,
		"WITH x AS (SELECT 1) REPLACE INTO t SELECT * FROM x": false,
		"WITH x AS (SELECT 'insert') SELECT * FROM x":         true, // a word in a string (was false)
		"INSERT INTO t VALUES (1)":                            false,
		"UPDATE t SET a = 1":                                  false,
		"DELETE FROM t":                                       false,
		"REPLACE INTO t VALUES (1)":                           false,
		"CREATE TABLE t (a)":                                  false,
		"PRAGMA user_version = 3":                             false,
		"PRAGMA table_info(t)":                                false, // PRAGMAs may write
		"BEGIN":                                               false,
		"":                                                    false,
		"-- only a comment":                                   false,
		"/* unterminated SELECT 1":                            false,
		"(SELECT 1)":                                          false,
		"SELECTx 1":                                           false,
		"SELECT1":                                             false,
	} {
		if got := readOnlySQL(sql); got != want {
			t.Errorf("readOnlySQL(%q) = %t, want %t", sql, got, want)
		}
	}
}

func BenchmarkReadOnlySQL(b *testing.B) {
	for _, sql := range []string{"SELECT id, name FROM users WHERE id = ?", "INSERT INTO t (a, b) VALUES (?, ?)",
		"WITH x AS (SELECT id FROM users WHERE created > ?) SELECT count(*) FROM x"} {
		b.Run(sqlscan.FirstKeyword(sql), func(b *testing.B) {
			for b.Loop() {
				readOnlySQL(sql)
			}
		})
	}
}
