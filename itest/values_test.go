package itest

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/testmatrix"
)

// roundTrip inserts v into column col of table (which has an INTEGER
// PRIMARY KEY id) and reads the row back, in one SELECT, into typed (a
// pointer for a typed Scan), into an any, and the server's typeof().
func roundTrip(t *testing.T, db *sql.DB, table, col string, v, typed any) (got any, typ string) {
	t.Helper()
	ctx := t.Context()
	res, err := db.ExecContext(ctx, "INSERT INTO "+table+" ("+col+") VALUES (?)", v)
	require.NoError(t, err, "insert %T into %s.%s", v, table, col)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	require.NotZero(t, id, "LastInsertId after INSERT")
	err = db.QueryRowContext(ctx,
		"SELECT "+col+", "+col+", typeof("+col+") FROM "+table+" WHERE id = ?", id).Scan(typed, &got, &typ)
	require.NoError(t, err, "select row %d back from %s", id, table)
	return got, typ
}

// valueCase is a value of Go type T for a round trip through a column.
type valueCase[T any] struct {
	name string
	v    T
}

// forEachValue round-trips every case's value on every variant through
// column v, declared colType, of a fresh table named after name, and
// hands check what came back: typed from a Scan into a T, got from a
// Scan into an any, and typ the server's typeof(v).
func forEachValue[T any](t *testing.T, name, colType string, cases []valueCase[T],
	check func(t *testing.T, db *sql.DB, table string, want, typed T, got any, typ string)) {
	t.Helper()
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, name, "(id INTEGER PRIMARY KEY, v "+colType+")")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var typed T
				got, typ := roundTrip(t, db, table, "v", tc.v, &typed)
				check(t, db, table, tc.v, typed, got, typ)
			})
		}
	})
}

func TestValueIntegers(t *testing.T) {
	cases := []valueCase[int64]{
		{"zero", 0},
		{"one", 1},
		{"minus_one", -1},
		{"min_int64", math.MinInt64},
		{"max_int64", math.MaxInt64},
		{"above_float_precision", 1<<53 + 1},
		{"min_int64_plus_one", math.MinInt64 + 1},
	}
	forEachValue(t, "val_int", "INTEGER", cases, func(t *testing.T, db *sql.DB, table string, want, typed int64, got any, typ string) {
		require.Equal(t, "integer", typ, "server-side type of %d", want)
		require.Equal(t, want, typed, "typed Scan into int64")
		require.Equal(t, want, got, "Scan into any must give int64(%d)", want)

		// The server stored exactly this number (not a float
		// approximation that happens to round-trip).
		var text string
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT CAST(v AS TEXT) FROM "+table+" WHERE v = ?", want).Scan(&text))
		require.Equal(t, strconv.FormatInt(want, 10), text, "decimal text of the stored integer")
	})
}

func TestValueFloats(t *testing.T) {
	cases := []valueCase[float64]{
		{"zero", 0},
		{"negative_zero", math.Copysign(0, -1)},
		{"one_and_half", 1.5},
		{"negative", -273.15},
		{"tenth", 0.1},
		{"third", 1.0 / 3},
		{"integral", 2},
		{"large_integral", 1e20},
		{"max_float64", math.MaxFloat64},
		{"minus_max_float64", -math.MaxFloat64},
		{"smallest_nonzero", math.SmallestNonzeroFloat64},
		{"smallest_normal", 2.2250738585072014e-308},
		{"1e308", 1e308},
		{"minus_1e-308", -1e-308},
		{"pi", math.Pi},
	}
	forEachValue(t, "val_real", "REAL", cases, func(t *testing.T, _ *sql.DB, _ string, want, typed float64, got any, typ string) {
		require.Equal(t, "real", typ, "server-side type of %v", want)
		if want == 0 {
			// SQLite may store an integral REAL as an integer on
			// disk, so the sign of -0.0 is not guaranteed to
			// survive; the value must still be a float zero.
			require.Zero(t, typed, "typed Scan")
			require.IsType(t, float64(0), got, "Scan into any must give float64")
			require.Zero(t, got.(float64))
			return
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(typed),
			"typed Scan: want %v (%b), got %v", want, want, typed)
		require.IsType(t, float64(0), got, "Scan into any must give float64, even for integral values")
		require.Equal(t, math.Float64bits(want), math.Float64bits(got.(float64)),
			"Scan into any: want %v, got %v", want, got)
	})
}

