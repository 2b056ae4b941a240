package libsql

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
)

// TimeFormat is how time.Time arguments are stored: in UTC, as SQLite's own
// "YYYY-MM-DD HH:MM:SS", followed by the fraction of a second with its
// trailing zeros trimmed (none at all for a whole second), and no zone.
//
// SQLite compares text byte by byte, so this form is chosen for its order:
// every stored time (of the years 0000 to 9999 that SQLite's date
// functions handle) is the same length up to the seconds, a fraction sorts
// after the bare second it belongs to and before the next second, and
// trimmed fractions compare as numbers do (".5" < ".55" < ".6"). ORDER BY,
// <, > and BETWEEN on such a column therefore follow time order, also
// against what SQLite writes itself: a whole second is exactly the text of
// datetime() and CURRENT_TIMESTAMP, and strftime('%Y-%m-%d %H:%M:%f') text
// orders correctly against it (though ".5" and ".500" are not equal text).
// SQLite's date functions read text without a zone as UTC. The form written
// before, with a trailing "Z", sorted after every fraction of its second;
// it is still read (see parseTime).
const TimeFormat = "2006-01-02 15:04:05.999999999"

// timeFormats are the text layouts a DATE, DATETIME or TIMESTAMP column is
// parsed with: what TimeFormat writes (which is also what SQLite's date
// functions write), what earlier versions wrote (with "Z"), and the ISO 8601
// variants of those.
var timeFormats = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// checkNamedValue normalises one argument to int64, float64, bool, string,
// []byte, time.Time or nil, rejecting what the wire cannot carry: ±Inf
// unless infinities (the codec carries them). NaN becomes NULL, which is
// what SQLite stores for it on every codec.
func checkNamedValue(nv *driver.NamedValue, infinities bool) error {
	switch v := nv.Value.(type) {
	case nil, int64, bool, []byte, time.Time:
		return nil
	case string:
		if !utf8.ValidString(v) {
			return fmt.Errorf("libsql: argument %s: string is not valid UTF-8; pass []byte to store a blob", argName(nv))
		}
		return nil
	case float64:
		return checkFloat(nv, v, infinities)
	case float32:
		nv.Value = float64(v)
		return checkFloat(nv, float64(v), infinities)
	case int:
		nv.Value = int64(v)
		return nil
	case uint64:
		if v > math.MaxInt64 {
			return fmt.Errorf("libsql: argument %s: uint64 %d overflows int64", argName(nv), v)
		}
		nv.Value = int64(v)
		return nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return fmt.Errorf("libsql: argument %s: uint %d overflows int64", argName(nv), v)
		}
		nv.Value = int64(v)
		return nil
	}
	// Valuers, other integer kinds, named types and pointers.
	rv := reflect.ValueOf(nv.Value)
	if rv.Kind() == reflect.Uint64 || rv.Kind() == reflect.Uint || rv.Kind() == reflect.Uintptr {
		if rv.Uint() > math.MaxInt64 {
			return fmt.Errorf("libsql: argument %s: %d overflows int64", argName(nv), rv.Uint())
		}
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return fmt.Errorf("libsql: argument %s: %w", argName(nv), err)
	}
	nv.Value = v
	if _, ok := v.(driver.Valuer); ok {
		return fmt.Errorf("libsql: argument %s: Value() returned another Valuer", argName(nv))
	}
	return checkNamedValue(nv, infinities)
}

// checkFloat applies the float policy (docs/GUIDE.md "Values"): NaN is sent as
// NULL, since SQLite would store NULL for it anyway (and JSON cannot carry
// it); ±Inf is sent as is where the codec carries it and rejected where it
// cannot.
func checkFloat(nv *driver.NamedValue, f float64, infinities bool) error {
	switch {
	case math.IsNaN(f):
		nv.Value = nil
	case math.IsInf(f, 0) && !infinities:
		return fmt.Errorf("libsql: argument %s: %v cannot be sent with a JSON codec (JSON has no infinity); use codec=protobuf", argName(nv), f)
	}
	return nil
}

