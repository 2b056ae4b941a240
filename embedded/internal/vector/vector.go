// Package vector is libSQL's vector SQL in Go, for the embedded replica's
// local file: the blob formats, the text form, the conversions between
// types and the distances, each giving what libSQL's C code
// (libsql-sqlite3/src/vector*.c of libsql-server v0.24.32, on x86-64)
// gives, bit for bit, errors included. The SQL functions (vector32,
// vector_extract, vector_distance_cos, ...) are Construct, Extract and
// Distance; the registration on the SQLite driver is in localdb.
package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/gohrana/libsql"
)

// A Type is a libSQL vector type: the driver's libsql.VectorType, whose
// codes are libSQL's (the type byte of a blob) and whose String is
// libSQL's name of the type, as its messages spell it. The codes are
// written once, in the driver, which reads the same blobs in its Scan.
type Type = libsql.VectorType

// The vector types.
const (
	Float32   = libsql.VectorFloat32   // F32_BLOB, FLOAT32: vector32(), vector()
	Float64   = libsql.VectorFloat64   // F64_BLOB, FLOAT64: vector64()
	Float1Bit = libsql.VectorFloat1Bit // F1BIT_BLOB, FLOAT1BIT: vector1bit()
	Float8    = libsql.VectorFloat8    // F8_BLOB, FLOAT8: vector8()
	Float16   = libsql.VectorFloat16   // F16_BLOB, FLOAT16: vector16()
	FloatB16  = libsql.VectorFloatB16  // FB16_BLOB, FLOATB16: vectorb16()
)

// MaxDims is libSQL's MAX_VECTOR_SZ: no vector has more elements.
const MaxDims = 65536

// maxFloatChars is libSQL's MAX_FLOAT_CHAR_SZ: the longest element text.
const maxFloatChars = 1024

// A Vector is a parsed vector: its type, its number of elements and its
// data in libSQL's in-memory layout, which is the blob's data part (and
// a parsed blob's Data is that part of the blob itself)
// (elements little-endian; FLOAT8 with alpha and shift after the aligned
// elements; FLOAT1BIT one bit an element, least significant first).
type Vector struct {
	Type Type
	Dims int
	Data []byte
}

// dataSize is libSQL's vectorDataSize.
func dataSize(t Type, dims int) int {
	switch t {
	case Float32:
		return dims * 4
	case Float64:
		return dims * 8
	case Float1Bit:
		return (dims + 7) / 8
	case Float8:
		return align4(dims) + 8
	default: // Float16, FloatB16
		return dims * 2
	}
}

func align4(n int) int { return (n + 3) / 4 * 4 }

// New returns a zero vector of type t with dims elements.
func New(t Type, dims int) *Vector {
	return &Vector{Type: t, Dims: dims, Data: make([]byte, dataSize(t, dims))}
}

func (v *Vector) f32(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(v.Data[4*i:]))
}

func (v *Vector) setF32(i int, f float32) {
	binary.LittleEndian.PutUint32(v.Data[4*i:], math.Float32bits(f))
}

func (v *Vector) f64(i int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(v.Data[8*i:]))
}

func (v *Vector) setF64(i int, f float64) {
	binary.LittleEndian.PutUint64(v.Data[8*i:], math.Float64bits(f))
}

func (v *Vector) u16(i int) uint16 { return binary.LittleEndian.Uint16(v.Data[2*i:]) }

func (v *Vector) setU16(i int, u uint16) { binary.LittleEndian.PutUint16(v.Data[2*i:], u) }

func (v *Vector) bit(i int) bool { return v.Data[i/8]>>(i&7)&1 == 1 }

// f8Params returns a FLOAT8 vector's alpha and shift: element i is
// alpha·q[i] + shift.
func (v *Vector) f8Params() (alpha, shift float32) {
	o := align4(v.Dims)
	return math.Float32frombits(binary.LittleEndian.Uint32(v.Data[o:])),
		math.Float32frombits(binary.LittleEndian.Uint32(v.Data[o+4:]))
}

func (v *Vector) setF8Params(alpha, shift float32) {
	o := align4(v.Dims)
	binary.LittleEndian.PutUint32(v.Data[o:], math.Float32bits(alpha))
	binary.LittleEndian.PutUint32(v.Data[o+4:], math.Float32bits(shift))
}

