package direct

// This file: the scalar members of the Hrana messages (strings, integers,
// floats, booleans) and base64 blob payloads, read at d.pos.

import (
	"encoding/base64"
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// blobBase64 is codec.Base64. Naming encoding/base64 here lets the compiler
// inline its DecodedLen into blob, which it does not do for a method of a
// package that this one does not import itself.
var blobBase64 *base64.Encoding = codec.Base64

// readString reads a string or null at d.pos. The bytes point into the
// input or, for strings with escapes, into scratch memory valid until the
// next use of scratch. present is false for null.
func (d *decoder) readString(field string) (b []byte, present bool, err error) {
	switch d.data[d.pos] {
	case '"':
		start := d.pos
		esc, err := d.scanString()
		if err != nil {
			return nil, false, err
		}
		return d.rawString(span{start: start, end: d.pos, esc: esc}), true, nil
	case 'n':
		return nil, false, d.literal("null")
	}
	return nil, false, d.typeErr(field, "a string or null")
}

// readGoString reads a string or null as a Go string ("" for null). old is
// the string previously in the destination field, reused when equal.
func (d *decoder) readGoString(field, old string, intern bool) (string, error) {
	b, present, err := d.readString(field)
	if err != nil || !present {
		return "", err
	}
	return d.st.str(b, old, intern), nil
}

// readIntText reads the text of an integer field: the inside of a string
// (unescaped), or a JSON number without fraction or exponent. present is
// false for null.
func (d *decoder) readIntText(field, want string) (lit []byte, present bool, err error) {
	start := d.pos
	switch c := d.data[start]; {
	case c == '"':
		return d.readString(field)
	case c == 'n':
		return nil, false, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		isInt, err := d.scanNumber()
		if err != nil {
			return nil, false, err
		}
		if !isInt {
			return nil, false, fieldErr(start, field, "expected an integer, got a number with a fraction or exponent")
		}
		return d.data[start:d.pos], true, nil
	}
	return nil, false, d.typeErr(field, want)
}

// readUint reads an unsigned integer field: a JSON integer literal without
// a minus sign, a string accepted by strconv.ParseUint(s, 10, 64) (so
// leading zeros are allowed in strings), or null (present == false). The
// value must not exceed max.
func (d *decoder) readUint(field string, max uint64) (uint64, bool, error) {
	start := d.pos
	lit, present, err := d.readIntText(field, "an unsigned integer (number or string)")
	if err != nil || !present {
		return 0, false, err
	}
	v, ok := parseDigits(lit, max)
	if !ok {
		return 0, false, fieldErr(start, field, "not an unsigned integer in range")
	}
	return v, true, nil
}

// readInt reads an int64 field: a JSON integer literal ("-0" is 0), a
// string accepted by strconv.ParseInt(s, 10, 64) ("+5" and "007" too), or
// null (present == false).
func (d *decoder) readInt(field string) (int64, bool, error) {
	start := d.pos
	lit, present, err := d.readIntText(field, "an integer (number or string)")
	if err != nil || !present {
		return 0, false, err
	}
	v, ok := parseIntStrconv(lit)
	if !ok {
		return 0, false, fieldErr(start, field, "not a 64-bit integer")
	}
	return v, true, nil
}

// readFloat reads a JSON number, or null as 0.
func (d *decoder) readFloat(field string) (float64, error) {
	start := d.pos
	switch c := d.data[start]; {
	case c == 'n':
		return 0, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		if _, err := d.scanNumber(); err != nil {
			return 0, err
		}
		f, err := strconv.ParseFloat(string(d.data[start:d.pos]), 64)
		if err != nil {
			return 0, &codec.DecodeError{Codec: Name, Offset: start, Msg: "field \"" + field + "\": number out of range", Err: err}
		}
		return f, nil
	}
	return 0, d.typeErr(field, "a number")
}

// readBool reads true, false or null (false).
func (d *decoder) readBool(field string) (bool, error) {
	switch d.data[d.pos] {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.typeErr(field, "a boolean")
}

// parseDigits parses a non-empty run of decimal digits not above max, as
// strconv.ParseUint(s, 10, 64) does (plus the bound).
func parseDigits(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n := uint64(c - '0')
		if v > (max-n)/10 {
			return 0, false
		}
		v = v*10 + n
	}
	return v, true
}

// parseIntStrconv parses b as strconv.ParseInt(b, 10, 64) does: an optional
// sign, then decimal digits (leading zeros allowed).
func parseIntStrconv(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	return signed(b, neg)
}

func signed(digits []byte, neg bool) (int64, bool) {
	max := uint64(math.MaxInt64)
	if neg {
		max++
	}
	u, ok := parseDigits(digits, max)
	if !ok {
		return 0, false
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

// blob decodes the base64 string span sp into arena memory.
func (d *decoder) blob(sp span) ([]byte, error) {
	src := d.rawString(sp)
	if len(src) == 0 {
		return d.data[sp.start+1 : sp.start+1 : sp.start+1], nil
	}
	src, err := codec.TrimBase64(src)
	if err != nil {
		return nil, errAt(sp.start, "blob value: "+err.Error())
	}
	n := blobBase64.DecodedLen(len(src))
	buf := d.alloc(n, sp.start)[:n]
	m, err := blobBase64.Decode(buf, src)
	if err != nil {
		return nil, &codec.DecodeError{Codec: Name, Offset: sp.start, Msg: "blob value: invalid base64", Err: err}
	}
	return d.commit(m), nil
}
