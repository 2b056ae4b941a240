package itest

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestArgStyles covers every parameter style SQLite has and how arguments
// bind to them.
func TestArgStyles(t *testing.T) {
	cases := []struct {
		name    string
		sql     string
		args    []any
		want    []any
		wantErr string // substring of the error; "" for success
	}{
		{name: "question_marks", sql: "SELECT ?, ?", args: []any{1, "a"}, want: []any{int64(1), "a"}},
		{name: "numbered", sql: "SELECT ?2, ?1", args: []any{"x", "y"}, want: []any{"y", "x"}},
		{name: "numbered_reused", sql: "SELECT ?1, ?1, ?2", args: []any{7, 8}, want: []any{int64(7), int64(7), int64(8)}},
		{name: "colon_named", sql: "SELECT :a, :b", args: []any{sql.Named("b", 2), sql.Named("a", 1)}, want: []any{int64(1), int64(2)}},
		{name: "at_named", sql: "SELECT @a, @b", args: []any{sql.Named("a", "A"), sql.Named("b", "B")}, want: []any{"A", "B"}},
		{name: "dollar_named", sql: "SELECT $a, $b", args: []any{sql.Named("b", 2.5), sql.Named("a", 1.5)}, want: []any{1.5, 2.5}},
		{name: "named_reused", sql: "SELECT :a, :a + 1", args: []any{sql.Named("a", 10)}, want: []any{int64(10), int64(11)}},
		{name: "positional_values_for_colon_names", sql: "SELECT :a, :b", args: []any{1, 2}, want: []any{int64(1), int64(2)}},
		{name: "positional_values_for_repeated_name", sql: "SELECT :a, :b, :a", args: []any{1, 2}, want: []any{int64(1), int64(2), int64(1)}},
		{name: "positional_values_for_mixed_prefixes", sql: "SELECT @x, $y, :z", args: []any{1, 2, 3}, want: []any{int64(1), int64(2), int64(3)}},
		{name: "unused_named_args_ignored", sql: "SELECT :a", args: []any{sql.Named("a", 1), sql.Named("unused", 2)}, want: []any{int64(1)}},
		{name: "question_mark_in_literal", sql: "SELECT '?', ?", args: []any{5}, want: []any{"?", int64(5)}},
		{name: "names_in_literal_and_comments", sql: "SELECT ':x', /* :y */ :z -- :w\n", args: []any{5}, want: []any{":x", int64(5)}},
		{name: "names_in_quoted_identifier", sql: `SELECT :v AS "a:b"`, args: []any{5}, want: []any{int64(5)}},
		{name: "doubled_quote_in_literal", sql: "SELECT 'it''s :x', :y", args: []any{1}, want: []any{"it's :x", int64(1)}},
		{name: "name_in_bracket_identifier", sql: "SELECT :v AS [a:b]", args: []any{5}, want: []any{int64(5)}},
		{name: "no_args", sql: "SELECT 1", want: []any{int64(1)}},

		{name: "positional_and_named_mixed", sql: "SELECT :a, :b", args: []any{1, sql.Named("b", 2)}, wantErr: "mix"},
		{name: "question_mark_and_name_in_sql", sql: "SELECT ?, :a", args: []any{1, 2}, wantErr: "named"},
		{name: "too_few_positional", sql: "SELECT ?, ?", args: []any{1}, wantErr: "parameter"},
		{name: "too_many_positional", sql: "SELECT ?", args: []any{1, 2}, wantErr: "parameter"},
		{name: "missing_named", sql: "SELECT :a, :b", args: []any{sql.Named("a", 1)}, wantErr: ":b"},
		{name: "wrong_count_for_colon_names", sql: "SELECT :a, :b", args: []any{1}, wantErr: "2 parameters"},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rows, err := db.QueryContext(t.Context(), tc.sql, tc.args...)
				if tc.wantErr != "" {
					if err == nil {
						rows.Close()
					}
					require.Error(t, err, "%s with %v must fail", tc.sql, tc.args)
					require.ErrorContains(t, err, tc.wantErr)
					return
				}
				require.NoError(t, err, "%s with %v", tc.sql, tc.args)
				defer rows.Close()
				require.True(t, rows.Next(), "one row expected")
				got := make([]any, len(tc.want))
				ptrs := make([]any, len(got))
				for i := range got {
					ptrs[i] = &got[i]
				}
				require.NoError(t, rows.Scan(ptrs...))
				require.Equal(t, tc.want, got)
				require.False(t, rows.Next(), "only one row expected")
				require.NoError(t, rows.Err())
			})
		}
		t.Run("many_positional", func(t *testing.T) {
			const n = 300
			args := make([]any, n)
			for i := range args {
				args[i] = i
			}
			var got string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT json_group_array(column1) FROM (VALUES "+strings.TrimSuffix(strings.Repeat("(?),", n), ",")+")", args...).Scan(&got))
			require.Equal(t, jsonInts(n), got, "arguments bound in order")
		})
		t.Run("many_named_shuffled", func(t *testing.T) {
			const n = 300
			names := make([]string, n)
			args := make([]any, n)
			for i := range n {
				names[i] = fmt.Sprintf("(:p%d)", i)
				// Given in reverse order; the names decide.
				args[n-1-i] = sql.Named(fmt.Sprintf("p%d", i), i)
			}
			var got string
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT json_group_array(column1) FROM (VALUES "+strings.Join(names, ",")+")", args...).Scan(&got))
			require.Equal(t, jsonInts(n), got, "arguments bound by name")
		})
		t.Run("named_args_in_exec", func(t *testing.T) {
			table := freshTable(t, db, "args_named", "(id INTEGER PRIMARY KEY, a TEXT, b INTEGER)")
			for i := range 3 {
				_, err := db.ExecContext(t.Context(), "INSERT INTO "+table+" (a, b) VALUES (:a, @b)",
					sql.Named("b", i), sql.Named("a", "row"))
				require.NoError(t, err)
			}
			var n, sum int64
			require.NoError(t, db.QueryRowContext(t.Context(),
				"SELECT count(*), sum(b) FROM "+table+" WHERE a = $a", sql.Named("a", "row")).Scan(&n, &sum))
			require.EqualValues(t, 3, n)
			require.EqualValues(t, 3, sum)
		})
	})
}

