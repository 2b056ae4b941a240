package libsql

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// libSQL's vector blob format, as libsql-sqlite3/src/vectorInt.h and
// vector.c (libsql-server v0.24.32) define it: the elements, little-endian,
// and then, for a blob of odd length, the type code in the last byte. A blob
// of even length is a FLOAT32 vector without the type byte (which is what
// vector32() writes); every other type has it, and pads its elements to an
// even length so that the blob's is odd. docs/GUIDE.md "Vectors" has the
// layouts of the compressed types.

// Vector32 is a libSQL vector of float32 elements: libSQL's FLOAT32 type,
// which F32_BLOB(n) and FLOAT32(n) columns hold, vector32() and vector()
// return, and libsql_vector_idx indexes.
//
// As an argument it is a blob of libSQL's format: each element as a
// little-endian IEEE 754 float32, bit for bit (NaN, infinities and -0
// included), and no type byte, exactly the blob vector32() returns. A nil
// Vector32 is NULL; an empty one is an empty blob, libSQL's vector of no
// elements.
//
// Scan reads a blob of any libSQL vector type but FLOAT64, whose elements
// would have to be rounded: FLOAT32 (with or without its type byte) bit for
// bit, and the others as vector32() converts them: FLOAT16 and FLOATB16
// exactly, since float32 holds all their values (but a FLOAT16 NaN becomes
// the quiet NaN of its sign), FLOAT8 dequantized and FLOAT1BIT as ±1. It
// also reads text in libSQL's form, "[1,2.5,-3e-2]" (vector_extract's
// result, or text stored in a vector column), each element parsed as a
// float64 and rounded to float32 as vector32() does, with vector_extract's
// spellings Inf, -Inf and NaN accepted as well; vector_extract prints six
// significant digits, so scan the blob itself for exact elements. NULL
// scans as a nil Vector32. Scan reuses the receiver's array when it is
// large enough; it returns a *VectorError for a value that is not a vector
// it can hold, and then leaves the receiver as it was.
//
//	_, err := db.ExecContext(ctx, "INSERT INTO docs (embedding) VALUES (?)", libsql.Vector32(embedding))
//	var v libsql.Vector32
//	err = db.QueryRowContext(ctx, "SELECT embedding FROM docs WHERE id = ?", id).Scan(&v)
type Vector32 []float32

// Vector64 is a libSQL vector of float64 elements: libSQL's FLOAT64 type,
// which F64_BLOB(n) and FLOAT64(n) columns hold and vector64() returns.
//
// As an argument it is a blob of libSQL's format: each element as a
// little-endian IEEE 754 float64, bit for bit (NaN, infinities and -0
// included), followed by the type byte 2, which FLOAT64 blobs must have,
// exactly the blob vector64() returns. A nil Vector64 is NULL; an empty one
// is the one-byte blob x'02', libSQL's FLOAT64 vector of no elements.
//
// Scan reads a blob of any libSQL vector type, converted to float64
// without rounding: FLOAT64 bit for bit, and the others as Vector32 reads
// them, then widened. It also reads text in libSQL's form, "[1,2.5,-3e-2]",
// each element parsed as a float64, with Inf, -Inf and NaN accepted. NULL
// scans as a nil Vector64. Scan reuses the receiver's array when it is large
// enough; it returns a *VectorError for a value that is not a vector, and
// then leaves the receiver as it was.
//
//	_, err := db.ExecContext(ctx, "INSERT INTO points (p) VALUES (?)", libsql.Vector64{0.5, -1, 2})
//	var p libsql.Vector64
//	err = db.QueryRowContext(ctx, "SELECT p FROM points WHERE id = ?", id).Scan(&p)
type Vector64 []float64

// VectorType is the type of a libSQL vector's elements: the code a vector
// blob of odd length ends in (libsql-sqlite3/src/vectorInt.h).
type VectorType uint8

// The vector types of libSQL, each with the column types that hold it and
// the function that makes it.
const (
	// VectorFloat32: IEEE 754 float32 elements; F32_BLOB(n) and FLOAT32(n)
	// columns, vector32() and vector(). Its blob may omit the type byte.
	VectorFloat32 VectorType = 1
	// VectorFloat64: IEEE 754 float64 elements; F64_BLOB(n) and FLOAT64(n),
	// vector64().
	VectorFloat64 VectorType = 2
	// VectorFloat1Bit: one bit per element, set for a positive element, read
	// as +1 or -1; F1BIT_BLOB(n) and FLOAT1BIT(n), vector1bit().
	VectorFloat1Bit VectorType = 3
	// VectorFloat8: a byte q per element, which stands for alpha*q+shift
	// with float32 alpha and shift stored in the blob; F8_BLOB(n) and
	// FLOAT8(n), vector8().
	VectorFloat8 VectorType = 4
	// VectorFloat16: IEEE 754 half-precision elements; F16_BLOB(n) and
	// FLOAT16(n), vector16().
	VectorFloat16 VectorType = 5
	// VectorFloatB16: bfloat16 elements (the high half of a float32);
	// FB16_BLOB(n) and FLOATB16(n), vectorb16().
	VectorFloatB16 VectorType = 6
)

