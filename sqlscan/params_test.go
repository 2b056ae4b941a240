package sqlscan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestScanParams(t *testing.T) {
	tests := []struct {
		sql        string
		names      []string
		named, num bool
	}{
		{"SELECT 1", nil, false, false},
		{"SELECT ?, ?", []string{"", ""}, false, true},
		{"SELECT ?3, ?", []string{"", "", "?3", ""}, false, true},
		{"SELECT ?2, ?1, ?2, ?", []string{"?1", "?2", ""}, false, true},
		{"SELECT ?, ?1", []string{"?1"}, false, true}, // ?1 names the first ?
		{"SELECT ?01, ?1", []string{"?01"}, false, true},
		{"SELECT :a, @b, $c, #d, :a", []string{":a", "@b", "$c", "#d"}, true, false},
		{"SELECT :a, :A", []string{":a", ":A"}, true, false}, // names are case-sensitive
		{"SELECT ':a', \"@b\", `$c`, [d:e] -- :x\n /* @y */ , :z", []string{":z"}, true, false},
		{"SELECT 'it''s :a' || :b", []string{":b"}, true, false},
		{"SELECT $a::b(c), x$y", []string{"$a::b(c)"}, true, false},
		{"SELECT :a::b, @c(d)", []string{":a::b", "@c(d)"}, true, false},
		{"SELECT :a, ?", []string{":a", ""}, true, true},
		{"SELECT :a, ?1", []string{":a"}, true, true}, // ?1 is :a
		{"SELECT ?2, :a", []string{"", "?2", ":a"}, true, true},
		{"SELECT ?0, ?32767, ?99999999999999999999", nil, false, true}, // out of range: SQLite refuses
		{"SELECT ?32766", append(make([]string, 32765), "?32766"), false, true},
		{"SELECT ?32766, ?, :a", append(make([]string, 32765), "?32766"), true, true}, // past the limit: SQLite refuses
		{"SELECT 'unterminated :a", nil, false, false},
		{"SELECT /* unterminated :a", nil, false, false},
		{"SELECT :é, $表", []string{":é", "$表"}, true, false},
		{"SELECT $, :, @ a, $(x)", nil, false, false}, // no name: Illegal
		{"SELECT $a(b c)", nil, false, false},
		{"SELECT x'ab', 1e5, :a", []string{":a"}, true, false},
		{"SELECT ?; SELECT :a", []string{"", ":a"}, true, true}, // numbered across statements
	}
	for _, tt := range tests {
		p := ScanParams(tt.sql)
		if !slices.Equal(p.Names, tt.names) || p.Named != tt.named || p.Numeric != tt.num {
			t.Errorf("ScanParams(%q) = %q named=%v num=%v; want %q named=%v num=%v",
				tt.sql, p.Names, p.Named, p.Numeric, tt.names, tt.named, tt.num)
		}
	}
}

func TestScanParamsMulti(t *testing.T) {
	tests := []struct {
		sql   string
		multi bool
	}{
		{"", false},
		{"INSERT INTO t VALUES (?)", false},
		{"INSERT INTO t VALUES (?);", false},
		{"INSERT INTO t VALUES (?); -- done\n /* really */ ;; \t", false},
		{";; SELECT 1", false}, // empty statements are none
		{"SELECT ';', \";\", [;], `;`, $a(;) -- ;\n", false},
		{"SELECT 1 /* ; SELECT 2 */", false},
		{"SELECT 1; SELECT 2", true},
		{"SELECT 1;SELECT 2", true},
		{"SELECT 1; 'x'", true},
		{"SELECT 1; ?", true},
		{"SELECT 1; -- x\nSELECT 2", true},
		// A trigger's body is part of its statement, as SQLite splits a
		// text (sqlite3_complete's rule).
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", false},
		{"CREATE TRIGGER t1r1 UPDATE ON t1 BEGIN SELECT 1; END;", false},
		{"create temporary trigger tr delete on t begin delete from u; insert into u values (1); end ; ;", false},
		{"CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT ';'; END; SELECT ?", true},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT CASE WHEN 1 THEN 2 END; END; SELECT 1", true},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END /* c */ ; -- d\n", false},
		{"EXPLAIN QUERY PLAN CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; END", false},
		{"CREATE TABLE trigger (x); SELECT 1", true}, // TRIGGER only right after CREATE [TEMP]
		{"CREATE TABLE t (x); CREATE INDEX i ON t (x)", true},
		{"SELECT 1; CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; END", true},
		{"SELECT 1 AS \"create\"; SELECT 2", true},
		{"SELECT 1; /* unterminated", false},
		{"SELECT 1; 'unterminated", true},
	}
	for _, tt := range tests {
		if got := ScanParams(tt.sql).Multi; got != tt.multi {
			t.Errorf("ScanParams(%q).Multi = %v, want %v", tt.sql, got, tt.multi)
		}
	}
}

// Past indexAfter names, lookups go through a map: the numbering is the
// same either way.
func TestScanParamsMany(t *testing.T) {
	var sql strings.Builder
	var want []string
	sql.WriteString("SELECT ")
	for i := range 3 * indexAfter {
		fmt.Fprintf(&sql, ":p%d, ?%d, :p%d, ", i, 2*i+2, i/2)
		want = append(want, fmt.Sprintf(":p%d", i), fmt.Sprintf("?%d", 2*i+2))
	}
	p := ScanParams(sql.String())
	if !slices.Equal(p.Names, want) {
		t.Fatalf("ScanParams of %d names:\n got %q\nwant %q", len(want), p.Names, want)
	}
}

func BenchmarkScanParams(b *testing.B) {
	for _, bm := range []struct{ name, sql string }{
		{"none", "SELECT id, name FROM users WHERE name = 'x' ORDER BY id"},
		{"positional", "INSERT INTO t (a, b, c) VALUES (?, ?, ?)"},
		{"named", "SELECT * FROM t WHERE a = :a AND b = :b OR a = :a"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ScanParams(bm.sql)
			}
		})
	}
}

func TestStatementEnd(t *testing.T) {
	tests := []struct {
		sql  string
		want string // the first statement
	}{
		{"", ""},
		{"SELECT 1", "SELECT 1"},
		{"SELECT 1; SELECT 2", "SELECT 1;"},
		{";; SELECT 1 ;; SELECT 2", ";; SELECT 1 ;"},
		{"SELECT ';' -- ;\n; x", "SELECT ';' -- ;\n;"},
		{"CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; UPDATE t SET a = 1; END; SELECT 2", "CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; UPDATE t SET a = 1; END;"},
		{"CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; END", "CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; END"},
		{"CREATE TEMP TRIGGER tr INSERT ON t BEGIN SELECT 1 END; END; x", "CREATE TEMP TRIGGER tr INSERT ON t BEGIN SELECT 1 END; END;"},
	}
	for _, tt := range tests {
		if got := StatementEnd(tt.sql); tt.sql[:got] != tt.want {
			t.Errorf("StatementEnd(%q) = %d (%q), want %q", tt.sql, got, tt.sql[:got], tt.want)
		}
	}
}