// jsonInts returns "[0,1,...,n-1]".
func jsonInts(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

type upperValuer string

func (u upperValuer) Value() (driver.Value, error) { return strings.ToUpper(string(u)), nil }

type failingValuer struct{}

func (failingValuer) Value() (driver.Value, error) { return nil, errors.New("valuer refused") }

type (
	myInt    int32
	myString string
	myUint64 uint64
	myBytes  []byte
)

// TestArgTypes sends each Go argument type through SELECT ? and checks the
// value the server sends back (an expression has no declared type, so no
// conversion happens on the way back).
func TestArgTypes(t *testing.T) {
	i64 := int64(-5)
	str := "pointed"
	when := time.Date(2022, 2, 2, 2, 2, 2, 2, time.UTC)
	cases := []struct {
		name    string
		arg     any
		want    any
		wantErr string
		// jsonErr: with a JSON codec the argument is refused with this
		// error; with Protobuf it comes back as want.
		jsonErr string
	}{
		{name: "int", arg: int(7), want: int64(7)},
		{name: "int8", arg: int8(math.MinInt8), want: int64(math.MinInt8)},
		{name: "int16", arg: int16(math.MaxInt16), want: int64(math.MaxInt16)},
		{name: "int32", arg: int32(math.MinInt32), want: int64(math.MinInt32)},
		{name: "int64", arg: int64(math.MaxInt64), want: int64(math.MaxInt64)},
		{name: "uint8", arg: uint8(math.MaxUint8), want: int64(math.MaxUint8)},
		{name: "uint16", arg: uint16(math.MaxUint16), want: int64(math.MaxUint16)},
		{name: "uint32", arg: uint32(math.MaxUint32), want: int64(math.MaxUint32)},
		{name: "uint64_max_int64", arg: uint64(math.MaxInt64), want: int64(math.MaxInt64)},
		{name: "uint64_overflow", arg: uint64(math.MaxInt64) + 1, wantErr: "overflows int64"},
		{name: "uint_overflow", arg: uint(math.MaxUint64), wantErr: "overflows int64"},
		{name: "named_uint64_overflow", arg: myUint64(math.MaxUint64), wantErr: "overflows int64"},
		{name: "float32", arg: float32(1.25), want: 1.25},
		{name: "float64", arg: -1e-300, want: -1e-300},
		// NaN is sent as NULL (SQLite stores NaN as NULL); ±Inf only where
		// the codec carries it (docs/GUIDE.md "Values").
		{name: "float64_nan", arg: math.NaN(), want: nil},
		{name: "float32_nan", arg: float32(math.NaN()), want: nil},
		{name: "float64_plus_inf", arg: math.Inf(1), want: math.Inf(1), jsonErr: "+Inf cannot be sent with a JSON codec"},
		{name: "float64_minus_inf", arg: math.Inf(-1), want: math.Inf(-1), jsonErr: "-Inf cannot be sent with a JSON codec"},
		{name: "bool_true", arg: true, want: int64(1)},
		{name: "bool_false", arg: false, want: int64(0)},
		{name: "string", arg: "text", want: "text"},
		{name: "string_invalid_utf8", arg: "\xff\xfe", wantErr: "UTF-8"},
		{name: "bytes", arg: []byte{1, 2, 3}, want: []byte{1, 2, 3}},
		{name: "nil", arg: nil, want: nil},
		{name: "time", arg: when, want: when.Format(libsql.TimeFormat)},
		{name: "valuer", arg: upperValuer("shout"), want: "SHOUT"},
		{name: "nil_pointer_to_valuer", arg: (*upperValuer)(nil), want: nil},
		{name: "failing_valuer", arg: failingValuer{}, wantErr: "valuer refused"},
		{name: "pointer_to_int64", arg: &i64, want: int64(-5)},
		{name: "pointer_to_string", arg: &str, want: "pointed"},
		{name: "nil_pointer", arg: (*int64)(nil), want: nil},
		{name: "named_int_type", arg: myInt(-9), want: int64(-9)},
		{name: "named_string_type", arg: myString("mine"), want: "mine"},
		{name: "named_bytes_type", arg: myBytes{9}, want: []byte{9}},
		{name: "null_string_valuer", arg: sql.NullString{String: "v", Valid: true}, want: "v"},
		{name: "struct_unsupported", arg: struct{ A int }{1}, wantErr: "unsupported"},
		{name: "map_unsupported", arg: map[string]int{}, wantErr: "unsupported"},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var got any
				err := db.QueryRowContext(t.Context(), "SELECT ?", tc.arg).Scan(&got)
				if tc.jsonErr != "" && !isProtobuf(variant) {
					tc.wantErr = tc.jsonErr
				}
				if tc.wantErr != "" {
					require.Error(t, err, "argument %T(%v) must be refused", tc.arg, tc.arg)
					require.ErrorContains(t, err, tc.wantErr)
					return
				}
				require.NoError(t, err, "argument %T(%v)", tc.arg, tc.arg)
				require.Equal(t, tc.want, got, "argument %T(%v) came back as %T(%v)", tc.arg, tc.arg, got, got)
			})
		}
		t.Run("pool_still_works", func(t *testing.T) {
			require.NoError(t, db.PingContext(t.Context()))
		})
	})
}