// String returns libSQL's name of the type, "float32" for VectorFloat32,
// or "VectorType(n)" for a code that is none of them.
func (t VectorType) String() string {
	if s := enumName(vectorTypeNames[:], int(t)); s != "" {
		return s
	}
	return "VectorType(" + strconv.Itoa(int(t)) + ")"
}

var vectorTypeNames = [...]string{
	VectorFloat32:   "float32",
	VectorFloat64:   "float64",
	VectorFloat1Bit: "float1bit",
	VectorFloat8:    "float8",
	VectorFloat16:   "float16",
	VectorFloatB16:  "floatb16",
}

// VectorError is the error of Vector32.Scan and Vector64.Scan for a value
// that is not a vector they can hold: a FLOAT64 vector for a Vector32, a
// blob whose length does not fit the type it declares or whose type code is
// unknown, text that is not a vector, or a value that is neither a blob,
// text nor NULL.
type VectorError struct {
	// Type is the type code the blob declares: its last byte if its length
	// is odd, else VectorFloat32. It may be none of the VectorType
	// constants, and is 0 (which libSQL leaves unused) for a value that is
	// not a blob.
	Type VectorType
	msg  string
}

// Error says what was scanned into which Go type, and for a blob its
// length and type code.
func (e *VectorError) Error() string { return e.msg }

// Value returns v as a FLOAT32 vector blob, or nil (NULL) for a nil v.
func (v Vector32) Value() (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b, nil
}

// Value returns v as a FLOAT64 vector blob, or nil (NULL) for a nil v.
func (v Vector64) Value() (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	b := make([]byte, 0, 8*len(v)+1)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return append(b, byte(VectorFloat64)), nil
}

// Scan reads a vector blob, its text or NULL into v (see Vector32).
func (v *Vector32) Scan(src any) error {
	out, err := scanVector(*v, src, "Vector32")
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// Scan reads a vector blob, its text or NULL into v (see Vector64).
func (v *Vector64) Scan(src any) error {
	out, err := scanVector(*v, src, "Vector64")
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// vectorElem is the element type of a Vector32 or a Vector64.
type vectorElem interface{ float32 | float64 }

// scanVector decodes src into dst's array if it is large enough, or else a
// new one; dest names the Go type for errors.
func scanVector[F vectorElem](dst []F, src any, dest string) ([]F, error) {
	switch src := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return decodeVector(dst, src, dest)
	case string:
		return parseVector(dst, src, dest)
	}
	return nil, &VectorError{msg: fmt.Sprintf("libsql: cannot scan %T into %s: want a vector blob, its text or NULL", src, dest)}
}

// resize returns s with length n, on s's array if it has room. The result
// is never nil, so that an empty vector stays apart from NULL.
func resize[F vectorElem](s []F, n int) []F {
	if s == nil || cap(s) < n {
		return make([]F, n)
	}
	return s[:n]
}

// wide reports whether F is float64.
func wide[F vectorElem]() bool {
	var zero F
	_, ok := any(zero).(float64)
	return ok
}

// decodeVector decodes the vector blob b.
func decodeVector[F vectorElem](dst []F, b []byte, dest string) ([]F, error) {
	typ, data := VectorFloat32, b
	if len(b)%2 == 1 {
		typ, data = VectorType(b[len(b)-1]), b[:len(b)-1]
	}
	malformed := func(layout string) error {
		return &VectorError{Type: typ, msg: fmt.Sprintf("libsql: a %d-byte blob cannot scan into %s: a vector of type %d (%s) is %s",
			len(b), dest, typ, typ, layout)}
	}
	switch typ {
	case VectorFloat32:
		if len(data)%4 != 0 {
			return nil, malformed("4 bytes per element and an optional type byte")
		}
		dst = resize(dst, len(data)/4)
		for i := range dst {
			dst[i] = F(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
		}
	case VectorFloat64:
		if !wide[F]() {
			return nil, &VectorError{Type: typ, msg: fmt.Sprintf("libsql: a vector of type %d (%s) cannot scan into %s without rounding; scan it into a Vector64",
				typ, typ, dest)}
		}
		if len(data)%8 != 0 {
			return nil, malformed("8 bytes per element and the type byte")
		}
		dst = resize(dst, len(data)/8)
		for i := range dst {
			dst[i] = F(math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])))
		}
	case VectorFloat16, VectorFloatB16:
		// The length of data is even: one less than an odd one.
		dst = resize(dst, len(data)/2)
		conv := float16ToFloat32
		if typ == VectorFloatB16 {
			conv = bfloat16ToFloat32
		}
		for i := range dst {
			dst[i] = F(conv(binary.LittleEndian.Uint16(data[2*i:])))
		}
	case VectorFloat8:
		// The bytes of the elements, padded with zeros to a multiple of 4;
		// alpha and shift (float32); a padding byte; the number of padding
		// zeros; the type byte.
		if len(data) < 10 {
			return nil, malformed(float8Layout)
		}
		body, padding := len(data)-10, int(data[len(data)-1])
		if body%4 != 0 || padding > 3 || padding > body {
			return nil, malformed(float8Layout)
		}
		alpha := math.Float32frombits(binary.LittleEndian.Uint32(data[body:]))
		shift := math.Float32frombits(binary.LittleEndian.Uint32(data[body+4:]))
		dst = resize(dst, body-padding)
		for i := range dst {
			// libSQL computes alpha*q + shift in float32; the conversion
			// keeps the two operations from being fused into one.
			dst[i] = F(float32(alpha*float32(data[i])) + shift)
		}
	case VectorFloat1Bit:
		// Element i in bit i%8 of byte i/8; a zero byte if there is an even
		// number of those; the number of bits after the elements' (the
		// count byte's own 8 included); the type byte.
		if len(data) < 2 {
			return nil, malformed(float1BitLayout)
		}
		n := 8*len(data) - int(data[len(data)-1])
		if n < 0 || float1BitSize(n) != len(data) {
			return nil, malformed(float1BitLayout)
		}
		dst = resize(dst, n)
		for i := range dst {
			if data[i/8]>>(i%8)&1 == 1 {
				dst[i] = 1
			} else {
				dst[i] = -1
			}
		}
	default:
		return nil, &VectorError{Type: typ, msg: fmt.Sprintf("libsql: a %d-byte blob cannot scan into %s: it ends in %d, which is no vector type",
			len(b), dest, b[len(b)-1])}
	}
	return dst, nil
}