// allControlChars is U+0000..U+001F.
func allControlChars() string {
	var b strings.Builder
	for c := range 0x20 {
		b.WriteByte(byte(c))
	}
	return b.String()
}

func TestValueTexts(t *testing.T) {
	hundredKB := strings.Repeat("0123456789abcdef\"\\\n\té€😀<>&", 100*1024/30+1)[:100*1024-3] + "end"
	cases := []valueCase[string]{
		{"empty", ""},
		{"ascii", "hello, world"},
		{"latin_and_cjk", "héllo wörld 日本語 Ελληνικά"},
		{"emoji_non_bmp", "😀🎉 𝄞 🏳️‍🌈 \U0010FFFF"},
		{"nul_bytes", "a\x00b\x00\x00c\x00"},
		{"json_escapes", "quote\" backslash\\ slash/ bs\b ff\f nl\n cr\r tab\t"},
		{"line_and_paragraph_separators", "a\u2028b\u2029c"},
		{"control_chars", allControlChars()},
		{"del_bom_replacement", "\x7f\ufeff\ufffd"},
		{"html_specials", "<script>alert('x')</script> & &amp;"},
		{"looks_like_number", "00123"},
		{"looks_like_hrana_json", `{"type":"integer","value":"1"}`},
		{"sql_quote", "it's; DROP TABLE x; --"},
		{"100KB", hundredKB},
	}
	forEachValue(t, "val_text", "TEXT", cases, func(t *testing.T, db *sql.DB, table string, want, typed string, got any, typ string) {
		require.Equal(t, "text", typ, "server-side type")
		require.True(t, typed == want, "typed Scan: text differs (len want %d, got %d)", len(want), len(typed))
		s, ok := got.(string)
		require.True(t, ok, "Scan into any must give string, got %T", got)
		require.True(t, s == want, "Scan into any: text differs (len want %d, got %d)", len(want), len(s))

		// The server holds exactly these bytes.
		var h string
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT hex(v) FROM "+table+" WHERE v = ?", want).Scan(&h))
		require.True(t, h == strings.ToUpper(hex.EncodeToString([]byte(want))),
			"server-side bytes differ from what was sent")
	})
}

func TestValueBlobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	oneMB := make([]byte, 1<<20)
	for i := range oneMB {
		oneMB[i] = byte(rng.Uint32())
	}
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	cases := []valueCase[[]byte]{
		{"empty", []byte{}},
		{"one_zero_byte", []byte{0}},
		{"all_byte_values", allBytes},
		{"invalid_utf8", []byte{0xff, 0xfe, 0xc3, 0x28}},
		{"base64_padding_lengths", []byte("ab")},
		{"1MB", oneMB},
	}
	forEachValue(t, "val_blob", "BLOB", cases, func(t *testing.T, db *sql.DB, table string, want, typed []byte, got any, typ string) {
		require.Equal(t, "blob", typ, "server-side type: an empty []byte is a blob, not NULL")
		require.True(t, string(typed) == string(want), "typed Scan: blob differs (len want %d, got %d)", len(want), len(typed))
		b, ok := got.([]byte)
		require.True(t, ok, "Scan into any must give []byte, got %T", got)
		require.True(t, string(b) == string(want), "Scan into any: blob differs (len want %d, got %d)", len(want), len(b))

		// The server holds exactly these bytes.
		var n int64
		var head, tail string
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT length(v), hex(substr(v, 1, 64)), hex(substr(v, -64, 64)) FROM "+table+" WHERE typeof(v) = 'blob' AND v = ?",
			want).Scan(&n, &head, &tail))
		require.EqualValues(t, len(want), n, "server-side length")
		up := func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }
		require.Equal(t, up(want[:min(64, len(want))]), head, "server-side first bytes")
		require.Equal(t, up(want[max(0, len(want)-64):]), tail, "server-side last bytes")
	})
}

