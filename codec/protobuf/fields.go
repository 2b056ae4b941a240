package protobuf

// This file: reading the payload of one known field, checking its wire
// type. Every function takes the enclosing message as b (the input cut at
// the message's end, so positions are offsets in the whole input), the
// position i after the field's key, the key's offset at (for errors) and
// the wire type wt, and returns the position after the field.

import (
	"math"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// lenField reads a length-delimited field and returns its payload bounds.
func lenField(b []byte, i, at int, wt uint8, field string) (start, end int, err error) {
	if wt != wireLen {
		return 0, 0, wireTypeErr(at, field, wt)
	}
	start, end = readLen(b, i)
	if start < 0 {
		return 0, 0, posErr(at, start, "field \""+field+"\"")
	}
	return start, end, nil
}

// varintField reads a varint field.
func varintField(b []byte, i, at int, wt uint8, field string) (uint64, int, error) {
	if wt != wireVarint {
		return 0, 0, wireTypeErr(at, field, wt)
	}
	v, j := readVarint(b, i)
	if j < 0 {
		return 0, 0, posErr(at, j, "field \""+field+"\"")
	}
	return v, j, nil
}

// uint32Field reads a uint32 varint field; a value above 2^32-1 is an error.
func uint32Field(b []byte, i, at int, wt uint8, field string) (uint32, int, error) {
	v, j, err := varintField(b, i, at, wt, field)
	if err == nil && v > math.MaxUint32 {
		err = decodeErr(at, "field \""+field+"\": value above 2^32-1")
	}
	return uint32(v), j, err
}

// doubleField reads a double (fixed64) field.
func doubleField(b []byte, i, at int, wt uint8, field string) (float64, int, error) {
	if wt != wireI64 {
		return 0, 0, wireTypeErr(at, field, wt)
	}
	v, j := readFixed64(b, i)
	if j < 0 {
		return 0, 0, posErr(at, j, "field \""+field+"\"")
	}
	return math.Float64frombits(v), j, nil
}

// stringField reads a string field as a Go string. old is the string
// previously in the destination field, returned when equal, so that a
// reused destination does not allocate the same strings again.
func stringField(b []byte, i, at int, wt uint8, field, old string) (string, int, error) {
	s, e, err := lenField(b, i, at, wt, field)
	if err != nil {
		return "", 0, err
	}
	p := b[s:e]
	if !utf8.Valid(p) {
		return "", 0, utf8Err(s, field)
	}
	if string(p) == old {
		return old, e, nil
	}
	return string(p), e, nil
}

func utf8Err(off int, field string) error {
	return &codec.DecodeError{Codec: Name, Offset: off, Msg: "field \"" + field + "\"", Err: codec.ErrInvalidUTF8}
}

// int32Field reads an int32 varint field, whose negative values are
// sign-extended to 64 bits; a value outside the int32 range is an error,
// where Protobuf would truncate.
func int32Field(b []byte, i, at int, wt uint8, field string) (int32, int, error) {
	v, j, err := varintField(b, i, at, wt, field)
	if err == nil && (int64(v) < math.MinInt32 || int64(v) > math.MaxInt32) {
		err = decodeErr(at, "field \""+field+"\": value outside the int32 range")
	}
	return int32(v), j, err
}
