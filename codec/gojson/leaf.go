package gojson

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"github.com/goccy/go-json/jsontext"
)

// integerW is an integer field (affected_row_count, last_insert_rowid,
// replication_index, rows_read, rows_written): an integer literal or a
// string holding one; null means absent.
type integerW[T int64 | uint64] struct {
	v   T
	set bool
}

// UnmarshalJSON implements the library's Unmarshaler. A repeated key calls
// it again, so it starts from zero.
func (n *integerW[T]) UnmarshalJSON(raw []byte) error {
	*n = integerW[T]{}
	v, set, err := parseInteger(raw, parseDecimal[T])
	n.v, n.set = v, set
	return err
}

// floatW is query_duration_ms: any JSON number.
type floatW struct {
	v float64
}

// UnmarshalJSON implements the library's Unmarshaler.
func (f *floatW) UnmarshalJSON(raw []byte) error {
	*f = floatW{}
	if isNull(raw) {
		return nil
	}
	if !isNumber(raw) {
		return errWrongType("a number", raw)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return err
	}
	f.v = v
	return nil
}

// --- raw JSON helpers. The raw values come from the library, which has
// checked their syntax, so a raw value is one whole JSON value. ---

// isNull reports whether a raw field is absent or null.
func isNull(raw []byte) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

func isString(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '"'
}

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

func isArray(raw []byte) bool { return len(raw) > 0 && raw[0] == '[' }

// stringOrNull decodes a string member; null is absent.
func stringOrNull(raw []byte) (string, bool, error) {
	if isNull(raw) {
		return "", false, nil
	}
	s, err := unquote(raw)
	if err != nil {
		return "", false, err
	}
	return string(s), true, nil
}

// members calls f with the name and the raw value of each member of the
// JSON object raw, in order. The value is a sub-slice of raw, so it stays
// valid as long as raw does.
func members(raw []byte, f func(name string, value []byte) error) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), decodeOptions)
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '{' {
		return errWrongType("an object", raw)
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next call voids tok
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		// The library promises value only until its next call: take the
		// same bytes from raw.
		end := int(dec.InputOffset())
		if err := f(name, raw[end-len(value):end:end]); err != nil {
			return err
		}
	}
	return nil
}

// isIntLiteral reports whether a JSON number has no fraction or exponent.
func isIntLiteral(raw []byte) bool {
	return !bytes.ContainsAny(raw, ".eE")
}

// jsonKind names the kind of the raw JSON value, for error messages.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	k := jsontext.Kind(raw[0])
	if raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		k = '0' // jsontext's kind for every number
	}
	return kindName(k)
}

func errWrongType(want string, raw []byte) error {
	return errors.New("want " + want + ", have " + jsonKind(raw))
}

// unquote returns the content of a raw JSON string.
func unquote(raw []byte) ([]byte, error) {
	if !isString(raw) {
		return nil, errWrongType("a string", raw)
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		// No escapes: the library has checked that there are no control
		// bytes, and precheck that it is valid UTF-8. raw is the library's
		// copy, not the caller's input.
		return body[:len(body):len(body)], nil
	}
	var s string
	if err := unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

func parseUint(raw []byte) (uint64, bool, error) { return parseInteger(raw, parseDecimal[uint64]) }

func parseInt(raw []byte) (int64, bool, error) { return parseInteger(raw, parseDecimal[int64]) }

// parseDecimal parses s as a T with strconv's rules at 64 bits.
func parseDecimal[T int64 | uint64](s string) (T, error) {
	if ^T(0) > 0 { // unsigned
		v, err := strconv.ParseUint(s, 10, 64)
		return T(v), err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return T(v), err
}

// parseInteger reads an integer field sent as a decimal string or as an
// integer literal, with parse's rules (strconv's, at 64 bits); null is
// absent (ok false).
func parseInteger[T int64 | uint64](raw []byte, parse func(string) (T, error)) (v T, ok bool, err error) {
	switch {
	case isNull(raw):
		return 0, false, nil
	case isString(raw):
		s, err := unquote(raw)
		if err != nil {
			return 0, false, err
		}
		v, err := parse(string(s))
		return v, err == nil, err
	case isNumber(raw):
		if !isIntLiteral(raw) {
			return 0, false, errors.New("not an integer: " + string(raw))
		}
		v, err := parse(string(raw))
		return v, err == nil, err
	}
	return 0, false, errWrongType("an integer or a string", raw)
}

func parseUint32(raw []byte) (uint32, error) {
	v, _, err := parseUint(raw)
	if err != nil {
		return 0, err
	}
	if v > math.MaxUint32 {
		return 0, errors.New("out of range: " + strconv.FormatUint(v, 10))
	}
	return uint32(v), nil
}

func parseBool(raw []byte) (bool, error) {
	switch {
	case isNull(raw):
		return false, nil
	case string(raw) == "true":
		return true, nil
	case string(raw) == "false":
		return false, nil
	}
	return false, errWrongType("a boolean", raw)
}
