package libsql

import (
	"database/sql/driver"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
)

type valuer struct{ v any }

func (v valuer) Value() (driver.Value, error) { return v.v, nil }

type myInt int16

func TestCheckNamedValue(t *testing.T) {
	ts := time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.FixedZone("x", 3600))
	s := "ptr"
	ok := []struct {
		in         any
		want       codec.Value
		infinities bool // the codec carries ±Inf
	}{
		{nil, codec.NullValue(), false},
		{int(-7), codec.IntValue(-7), false},
		{int8(-8), codec.IntValue(-8), false},
		{int64(math.MinInt64), codec.IntValue(math.MinInt64), false},
		{uint8(255), codec.IntValue(255), false},
		{uint32(math.MaxUint32), codec.IntValue(math.MaxUint32), false},
		{uint64(math.MaxInt64), codec.IntValue(math.MaxInt64), false},
		{uint(12), codec.IntValue(12), false},
		{myInt(3), codec.IntValue(3), false},
		{float32(1.5), codec.FloatValue(1.5), false},
		{math.MaxFloat64, codec.FloatValue(math.MaxFloat64), false},
		{math.NaN(), codec.NullValue(), false},
		{float32(math.NaN()), codec.NullValue(), true},
		{valuer{math.NaN()}, codec.NullValue(), false},
		{math.Inf(1), codec.FloatValue(math.Inf(1)), true},
		{float32(math.Inf(-1)), codec.FloatValue(math.Inf(-1)), true},
		{true, codec.IntValue(1), false},
		{false, codec.IntValue(0), false},
		{"héllo", codec.StringValue("héllo"), false},
		{[]byte{}, codec.BlobValue([]byte{}), false},
		{[]byte(nil), codec.NullValue(), false},
		{[]byte{0, 1}, codec.BlobValue([]byte{0, 1}), false},
		{&s, codec.StringValue("ptr"), false},
		{valuer{int64(9)}, codec.IntValue(9), false},
		{valuer{nil}, codec.NullValue(), false},
		{ts, codec.StringValue("2024-02-29 22:59:59.123456789"), false},
		{time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), codec.StringValue("2024-02-29 23:59:59"), false},
		{time.Date(2024, 2, 29, 23, 59, 59, 500000000, time.UTC), codec.StringValue("2024-02-29 23:59:59.5"), false},
		{time.Date(2024, 2, 29, 23, 59, 59, 1000, time.UTC), codec.StringValue("2024-02-29 23:59:59.000001"), false},
	}
	for _, tt := range ok {
		nv := driver.NamedValue{Ordinal: 1, Value: tt.in}
		if err := checkNamedValue(&nv, tt.infinities); err != nil {
			t.Errorf("%T %v: %v", tt.in, tt.in, err)
			continue
		}
		if got := toValue(nv.Value); !got.Equal(tt.want) {
			t.Errorf("%T %v: got %v, want %v", tt.in, tt.in, got, tt.want)
		}
	}
	bad := []struct {
		in   any
		want string
	}{
		{uint64(math.MaxInt64 + 1), "overflows int64"},
		{uint(math.MaxUint64), "overflows int64"},
		{math.Inf(-1), "-Inf cannot be sent with a JSON codec"},
		{float32(math.Inf(1)), "+Inf cannot be sent with a JSON codec"},
		{string([]byte{0xff}), "not valid UTF-8"},
		{struct{}{}, "unsupported type"},
		{valuer{math.Inf(1)}, "+Inf"},
	}
	for _, tt := range bad {
		nv := driver.NamedValue{Ordinal: 2, Value: tt.in}
		err := checkNamedValue(&nv, false)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%T %v: got %v, want error containing %q", tt.in, tt.in, err, tt.want)
		}
	}
}

func TestFromValue(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UTC()
	}
	tests := []struct {
		v        codec.Value
		decltype string
		want     driver.Value
	}{
		{codec.IntValue(5), "INTEGER", int64(5)},
		{codec.FloatValue(-0.5), "REAL", -0.5},
		{codec.StringValue("x"), "TEXT", "x"},
		{codec.BlobValue([]byte{1}), "BLOB", []byte{1}},
		{codec.NullValue(), "DATETIME", nil},
		{codec.StringValue("2024-01-02 03:04:05"), "DATETIME", utc("2024-01-02T03:04:05Z")},
		{codec.StringValue("2024-01-02 03:04:05.5+02:00"), "timestamp", utc("2024-01-02T01:04:05.5Z")},
		{codec.StringValue("2024-01-02T03:04:05.123Z"), "DATETIME", utc("2024-01-02T03:04:05.123Z")},
		{codec.StringValue("2024-01-02 03:04"), "DATETIME", utc("2024-01-02T03:04:00Z")},
		{codec.StringValue("2024-01-02"), "DATE", utc("2024-01-02T00:00:00Z")},
		{codec.StringValue("2024-01-02 22:59:59.123456789Z"), "DATE", utc("2024-01-02T22:59:59.123456789Z")},
		// What TimeFormat writes now, and what it wrote before (with "Z").
		{codec.StringValue("2024-01-02 22:59:59.123456789"), "DATETIME", utc("2024-01-02T22:59:59.123456789Z")},
		{codec.StringValue("2024-01-02 22:59:59.5"), "DATETIME", utc("2024-01-02T22:59:59.5Z")},
		{codec.StringValue("2024-01-02 22:59:59.5Z"), "DATETIME", utc("2024-01-02T22:59:59.5Z")},
		{codec.StringValue("2024-01-02 22:59:59Z"), "DATETIME", utc("2024-01-02T22:59:59Z")},
		{codec.StringValue("0001-01-01 00:00:00Z"), "DATETIME", utc("0001-01-01T00:00:00Z")},
		// strftime('%Y-%m-%d %H:%M:%f'): milliseconds, zeros kept.
		{codec.StringValue("2024-01-02 22:59:59.500"), "TIMESTAMP", utc("2024-01-02T22:59:59.5Z")},
		{codec.StringValue("not a time"), "DATE", "not a time"},
		{codec.StringValue("2024-01-02"), "TEXT", "2024-01-02"},
		{codec.IntValue(1700000000), "DATETIME", int64(1700000000)},
	}
	for _, tt := range tests {
		got := fromValue(&tt.v, classify(tt.decltype), new(arena.Boxer))
		switch w := tt.want.(type) {
		case time.Time:
			g, ok := got.(time.Time)
			if !ok || !g.Equal(w) || g.Location() != time.UTC {
				t.Errorf("%v as %s: got %#v, want %v", tt.v, tt.decltype, got, w)
			}
		case []byte:
			if g, ok := got.([]byte); !ok || string(g) != string(w) {
				t.Errorf("%v: got %#v, want %#v", tt.v, got, w)
			}
		default:
			if got != tt.want {
				t.Errorf("%v as %s: got %#v, want %#v", tt.v, tt.decltype, got, tt.want)
			}
		}
	}
}

func TestTimeRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -7*3600)),
		time.Unix(0, 1).UTC(),
	} {
		v := toValue(tm)
		got, ok := fromValue(&v, kindTime, new(arena.Boxer)).(time.Time)
		if !ok || !got.Equal(tm) {
			t.Errorf("%v: got %v", tm, got)
		}
	}
}

// TestTimeFormatOrder: SQLite compares text byte by byte, so stored times
// must sort as text in time order, at any spacing and across boundaries,
// and against the text SQLite's own date functions write.
func TestTimeFormatOrder(t *testing.T) {
	base := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	east := time.FixedZone("", 5*3600+30*60)
	var times []time.Time
	for _, d := range []time.Duration{
		-time.Second, -time.Millisecond, -time.Microsecond, -1, 0, 1, 2, 10, 999, time.Microsecond,
		time.Microsecond + 1, 10 * time.Microsecond, time.Millisecond, time.Millisecond + time.Microsecond,
		100 * time.Millisecond, 500 * time.Millisecond, 500*time.Millisecond + 1, 550 * time.Millisecond,
		555555555, 600 * time.Millisecond, time.Second - 1, time.Second, time.Second + 1, time.Minute, time.Hour,
	} {
		times = append(times, base.Add(d), base.Add(d).In(east))
	}
	times = append(times,
		time.Time{},
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 0),
		time.Date(2023, 12, 31, 23, 59, 59, 900000000, time.UTC),
		time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		// Random instants a few seconds apart, most of them sharing a second.
		times = append(times, base.Add(time.Duration(rng.Int64N(int64(3*time.Second)))))
	}
	stored := func(tm time.Time) string {
		v := toValue(tm)
		return string(v.Bytes)
	}
	for _, a := range times {
		for _, b := range times {
			if got, want := strings.Compare(stored(a), stored(b)), a.Compare(b); got != want {
				t.Fatalf("%v vs %v: stored %q vs %q compare %d, want %d", a, b, stored(a), stored(b), got, want)
			}
		}
		// datetime() and CURRENT_TIMESTAMP write whole seconds; strftime's
		// %f writes milliseconds, trailing zeros included.
		sec := a.UTC().Truncate(time.Second)
		if a.Equal(sec) && stored(a) != sec.Format(time.DateTime) {
			t.Errorf("whole second %v stored as %q, SQLite writes %q", a, stored(a), sec.Format(time.DateTime))
		}
		for _, u := range []time.Time{sec, sec.Add(time.Second), a.UTC().Truncate(time.Millisecond),
			a.UTC().Truncate(time.Millisecond).Add(time.Millisecond)} {
			if u.Year() > 9999 {
				continue // beyond SQLite's date functions
			}
			texts := []string{u.Format("2006-01-02 15:04:05.000")}
			if u.Nanosecond() == 0 {
				texts = append(texts, u.Format(time.DateTime))
			}
			for _, sqlite := range texts {
				got := strings.Compare(stored(a), sqlite)
				if want := a.Compare(u); want != 0 && got != want {
					t.Errorf("%v stored as %q vs SQLite's %q: compare %d, want %d", a, stored(a), sqlite, got, want)
				} else if want == 0 && got > 0 {
					t.Errorf("%v stored as %q sorts after SQLite's %q for the same instant", a, stored(a), sqlite)
				}
			}
		}
	}
}

func TestClassify(t *testing.T) {
	for decl, want := range map[string]colKind{
		"INTEGER": kindInt, "bigint": kindInt, "VARCHAR(20)": kindText, "clob": kindText,
		"BLOB": kindBlob, "double precision": kindReal, "FLOAT": kindReal, "": kindAny,
		"NUMERIC": kindAny, "datetime": kindTime, "DATE": kindTime, "TIMESTAMP": kindTime,
	} {
		if got := classify(decl); got != want {
			t.Errorf("classify(%q) = %v, want %v", decl, got, want)
		}
	}
}
