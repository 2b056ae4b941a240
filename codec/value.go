package codec

import (
	"fmt"
	"math"
	"strconv"
)

// Type is the SQLite storage class of a Value.
type Type uint8

// The Hrana value types.
const (
	Null Type = iota
	Integer
	Float
	Text
	Blob
)

var typeNames = [...]string{
	Null:    "null",
	Integer: "integer",
	Float:   "float",
	Text:    "text",
	Blob:    "blob",
}

// String returns the Hrana name of the type ("null", "integer", ...), or
// "Type(N)" for a value that is none of them.
func (t Type) String() string {
	if name := wireName(typeNames[:], t); name != "" {
		return name
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Value is one Hrana value: a SQL NULL, a 64-bit integer, a float, a UTF-8
// text or a blob.
//
// Decoders may point Bytes into the buffer they decode from (zero-copy);
// such a Value is valid only while that buffer is. Copy Bytes to keep it.
type Value struct {
	Type  Type
	Int   int64   // Integer
	Float float64 // Float; NaN when the server sent a null float (PROTOCOL.md §8.2: JSON carries no NaN or infinity)
	Bytes []byte  // Text (UTF-8) or Blob
}

// NullValue returns a SQL NULL.
func NullValue() Value { return Value{} }

// IntValue returns an INTEGER value.
func IntValue(v int64) Value { return Value{Type: Integer, Int: v} }

// FloatValue returns a REAL value.
func FloatValue(v float64) Value { return Value{Type: Float, Float: v} }

// TextValue returns a TEXT value. The bytes are referenced, not copied.
func TextValue(s []byte) Value { return Value{Type: Text, Bytes: s} }

// StringValue returns a TEXT value holding a copy of s.
func StringValue(s string) Value { return Value{Type: Text, Bytes: []byte(s)} }

// BlobValue returns a BLOB value. The bytes are referenced, not copied.
func BlobValue(b []byte) Value {
	if b == nil {
		b = []byte{}
	}
	return Value{Type: Blob, Bytes: b}
}

// Equal reports whether two values have the same type and content. Floats
// compare by bit pattern so that NaN equals NaN and 0 differs from -0.
func (v Value) Equal(w Value) bool {
	if v.Type != w.Type {
		return false
	}
	switch v.Type {
	case Null:
		return true
	case Integer:
		return v.Int == w.Int
	case Float:
		return math.Float64bits(v.Float) == math.Float64bits(w.Float)
	case Text, Blob:
		return string(v.Bytes) == string(w.Bytes)
	}
	return false
}

// String formats the value for debugging and test output.
func (v Value) String() string {
	switch v.Type {
	case Null:
		return "NULL"
	case Integer:
		return strconv.FormatInt(v.Int, 10)
	case Float:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case Text:
		return strconv.Quote(string(v.Bytes))
	case Blob:
		return fmt.Sprintf("x'%x'", v.Bytes)
	}
	return v.Type.String()
}
