package sqlscan

import (
	"reflect"
	"testing"
)

// analyzeCases are texts of every kind the rules tell apart.
var analyzeCases = []string{
	"", ";", "-- only a comment", "SELECT 1", "  /* c */ select * from t where a = ? and b = :b",
	"VALUES (1), (?2)", "EXPLAIN DELETE FROM t", "WITH x AS (SELECT 1) SELECT * FROM x",
	"WITH x AS (SELECT 1) DELETE FROM t", "INSERT INTO t VALUES (?)", "BEGIN", "begin immediate transaction",
	"END", "COMMIT", "ROLLBACK", "ROLLBACK TO sp", "SAVEPOINT sp", "RELEASE sp", "RELEASE",
	"PRAGMA foreign_keys = ON", "PRAGMA main.cache_size(-2000)", "PRAGMA user_version", "pragma X.Y = 'a'",
	"SELECT 1; SELECT 2", "CREATE TABLE a (x); BEGIN; INSERT INTO a VALUES (1)", "BEGIN; COMMIT",
	"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET a = 1; END", "(SELECT 1)", "x'00'", "'unterminated",
}

// Analyze says what each rule says on its own.
func TestAnalyze(t *testing.T) {
	for _, sql := range analyzeCases {
		checkAnalyze(t, sql)
	}
}

func checkAnalyze(t *testing.T, sql string) {
	t.Helper()
	got := Analyze(sql)
	want := Statement{Params: ScanParams(sql), Keyword: FirstKeyword(sql)}
	if want.Multi {
		want.BeginsTx = AnyBeginsTx(sql)
	} else {
		want.ReadOnly = ReadOnly(sql)
		want.Tx = TxControl(sql)
		want.BeginsTx = want.Tx == TxBegin || want.Tx == TxSavepoint
		if key, name, ok := Pragma(sql); ok {
			want.PragmaKey, want.PragmaName = key, name
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Analyze(%q) = %+v, want %+v", sql, got, want)
	}
	if got.SetsPragma() != (got.PragmaName != "") {
		t.Errorf("Analyze(%q).SetsPragma() = %v", sql, got.SetsPragma())
	}
}

// FuzzAnalyze: on any text, Analyze agrees with the rules one by one.
func FuzzAnalyze(f *testing.F) {
	for _, sql := range analyzeCases {
		f.Add(sql)
	}
	f.Fuzz(func(t *testing.T, sql string) { checkAnalyze(t, sql) })
}

func TestAnalyzeAllocs(t *testing.T) {
	for sql, want := range map[string]float64{
		"SELECT v FROM t WHERE id = 1":               0,
		"SELECT v FROM t WHERE id = ?":               1,
		"WITH x AS (SELECT 1) SELECT * FROM x":       0,
		"BEGIN IMMEDIATE":                            0,
		"CREATE TABLE a (x); INSERT INTO a VALUES 1": 0,
	} {
		if got := testing.AllocsPerRun(100, func() { _ = Analyze(sql) }); got != want {
			t.Errorf("Analyze(%q): %v allocations, want %v", sql, got, want)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	const sql = "SELECT id, name, email FROM users WHERE id = ? AND status = :status"
	for b.Loop() {
		_ = Analyze(sql)
	}
}

// BenchmarkAnalyzeSeparately is what the rules cost one by one, as the
// driver called them before Analyze.
func BenchmarkAnalyzeSeparately(b *testing.B) {
	const sql = "SELECT id, name, email FROM users WHERE id = ? AND status = :status"
	for b.Loop() {
		_ = ScanParams(sql)
		_ = TxControl(sql)
		_ = ReadOnly(sql)
		_, _, _ = Pragma(sql)
		_ = FirstKeyword(sql)
	}
}
