package libsql

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// scanParams is sqlscan.ScanParams, whose tables of statements are
// sqlscan's TestScanParams and TestScanParamsMulti; what the driver does
// with its answer is bindArgs, tested here.

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
		if err := bindArgs(&st, analyzeSQL("SELECT ?, ?"), pos(int64(1), "x")); err != nil {
			t.Fatal(err)
		}
		if len(st.Args) != 2 || len(st.NamedArgs) != 0 || st.Args[0].Int != 1 || string(st.Args[1].Bytes) != "x" {
			t.Fatalf("got %+v", st)
		}
	})
	t.Run("named, unused ignored", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, analyzeSQL("SELECT :a, @b"), named("a", int64(1), "b", int64(2), "c", int64(3))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 2 || st.NamedArgs[0].Name != "a" || st.NamedArgs[1].Name != "b" || len(st.Args) != 0 {
			t.Fatalf("got %+v", st.NamedArgs)
		}
	})
	t.Run("positional for named parameters", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, analyzeSQL("SELECT :a, $b, :a"), pos(int64(1), int64(2))); err != nil {
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
		if err := bindArgs(&st, analyzeSQL("SELECT #a, :b::c, @d(e)"), pos(int64(1), int64(2), int64(3))); err != nil {
			t.Fatal(err)
		}
		if len(st.Args) != 0 || len(st.NamedArgs) != 3 || st.NamedArgs[0].Name != "#a" || st.NamedArgs[1].Name != ":b::c" || st.NamedArgs[2].Name != "@d(e)" {
			t.Fatalf("got args %+v, named %+v", st.Args, st.NamedArgs)
		}
	})
	t.Run("named for #name", func(t *testing.T) {
		var st codec.Stmt
		if err := bindArgs(&st, analyzeSQL("SELECT #a"), named("a", int64(1))); err != nil {
			t.Fatal(err)
		}
		if len(st.NamedArgs) != 1 || st.NamedArgs[0].Name != "a" {
			t.Fatalf("got %+v", st.NamedArgs)
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
		{"count", "SELECT :a, :b", pos(int64(1)), "2 parameters but 1 argument were given"},
		// PROTOCOL.md §8.1: the arguments match the parameters exactly.
		{"too many", "SELECT ?", pos(int64(1), int64(2)), "1 parameter but 2 arguments"},
		{"too few", "SELECT ?, ?3", pos(int64(1), int64(2)), "3 parameters but 2 arguments"},
		{"none", "SELECT ?", nil, "1 parameter but no arguments"},
		{"named missing", "SELECT :a, @b", named("a", int64(1)), "no argument for the parameter(s) @b"},
		{"named for ?NNN", "SELECT ?1", named("1", int64(1), "?1", int64(2)), "take positional arguments"},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			var st codec.Stmt
			err := bindArgs(&st, analyzeSQL(tt.sql), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want error containing %q", err, tt.want)
			}
			var e *Error
			if !errors.Is(err, ErrArgs) || !errors.As(err, &e) || !e.SafeToRetry() {
				t.Errorf("%v: not an ErrArgs error that is safe to retry", err)
			}
		})
	}
}
