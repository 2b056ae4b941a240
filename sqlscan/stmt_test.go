package sqlscan

import "testing"

func TestFirstKeyword(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT 1":                   "SELECT",
		"  select 1":                 "select",
		"/* a */ -- b\n\tBEGIN":      "BEGIN",
		"; ;; INSERT INTO t":         "INSERT",
		"SELECT1":                    "SELECT1",
		"héllo":                      "héllo",
		"(SELECT 1)":                 "",
		"'SELECT'":                   "",
		`"SELECT"`:                   "",
		"":                           "",
		";":                          "",
		"-- SELECT":                  "",
		"/* unterminated SELECT 1":   "",
		"\xef\xbb\xbfPRAGMA x":       "PRAGMA",
		"x'00' SELECT":               "",
		"?1 SELECT":                  "",
		"$a SELECT":                  "",
		"1 SELECT":                   "",
		"\vSELECT":                   "",
		"/* a */SELECT/* b */1":      "SELECT",
		"WITH/**/x AS (SELECT 1) ..": "WITH",
	} {
		if got := FirstKeyword(sql); got != want {
			t.Errorf("FirstKeyword(%q) = %q, want %q", sql, got, want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1":                             true,
		"select * from t":                      true,
		"  \n\tSELECT 1;":                      true,
		"-- note\nSELECT 1":                    true,
		"/* a */ /* b */ SELECT 1":             true,
		"; SELECT 1 ;; -- done":                true,
		"VALUES (1), (2)":                      true,
		"EXPLAIN QUERY PLAN SELECT 1":          true,
		"EXPLAIN DELETE FROM t":                true, // EXPLAIN runs nothing
		"WITH x AS (SELECT 1) SELECT * FROM x": true,
		"with recursive c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 9) SELECT n FROM c": true,
		"WITH x AS (SELECT updated_at, deleted FROM t) SELECT * FROM x":                             true, // words inside names
		"WITH x AS (SELECT 'insert') SELECT * FROM x":                                               true, // a string
		"WITH x AS (SELECT 1 AS \"delete\", [update], `replace`) SELECT * FROM x":                   true, // quoted names
		"WITH x AS (SELECT 1) /* DELETE */ SELECT * FROM x -- UPDATE":                               true, // comments
		"WITH x AS (SELECT 1) /* delete */ SELECT 1 -- update":                                      true,
		"; SELECT 1": true, // an empty statement first

		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x":             false,
		"WITH x AS (SELECT 1) update t SET a = 1":                        false,
		"WITH x AS (SELECT 1) DELETE FROM t":                             false,
		"WITH x AS (SELECT 1) REPLACE INTO t SELECT * FROM x":            false,
		"WITH x AS (SELECT replace(a, 'b', 'c') FROM t) SELECT * FROM x": false, // conservative: the function's name
		"SELECT 1; DELETE FROM t":                                        false, // several statements
		"SELECT 1; SELECT 2":                                             false,
		"WITH x AS (SELECT 1) SELECT 1; DELETE FROM t":                   false,
		"INSERT INTO t VALUES (1)":                                       false,
		"UPDATE t SET a = 1":                                             false,
		"DELETE FROM t":                                                  false,
		"REPLACE INTO t VALUES (1)":                                      false,
		"CREATE TABLE t (a)":                                             false,
		"PRAGMA user_version = 3":                                        false,
		"PRAGMA table_info(t)":                                           false, // PRAGMAs may write
		"BEGIN":                                                          false,
		"":                                                               false,
		";":                                                              false,
		"-- only a comment":                                              false,
		"/* unterminated SELECT 1":                                       false,
		"(SELECT 1)":                                                     false,
		"SELECTx 1":                                                      false,
		"SELECT1":                                                        false,
		"ſelect 1":                                                       false, // not ASCII: no keyword
	} {
		if got := ReadOnly(sql); got != want {
			t.Errorf("ReadOnly(%q) = %t, want %t", sql, got, want)
		}
	}
}

func TestTxControl(t *testing.T) {
	for sql, want := range map[string]TxKind{
		"BEGIN":                                  TxBegin,
		"begin;":                                 TxBegin,
		"/* note */ BEGIN":                       TxBegin,
		"-- note\nbegin immediate":               TxBegin,
		"BEGIN DEFERRED TRANSACTION":             TxBegin,
		"BEGIN EXCLUSIVE":                        TxBegin,
		"BEGIN TRANSACTION t1 ;; -- done":        TxBegin,
		"BEGIN TRANSACTION \"t 1\"":              TxBegin,
		"COMMIT":                                 TxCommit,
		"commit transaction":                     TxCommit,
		"END":                                    TxCommit,
		"End Transaction t1":                     TxCommit,
		"ROLLBACK":                               TxRollback,
		"ROLLBACK TRANSACTION":                   TxRollback,
		"ROLLBACK TRANSACTION t1":                TxRollback,
		"ROLLBACK TO sp":                         TxRollbackTo,
		"ROLLBACK TO SAVEPOINT sp":               TxRollbackTo,
		"ROLLBACK TRANSACTION TO SAVEPOINT 'sp'": TxRollbackTo,
		"ROLLBACK TRANSACTION t1 TO sp":          TxRollbackTo,
		"SAVEPOINT sp":                           TxSavepoint,
		"savepoint [s p];":                       TxSavepoint,
		"RELEASE sp":                             TxRelease,
		"RELEASE SAVEPOINT sp":                   TxRelease,

		"":                         NotTx,
		"SELECT 1":                 NotTx,
		"BEGINNING":                NotTx,
		"ENDURANCE":                NotTx,
		"(BEGIN)":                  NotTx,
		"'BEGIN'":                  NotTx,
		"-- BEGIN":                 NotTx,
		"EXPLAIN BEGIN":            NotTx,
		"BEGIN; SELECT 1":          NotTx, // several statements
		"COMMIT; BEGIN":            NotTx,
		"BEGIN foo":                NotTx,
		"BEGIN DEFERRED IMMEDIATE": NotTx,
		"BEGIN TRANSACTION TO":     NotTx,
		"BEGIN TRANSACTION a b":    NotTx,
		"COMMIT TO sp":             NotTx,
		"ROLLBACK TO":              NotTx,
		"ROLLBACK TO SAVEPOINT":    NotTx,
		"ROLLBACK TO 1":            NotTx,
		"SAVEPOINT":                NotTx,
		"SAVEPOINT a b":            NotTx,
		"RELEASE":                  NotTx,
		"RELEASE SAVEPOINT":        NotTx,
		"RELEASE ?":                NotTx,
	} {
		if got := TxControl(sql); got != want {
			t.Errorf("TxControl(%q) = %v, want %v", sql, got, want)
		}
	}
}

func TestTxKindString(t *testing.T) {
	for k, want := range map[TxKind]string{NotTx: "NotTx", TxBegin: "TxBegin", TxRelease: "TxRelease", TxRelease + 1: "TxKind(?)"} {
		if got := k.String(); got != want {
			t.Errorf("TxKind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestPragma(t *testing.T) {
	tests := []struct {
		sql, key, name string // key "": not an assignment
	}{
		{"PRAGMA foreign_keys = OFF", "foreign_keys", "foreign_keys"},
		{"  pragma Foreign_Keys=0;  ", "foreign_keys", "foreign_keys"},
		{"PRAGMA\tforeign_keys(1)", "foreign_keys", "foreign_keys"},
		{"PRAGMA main.cache_size = -2000", "main.cache_size", "cache_size"},
		{"PRAGMA Main . Cache_Size(+2000)", "main.cache_size", "cache_size"},
		{"PRAGMA schéma.cache_size = 1", "schéma.cache_size", "cache_size"},
		{"PRAGMA busy_timeout = 1000 -- ms", "busy_timeout", "busy_timeout"},
		{"/* c */ PRAGMA /* c */ foreign_keys /* c */ = /* c */ on /* c */ ;", "foreign_keys", "foreign_keys"},
		{"PRAGMA temp_store = 'memory'", "temp_store", "temp_store"},
		{"PRAGMA temp_store = \"memory\"", "temp_store", "temp_store"},
		{"PRAGMA synchronous(NORMAL)", "synchronous", "synchronous"},
		{"PRAGMA cache_size = 1.5e3", "cache_size", "cache_size"},
		{"PRAGMA journal_mode = DELETE", "journal_mode", "journal_mode"}, // any pragma: the caller picks

		{"PRAGMA foreign_keys", "", ""},                 // a query
		{"PRAGMA table_info(t) x", "", ""},              // junk after
		{"PRAGMA foreign_keys = OFF; SELECT 1", "", ""}, // two statements
		{"PRAGMA foreign_keys = ';'; SELECT 1", "", ""},
		{"PRAGMAforeign_keys = 1", "", ""},
		{"PRAGMA = 1", "", ""},
		{"PRAGMA main. = 1", "", ""},
		{"PRAGMA main.x.y = 1", "", ""},
		{"PRAGMA x = ", "", ""},
		{"PRAGMA x = -", "", ""},
		{"PRAGMA x = -on", "", ""},
		{"PRAGMA x = ?", "", ""},
		{"PRAGMA x = x'00'", "", ""},
		{"PRAGMA x = 1 2", "", ""},
		{"PRAGMA x(1", "", ""},
		{"PRAGMA x(1))", "", ""},
		{"PRAGMA x = (1)", "", ""},
		{"PRAGMA \"x\" = 1", "", ""}, // quoted names are not looked into
		{"SELECT 'PRAGMA foreign_keys = 1'", "", ""},
		{"-- PRAGMA foreign_keys = 1", "", ""},
		{"PRAG", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		key, name, ok := Pragma(tt.sql)
		if ok != (tt.key != "") || key != tt.key || name != tt.name {
			t.Errorf("Pragma(%q) = %q, %q, %v; want %q, %q", tt.sql, key, name, ok, tt.key, tt.name)
		}
	}
}

// The classifiers and FirstKeyword allocate nothing, and neither does
// Pragma for a name already in lower case without a schema.
func TestClassifiersAllocs(t *testing.T) {
	const sql = "/* c */ WITH x AS (SELECT a FROM t WHERE b = 'insert') SELECT * FROM x; -- done"
	for name, f := range map[string]func(){
		"FirstKeyword": func() { FirstKeyword(sql) },
		"ReadOnly":     func() { ReadOnly(sql) },
		"TxControl":    func() { TxControl("BEGIN IMMEDIATE TRANSACTION; -- x") },
		"Pragma":       func() { Pragma("PRAGMA foreign_keys = ON") },
		"ScanParams":   func() { ScanParams(sql) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocates %v times", name, n)
		}
	}
}

func BenchmarkFirstKeyword(b *testing.B) {
	for b.Loop() {
		FirstKeyword("-- note\nSELECT id, name FROM users WHERE id = ?")
	}
}

func BenchmarkReadOnly(b *testing.B) {
	for _, bm := range []struct{ name, sql string }{
		{"select", "SELECT id, name FROM users WHERE id = ?"},
		{"insert", "INSERT INTO t (a, b) VALUES (?, ?)"},
		{"with", "WITH x AS (SELECT id FROM users WHERE created > ?) SELECT count(*) FROM x"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				ReadOnly(bm.sql)
			}
		})
	}
}

func BenchmarkTxControl(b *testing.B) {
	for _, bm := range []struct{ name, sql string }{
		{"begin", "BEGIN IMMEDIATE"},
		{"insert", "INSERT INTO t (a, b) VALUES (?, ?)"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				TxControl(bm.sql)
			}
		})
	}
}

func BenchmarkPragma(b *testing.B) {
	for _, bm := range []struct{ name, sql string }{
		{"pragma", "PRAGMA foreign_keys = ON"},
		{"insert", "INSERT INTO t (a, b) VALUES (?, ?)"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				Pragma(bm.sql)
			}
		})
	}
}