// An Error is what a vector function fails with; its text is libSQL's.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// sqlType names a value's SQLite type as libSQL's messages do.
func sqlType(arg any) string {
	switch arg.(type) {
	case nil:
		return "NULL"
	case int64, int, int32, bool:
		return "INTEGER"
	case float64, float32:
		return "FLOAT"
	case []byte:
		return "BLOB"
	case string:
		return "TEXT"
	}
	return "UNKNOWN"
}

// blobMeta reads the type and size of a vector blob from its length and
// trailing bytes (libSQL's vectorParseMeta): an even length is FLOAT32
// without a type byte; an odd one ends with the type byte.
func blobMeta(b []byte) (t Type, dims, size int, err error) { // size: libSQL's data part
	n := len(b)
	if n%2 == 0 {
		return Float32, n / 4, n, nil
	}
	t = Type(b[n-1])
	n--
	switch t {
	case Float32:
		if n%4 != 0 {
			return 0, 0, 0, errorf("vector: float32 vector blob length must be divisible by 4 (excluding optional 'type'-byte): length=%d", n)
		}
		return t, n / 4, n, nil
	case Float64:
		if n%8 != 0 {
			return 0, 0, 0, errorf("vector: float64 vector blob length must be divisible by 8 (excluding 'type'-byte): length=%d", n)
		}
		return t, n / 8, n, nil
	case Float1Bit:
		if n == 0 || n%2 != 0 {
			return 0, 0, 0, errorf("vector: float1bit vector blob length must be divisible by 2 and not be empty (excluding 'type'-byte): length=%d", n)
		}
		dims = n*8 - int(b[n-1])
		return t, dims, (dims + 7) / 8, nil
	case Float8:
		if n < 2 || n%2 != 0 {
			return 0, 0, 0, errorf("vector: float8 vector blob length must be divisible by 2 and has at least 2 bytes (excluding 'type'-byte): length=%d", n)
		}
		return t, n - 2 - 8 - int(b[n-1]), n - 2, nil
	case Float16, FloatB16:
		if n%2 != 0 { // t prints as libSQL names it: float16, floatb16
			return 0, 0, 0, errorf("vector: %s vector blob length must be divisible by 2 (excluding 'type'-byte): length=%d", t, n)
		}
		return t, n / 2, n, nil
	}
	return 0, 0, 0, errorf("vector: unexpected binary type: %d", t)
}

// detect returns the type and number of elements of a vector argument
// before parsing it (libSQL's detectVectorParameters): text is Float64 if
// hint is Float64, else Float32, and its elements are counted as commas
// plus one if it has any digit. It fails for a malformed blob header or a
// value that is neither text nor blob.
func detect(arg any, hint Type) (Type, int, error) {
	switch a := arg.(type) {
	case []byte:
		t, dims, _, err := blobMeta(a)
		if err != nil {
			return 0, 0, err
		}
		if dims > MaxDims {
			return 0, 0, errorf("vector: max size exceeded: %d > %d", dims, MaxDims)
		}
		return t, dims, nil
	case string:
		t := Float32
		if hint == Float64 {
			t = Float64
		}
		dims, digit := strings.Count(a, ","), false
		for i := 0; i < len(a) && !digit; i++ {
			digit = isDigit(a[i])
		}
		if digit {
			dims++
		}
		return t, dims, nil
	}
	return 0, 0, errorf("vector: unexpected value type: got %s, expected TEXT or BLOB", sqlType(arg))
}

// parse parses a vector argument whose type detect returned (libSQL's
// vectorParseWithType).
func parse(arg any, t Type) (*Vector, error) {
	switch a := arg.(type) {
	case []byte:
		return parseBlob(a, t)
	case string:
		return parseText(a, t)
	}
	return nil, errorf("vector: unexpected value type: got %s, expected TEXT or BLOB", sqlType(arg))
}

func parseBlob(b []byte, t Type) (*Vector, error) {
	_, dims, err := blobShape(b, t)
	if err != nil {
		return nil, err
	}
	// A view of the blob: every caller is done with it before the blob
	// goes (the functions' arguments may be SQLite's own memory).
	return &Vector{Type: t, Dims: dims, Data: b[:dataSize(t, dims)]}, nil
}