// TestValueNullColumns stores NULL (passed in different ways) in columns of
// every declared type and scans it into nullable destinations and any.
func TestValueNullColumns(t *testing.T) {
	type dest struct {
		ptr    any
		isNull func() bool
	}
	cases := []struct {
		col  string
		arg  any // a NULL argument
		dest func() dest
	}{
		{"i", nil, func() dest {
			var d sql.NullInt64
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"r", (*float64)(nil), func() dest {
			var d sql.NullFloat64
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"t", sql.NullString{}, func() dest {
			var d sql.NullString
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"b", nil, func() dest {
			d := []byte("sentinel")
			return dest{&d, func() bool { return d == nil }}
		}},
		{"d", (*time.Time)(nil), func() dest {
			var d sql.NullTime
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"dd", sql.NullTime{}, func() dest {
			d := new(time.Time)
			return dest{&d, func() bool { return d == nil }}
		}},
		{"ts", sql.Null[time.Time]{}, func() dest {
			var d sql.Null[time.Time]
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"n", sql.NullInt64{}, func() dest {
			var d sql.NullInt64
			return dest{&d, func() bool { return !d.Valid }}
		}},
		{"u", sql.Null[string]{}, func() dest {
			var d sql.Null[string]
			return dest{&d, func() bool { return !d.Valid }}
		}},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "val_null",
			"(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, d DATETIME, dd DATE, ts TIMESTAMP, n NUMERIC, u)")
		for _, tc := range cases {
			t.Run(tc.col, func(t *testing.T) {
				d := tc.dest()
				got, typ := roundTrip(t, db, table, tc.col, tc.arg, d.ptr)
				require.Equal(t, "null", typ, "argument %T(%v) must be stored as NULL", tc.arg, tc.arg)
				require.True(t, d.isNull(), "typed Scan of NULL into %T must say NULL", d.ptr)
				require.Nil(t, got, "Scan of NULL into any must give nil")
			})
		}
	})
}

// TestValueNullTypes round-trips the sql.Null* types, valid and not.
func TestValueNullTypes(t *testing.T) {
	when := time.Date(2023, 4, 5, 6, 7, 8, 9000, time.UTC)
	cases := []struct {
		name string
		run  nullTypeCheck
	}{
		{"NullString_valid", nullTypeRoundTrip("t", sql.NullString{String: "x", Valid: true})},
		{"NullString_null", nullTypeRoundTrip("t", sql.NullString{})},
		{"NullInt64_valid", nullTypeRoundTrip("i", sql.NullInt64{Int64: -42, Valid: true})},
		{"NullInt64_null", nullTypeRoundTrip("i", sql.NullInt64{})},
		{"NullFloat64_valid", nullTypeRoundTrip("r", sql.NullFloat64{Float64: 2.5, Valid: true})},
		{"NullFloat64_null", nullTypeRoundTrip("r", sql.NullFloat64{})},
		{"NullTime_valid", nullTypeRoundTrip("d", sql.NullTime{Time: when, Valid: true})},
		{"NullTime_null", nullTypeRoundTrip("d", sql.NullTime{})},
		{"NullBool_valid", nullTypeRoundTrip("i", sql.NullBool{Bool: true, Valid: true})},
		{"NullInt32_valid", nullTypeRoundTrip("i", sql.NullInt32{Int32: math.MinInt32, Valid: true})},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "val_nulltypes", "(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, d DATETIME)")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, db, table) })
		}
	})
}

// nullTypeCheck is a case of TestValueNullTypes.
type nullTypeCheck func(t *testing.T, db *sql.DB, table string)

// nullTypeRoundTrip stores v in column col and scans it back into a T,
// which must equal v.
func nullTypeRoundTrip[T any](col string, v T) nullTypeCheck {
	return func(t *testing.T, db *sql.DB, table string) {
		var d T
		roundTrip(t, db, table, col, v, &d)
		require.Equal(t, v, d, "Scan into %T", &d)
	}
}