func TestAnyBeginsTx(t *testing.T) {
	for sql, want := range map[string]bool{
		"BEGIN": true,
		"CREATE TABLE a (x); BEGIN; INSERT INTO a VALUES (1)":                               true,
		"/* c */ savepoint s1; INSERT INTO a VALUES (1)":                                    true,
		"INSERT INTO a VALUES ('BEGIN'); -- BEGIN\nSELECT 1":                                false,
		"CREATE TRIGGER tr AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); END; SELECT 1": false,
		"CREATE TABLE a (x); CREATE TABLE b (y)":                                            false,
		"":                                                                                  false,
		";;":                                                                                false,
		"SELECT begin FROM t":                                                               false,
		"COMMIT; BEGIN":                                                                     true,
	} {
		if got := AnyBeginsTx(sql); got != want {
			t.Errorf("AnyBeginsTx(%q) = %v, want %v", sql, got, want)
		}
	}
}

func TestCreatesTemp(t *testing.T) {
	for sql, want := range map[string]bool{
		"CREATE TEMP TABLE t (x)":                                true,
		"create temporary view v as select 1":                    true,
		"CREATE TEMP TRIGGER tr INSERT ON t BEGIN SELECT 1; END": true,
		"CREATE TABLE temp.t (x)":                                true,
		"CREATE TABLE IF NOT EXISTS \"temp\".t (x)":              true,
		"CREATE UNIQUE INDEX [TEMP].i ON t (x)":                  true,
		"CREATE VIEW Temp . v AS SELECT 1":                       true,
		"/* c */ CREATE TEMP TABLE t (x)":                        true,
		"CREATE TABLE t (x)":                                     false,
		"CREATE TABLE main.t (x)":                                false,
		"CREATE TABLE temp (x)":                                  false,
		"CREATE TABLE temporary (x)":                             false,
		"CREATE INDEX i ON temp (x)":                             false,
		"CREATE VIRTUAL TABLE t USING fts5(x)":                   false,
		"SELECT 'CREATE TEMP TABLE'":                             false,
		"INSERT INTO temp.t VALUES (1)":                          false,
		"":                                                       false,
	} {
		if got := CreatesTemp(sql); got != want {
			t.Errorf("CreatesTemp(%q) = %v, want %v", sql, got, want)
		}
	}
}