// How the compressed types' blobs are laid out, for errors.
const (
	float8Layout    = "a byte per element padded to a multiple of 4, 8 bytes of parameters and 3 of trailer"
	float1BitLayout = "a bit per element padded to an odd number of bytes, a count of the unused bits and the type byte"
)

// float1BitSize is the length of a FLOAT1BIT blob of n elements without its
// type byte: the bytes of the bits, a padding byte when there is an even
// number of those, and the count byte.
func float1BitSize(n int) int {
	bytes := (n + 7) / 8
	return bytes + 1 + (1 - bytes%2)
}

// float16ToFloat32 converts an IEEE 754 half-precision number to float32,
// which holds every one of them exactly.
func float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0x1f: // infinity, or NaN, which libSQL makes a quiet NaN of the same sign
		if mant != 0 {
			mant = 0x200 // the quiet bit alone: libSQL drops the payload
		}
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case 0: // zero or subnormal: mant * 2^-24, a normal float32 unless 0
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	// A normal number: rebias the exponent from 15 to 127.
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// bfloat16ToFloat32 converts a bfloat16, the high half of a float32.
func bfloat16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// parseVector parses text in libSQL's vector form: '[', elements separated
// by commas, ']', with spaces (SQLite's: space, \t, \n, \v, \f, \r) around
// each. It checks all of the text before it writes into dst's array.
func parseVector[F vectorElem](dst []F, s, dest string) ([]F, error) {
	inner, n, err := vectorText(s)
	if err != "" {
		return nil, &VectorError{msg: "libsql: cannot scan text into " + dest + ": " + err}
	}
	dst = resize(dst, n)
	for i := range dst {
		var elem string
		elem, inner, _ = strings.Cut(inner, ",")
		// ParseFloat reads every number vectorText lets through; its only
		// error for them is ErrRange, for a magnitude beyond float64's, and
		// then f is ±Inf (or 0), as libSQL reads it too.
		f, _ := strconv.ParseFloat(strings.Trim(elem, sqliteSpaces), 64)
		dst[i] = F(f)
	}
	return dst, nil
}

// sqliteSpaces are the bytes SQLite's parser (and libSQL's vector parser)
// takes for spaces.
const sqliteSpaces = " \t\n\v\f\r"

// vectorText checks that s is a vector's text and returns what is between
// its brackets and the number of elements, or else what is wrong.
func vectorText(s string) (inner string, n int, problem string) {
	s = strings.Trim(s, sqliteSpaces)
	if !strings.HasPrefix(s, "[") {
		return "", 0, "it does not start with '['"
	}
	if !strings.HasSuffix(s, "]") {
		return "", 0, "it does not end with ']'"
	}
	inner = s[1 : len(s)-1]
	if strings.Trim(inner, sqliteSpaces) == "" {
		return inner, 0, ""
	}
	for rest, more := inner, true; more; n++ {
		var elem string
		elem, rest, more = strings.Cut(rest, ",")
		if elem = strings.Trim(elem, sqliteSpaces); !isVectorNumber(elem) {
			return "", 0, fmt.Sprintf("element %d, %s, is not a number", n, quoteShort(elem))
		}
	}
	return inner, n, ""
}

// isVectorNumber reports whether s is a number as libSQL's vector text
// has them: a decimal one (what SQLite reads: a sign, digits with at most
// one '.' among them, an exponent), or one of the spellings vector_extract
// prints for non-finite elements, Inf, -Inf and NaN (in any case, and Inf
// with a '+' too).
func isVectorNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if strings.EqualFold(s[i:], "inf") || (i == 0 && strings.EqualFold(s, "nan")) {
		return true
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// quoteShort quotes s for an error message, cut to a few dozen bytes.
func quoteShort(s string) string {
	const max = 32
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}