func argName(nv *driver.NamedValue) string {
	if nv.Name != "" {
		return "$" + nv.Name
	}
	return fmt.Sprintf("%d", nv.Ordinal)
}

// toValue converts a checked argument to a Hrana value.
func toValue(v driver.Value) codec.Value {
	switch v := v.(type) {
	case nil:
		return codec.NullValue()
	case int64:
		return codec.IntValue(v)
	case float64:
		return codec.FloatValue(v)
	case bool:
		if v {
			return codec.IntValue(1)
		}
		return codec.IntValue(0)
	case string:
		return codec.Value{Type: codec.Text, Bytes: []byte(v)}
	case []byte:
		if v == nil {
			return codec.NullValue() // as database/sql and mattn/go-sqlite3 treat a nil slice
		}
		return codec.BlobValue(v)
	case time.Time:
		return codec.Value{Type: codec.Text, Bytes: v.UTC().AppendFormat(nil, TimeFormat)}
	}
	// checkNamedValue admits nothing else.
	panic(fmt.Sprintf("libsql: unchecked argument type %T", v))
}

// colKind classifies a declared column type for conversion and scan types.
type colKind uint8

const (
	kindAny colKind = iota
	kindInt
	kindReal
	kindText
	kindBlob
	kindTime
)

// classify follows SQLite's affinity rules (section 3.1 of "Datatypes In
// SQLite"), with DATE, DATETIME and TIMESTAMP singled out first.
func classify(decltype string) colKind {
	t := strings.ToUpper(decltype)
	switch {
	case t == "":
		return kindAny
	case t == "DATE" || t == "DATETIME" || t == "TIMESTAMP":
		return kindTime
	case strings.Contains(t, "INT"):
		return kindInt
	case strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT"):
		return kindText
	case strings.Contains(t, "BLOB"):
		return kindBlob
	case strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") || strings.Contains(t, "DOUB"):
		return kindReal
	}
	return kindAny
}

// parseTime parses text from a time column; ok is false when it is not a
// time in any known layout, and the text is then returned as a string.
func parseTime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02") || s[4] != '-' {
		return time.Time{}, false
	}
	for _, layout := range timeFormats {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// fromValue converts a decoded Hrana value to a driver.Value, boxing it in
// bx's arenas so that a row costs no allocation per value. Text becomes a
// string sharing memory with the response (see rows); blob bytes point into
// the decoder's memory, which stays valid until the rows are closed
// (database/sql copies them on Scan).
func fromValue(v *codec.Value, kind colKind, bx *arena.Boxer) driver.Value {
	switch v.Type {
	case codec.Integer:
		return bx.Int64(v.Int)
	case codec.Float:
		return bx.Float64(v.Float)
	case codec.Text:
		s := arena.String(v.Bytes)
		if kind == kindTime {
			if t, ok := parseTime(s); ok {
				return t
			}
		}
		return bx.String(s)
	case codec.Blob:
		return bx.Bytes(v.Bytes)
	}
	return nil
}

var (
	scanTypeInt64   = reflect.TypeFor[int64]()
	scanTypeFloat64 = reflect.TypeFor[float64]()
	scanTypeString  = reflect.TypeFor[string]()
	scanTypeBytes   = reflect.TypeFor[[]byte]()
	scanTypeTime    = reflect.TypeFor[time.Time]()
	scanTypeAny     = reflect.TypeFor[any]()
)

func scanType(k colKind) reflect.Type {
	switch k {
	case kindInt:
		return scanTypeInt64
	case kindReal:
		return scanTypeFloat64
	case kindText:
		return scanTypeString
	case kindBlob:
		return scanTypeBytes
	case kindTime:
		return scanTypeTime
	}
	return scanTypeAny
}