// TestSQLTextEncoding sends SQL texts and column names with characters that
// need escaping in JSON, and reads them back.
func TestSQLTextEncoding(t *testing.T) {
	var ctl strings.Builder
	for c := 1; c < 0x20; c++ {
		ctl.WriteByte(byte(c))
	}
	cases := []struct {
		name    string
		literal string // the text of a SQL string literal (without quotes)
	}{
		{"control_chars", ctl.String()},
		{"json_specials", `"quoted" back\slash /slash`},
		{"separators_and_emoji", "a\u2028 \u2029 😀 𝄞 é"},
		{"html_specials", "<b>&amp;</b>"},
		{"doubled_quote", "it''s"},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		for _, tc := range cases {
			t.Run("literal_"+tc.name, func(t *testing.T) {
				want := strings.ReplaceAll(tc.literal, "''", "'")
				var got string
				require.NoError(t, db.QueryRowContext(t.Context(), "SELECT '"+tc.literal+"'").Scan(&got))
				require.Equal(t, want, got)
			})
		}
		t.Run("column_names", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(),
				`SELECT 1 AS "ünïcödé 😀", 2 AS "a""b", 3 AS "tab`+"\t"+`nl`+"\n"+`x", 4 AS "back\slash"`)
			require.NoError(t, err)
			defer rows.Close()
			cols, err := rows.Columns()
			require.NoError(t, err)
			require.Equal(t, []string{"ünïcödé 😀", `a"b`, "tab\tnl\nx", `back\slash`}, cols)
		})
	})
}

// TestFloatSpecialValues pins the float policy of docs/GUIDE.md "Values" on every
// codec: NaN arguments are stored as NULL (what SQLite does with NaN, and
// what a NaN result becomes); ±Inf travels exactly over Protobuf, while
// JSON codecs refuse ±Inf arguments and read both infinities as +Inf
// (sqld writes {"type":"float","value":null} for either sign).
func TestFloatSpecialValues(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
		ctx := t.Context()
		table := freshTable(t, db, "floats", "(id INTEGER PRIMARY KEY, v REAL)")
		typeOf := func(id int) (typ string, v sql.NullFloat64) {
			t.Helper()
			require.NoError(t, db.QueryRowContext(ctx, "SELECT typeof(v), v FROM "+table+" WHERE id = ?", id).Scan(&typ, &v))
			return typ, v
		}

		t.Run("nan_argument_is_null", func(t *testing.T) {
			mustExec(t, db, "INSERT INTO "+table+" (id, v) VALUES (1, ?)", math.NaN())
			typ, v := typeOf(1)
			require.Equal(t, "null", typ)
			require.False(t, v.Valid)
		})
		t.Run("nan_result_is_null", func(t *testing.T) {
			var got any
			require.NoError(t, db.QueryRowContext(ctx, "SELECT 9e999 - 9e999").Scan(&got))
			require.Nil(t, got)
		})
		t.Run("infinite_results", func(t *testing.T) {
			var pos, neg float64
			require.NoError(t, db.QueryRowContext(ctx, "SELECT 9e999, -9e999").Scan(&pos, &neg))
			if isProtobuf(variant) {
				require.True(t, math.IsInf(pos, 1), "9e999 reads as +Inf, got %v", pos)
				require.True(t, math.IsInf(neg, -1), "-9e999 reads as -Inf, got %v", neg)
			} else {
				// JSON writes both as null, and PROTOCOL.md §8.2 reads that as NaN.
				require.True(t, math.IsNaN(pos), "JSON loses infinities: 9e999 reads as NaN, got %v", pos)
				require.True(t, math.IsNaN(neg), "JSON loses infinities: -9e999 reads as NaN, got %v", neg)
			}
		})
		t.Run("infinite_arguments", func(t *testing.T) {
			for id, arg := range map[int]float64{2: math.Inf(1), 3: math.Inf(-1)} {
				_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, v) VALUES (?, ?)", id, arg)
				if !isProtobuf(variant) {
					require.ErrorContains(t, err, "cannot be sent with a JSON codec")
					require.Zero(t, countWhere(t, db, table, fmt.Sprintf("id = %d", id)), "nothing stored")
					continue
				}
				require.NoError(t, err)
				typ, v := typeOf(id)
				require.Equal(t, "real", typ)
				require.Equal(t, arg, v.Float64)
				var above bool
				require.NoError(t, db.QueryRowContext(ctx, "SELECT abs(v) > 1e308 FROM "+table+" WHERE id = ?", id).Scan(&above))
				require.True(t, above, "stored as an infinity, not a finite value")
			}
		})
	})
}