// blobShape checks a blob of type t (as blobMeta read it) against what
// reading its data needs: the data part must have the type's size for the
// element count. libSQL v0.24.32's constructors fail such a blob with the
// message here; its vector_extract and distances go on with memory the
// blob did not fill (garbage results), and a FLOAT8 blob whose count is
// negative fails its allocation ("out of memory", repeated here). All are
// refused.
func blobShape(b []byte, t Type) (Type, int, error) {
	bt, dims, size, err := blobMeta(b)
	if err != nil {
		return 0, 0, err
	}
	if bt != t {
		return 0, 0, errorf("vector: unexpected binary type: %d", bt)
	}
	if dims < 0 && t == Float8 {
		return 0, 0, errorf("out of memory")
	}
	if dims >= 0 && size != dataSize(t, dims) {
		return 0, 0, errorf("vector: unexpected data part size: type=%d, dims=%d, %d != %d", t, dims, size, dataSize(t, dims))
	}
	if dims < 0 || dataSize(t, dims) > len(b) {
		return 0, 0, errorf("vector: unexpected data part size: type=%d, dims=%d, %d > %d", t, dims, dataSize(t, max(dims, 0)), len(b))
	}
	return t, dims, nil
}

// parseText parses libSQL's text form, "[1, 2.5, -3e-2]", into a Float32
// or Float64 vector (libSQL's vectorParseSqliteText): spaces are dropped
// everywhere, even inside a number ("[1 2]" is [12]); each element is
// parsed as a float64 (parseFloat) and, for Float32, rounded to float32.
func parseText(s string, t Type) (*Vector, error) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // C reads the text up to its first NUL
	}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '[' {
		return nil, errorf("vector: must start with '['")
	}
	i++
	var elems []float64
	var buf []byte
	closed := false
	for ; i < len(s); i++ {
		c := s[i]
		if isSpace(c) {
			continue
		}
		if c != ',' && c != ']' {
			if len(buf) > maxFloatChars {
				return nil, errorf("vector: float string length exceeded %d characters: '%s'", maxFloatChars, buf)
			}
			buf = append(buf, c)
			continue
		}
		if c == ']' && len(elems) == 0 && len(buf) == 0 {
			closed = true
			break
		}
		f, ok := parseFloat(string(buf))
		if !ok {
			return nil, errorf("vector: invalid float at position %d: '%s'", len(elems), buf)
		}
		if len(elems) >= MaxDims {
			return nil, errorf("vector: max size exceeded %d", MaxDims)
		}
		buf = buf[:0]
		elems = append(elems, f)
		if c == ']' {
			closed = true
			break
		}
	}
	if !closed {
		return nil, errorf("vector: must end with ']'")
	}
	for i++; i < len(s); i++ {
		if !isSpace(s[i]) {
			return nil, errorf("vector: non-space symbols after closing ']' are forbidden")
		}
	}
	v := New(t, len(elems))
	for k, f := range elems {
		if t == Float64 {
			v.setF64(k, f)
		} else {
			v.setF32(k, float32(f))
		}
	}
	return v, nil
}

// Blob serializes v as libSQL does (vectorSerializeWithMeta): the data,
// then the type's trailer. An empty FLOAT32 vector is the empty blob.
func (v *Vector) Blob() []byte {
	switch v.Type {
	case Float32:
		return append([]byte{}, v.Data...)
	case Float64, Float16, FloatB16:
		return append(append([]byte{}, v.Data...), byte(v.Type))
	case Float1Bit:
		b := append([]byte{}, v.Data...)
		if len(b)%2 == 0 {
			b = append(b, 0) // the trailing-bits byte must sit at an odd offset
		}
		return append(b, byte(8*(len(b)+1)-v.Dims), byte(v.Type))
	case Float8:
		b := append([]byte{}, v.Data...)
		clear(b[v.Dims:align4(v.Dims)])
		return append(b, 0, byte(align4(v.Dims)-v.Dims), byte(v.Type))
	}
	return nil
}

// Text is vector_extract's text of a Float32 or Float64 vector: the
// elements as SQLite's printf "%g" prints them, comma-separated, in
// brackets.
func (v *Vector) Text() string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < v.Dims; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if v.Type == Float64 {
			b.WriteString(formatG(v.f64(i)))
		} else {
			b.WriteString(formatG(float64(v.f32(i))))
		}
	}
	b.WriteByte(']')
	return b.String()
}

// View returns the vector a blob holds if it is of type t and length
// dims, reading the blob in place (no copy; the blob must outlive the
// Vector and not change), or false.
func View(b []byte, t Type, dims int) (*Vector, bool) {
	_, d, err := blobShape(b, t)
	if err != nil || d != dims {
		return nil, false
	}
	return &Vector{Type: t, Dims: d, Data: b[:dataSize(t, d)]}, true
}
