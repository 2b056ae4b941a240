package libsql

import (
	"database/sql/driver"
	"slices"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

func TestScanParams(t *testing.T) {
	tests := []struct {
		sql        string
		names      []string
		named, num bool
	}{
		{"SELECT 1", nil, false, false},
		{"SELECT ?, ?", []string{"", ""}, false, true},
		{"SELECT ?3, ?", []string{"", "", "?3", ""}, false, true}, // SQLite names ?NNN
		{"SELECT :a, @b, $c, :a", []string{":a", "@b", "$c"}, true, false},
		{"SELECT ':a', \"@b\", `$c`, [d:e] -- :x\n /* @y */ , :z", []string{":z"}, true, false},
		{"SELECT 'it''s :a' || :b", []string{":b"}, true, false},
		{"SELECT $a::b(c), x$y", []string{"$a::b(c)"}, true, false},
		{"SELECT :a::b, @c(d), #e", []string{":a::b", "@c(d)", "#e"}, true, false}, // were :a, :b, @c and none
		{"SELECT :a, ?", []string{":a", ""}, true, true},
		{"SELECT ?2, :a", []string{"", "?2", ":a"}, true, true},
		{"SELECT 'unterminated :a", nil, false, false},
		{"SELECT :é", []string{":é"}, true, false},
	}
	for _, tt := range tests {
		p := scanParams(tt.sql)
		if !slices.Equal(p.Names, tt.names) || p.Named != tt.named || p.Numeric != tt.num {
			t.Errorf("scanParams(%q) = %q named=%v num=%v; want %q named=%v num=%v",
				tt.sql, p.Names, p.Named, p.Numeric, tt.names, tt.named, tt.num)
		}
	}
}

func TestScanParamsMulti(t *testing.T) {
	tests := []struct {
		sql   string
		multi bool
	}{
		{"INSERT INTO t VALUES (?)", false},
		{"INSERT INTO t VALUES (?);", false},
		{"INSERT INTO t VALUES (?); -- done\n /* really */ ;; \t", false},
		{"SELECT ';', \";\", [;], `;` -- ;\n", false},
		{"SELECT 1; SELECT 2", true},
		{"SELECT 1;SELECT 2", true},
		{"SELECT 1; 'x'", true},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", true}, // one statement, but deferral only needs "maybe several"
		{"SELECT 1; /* unterminated", false},
		{"; SELECT 1", false}, // an empty statement is none (was multi)
	}
	for _, tt := range tests {
		if got := scanParams(tt.sql).Multi; got != tt.multi {
			t.Errorf("scanParams(%q).Multi = %v, want %v", tt.sql, got, tt.multi)
		}
	}
}

func TestBindArgs(t *testing.T) {
	pos := func(vs ...any) []driver.NamedValue {
		out := make([]driver.NamedValue, len(vs))
		for i, v := range vs {
			out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		return out
	}
	named := func(kv ...any) []driver.NamedValue {
		var out []driver.NamedValue
		for i := 0; i < len(kv); i += 2 {
			out = append(out, driver.NamedValue{Ordinal: i/2 + 1, Name: kv[i].(string), Value: kv[i+1]})
		}
		return out
	}
	t.Run("positional", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT ?, ?"), pos(int64(1), "x")); err != nil {
			t.Fatal(err)
		}
		if len(st.Args) != 2 || len(st.NamedArgs) != 0 || st.Args[0].Int != 1 || string(st.Args[1].Bytes) != "x" {
			t.Fatalf("got %+v", st)
		}
	})
	t.Run("named, unused ignored", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT :a, @b"), named("a", int64(1), "b", int64(2), "c", int64(3))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 2 || st.NamedArgs[0].Name != "a" || st.NamedArgs[1].Name != "b" || len(st.Args) != 0 {
			t.Fatalf("got %+v", st.NamedArgs)
		}
	})
	t.Run("positional for named parameters", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT :a, $b, :a"), pos(int64(1), int64(2))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 2 || st.NamedArgs[0].Name != ":a" || st.NamedArgs[1].Name != "$b" || st.NamedArgs[1].Value.Int != 2 {
			t.Fatalf("got %+v", st.NamedArgs)
		}
	})
	// sqld binds #name, :a::b and @c(d) by name only (from named_args), as
	// SQLite names them; they were sent as positional arguments before,
	// which sqld cannot bind to a named parameter.
	t.Run("positional for #name and Tcl names", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT #a, :b::c, @d(e)"), pos(int64(1), int64(2), int64(3))); err != nil {
			t.Fatal(err)
		}
		if len(st.Args) != 0 || len(st.NamedArgs) != 3 || st.NamedArgs[0].Name != "#a" || st.NamedArgs[1].Name != ":b::c" || st.NamedArgs[2].Name != "@d(e)" {
			t.Fatalf("got args %+v, named %+v", st.Args, st.NamedArgs)
		}
	})
	t.Run("named for #name", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT #a"), named("a", int64(1))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 1 || st.NamedArgs[0].Name != "a" {
			t.Fatalf("got %+v", st.NamedArgs)
		}
	})
	t.Run("named for ?NNN ignored", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, scanParams("SELECT ?1"), named("1", int64(1), "?1", int64(2))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 0 || len(st.Args) != 0 {
			t.Fatalf("got args %+v, named %+v", st.Args, st.NamedArgs)
		}
	})
	errCases := []struct {
		name string
		sql  string
		args []driver.NamedValue
		want string
	}{
		{"mixed args", "SELECT ?, :a", append(pos(int64(1)), named("a", int64(2))...), "mix positional and named"},
		{"mixed params", "SELECT ?, :a", pos(int64(1), int64(2)), "mixes ? and named"},
		{"count", "SELECT :a, :b", pos(int64(1)), "2 parameters but 1 arguments"},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			var st codec.Stmt
			err := bindArgs(&st, scanParams(tt.sql), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}
