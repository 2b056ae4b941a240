package protobuf

// This file: walking the fields of one message (fieldReader) and reading
// the payload of one known field, checking its wire type.

import (
	"math"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// fieldReader walks the fields of one message, so that each message's
// decoder says only what its fields are. b is the input cut at the
// message's end (positions are offsets in the whole input). After next
// reports true, num and wt are the current field's number and wire type,
// at is its key's offset (for errors), and i is the position after the
// key; one of the read methods, or skip, then reads the payload and moves i
// past it. The first error ends the walk and stays in err.
type fieldReader struct {
	b   []byte
	i   int
	at  int
	num uint64
	wt  uint8
	err error
}

// next reads the next field's key and reports whether there is a field to
// read: false at the message's end or after an error.
func (f *fieldReader) next() bool {
	if f.err != nil || f.i >= len(f.b) {
		return false
	}
	f.at = f.i
	// A one-byte key, the usual one, is readTag's result without its call.
	if c := f.b[f.i]; c < 0x80 && c>>3 != 0 && c&7 <= wireI32 {
		f.num, f.wt = uint64(c>>3), c&7
		f.i++
		return true
	}
	f.num, f.wt, f.i, f.err = readTag(f.b, f.i)
	return f.err == nil
}

// skip skips the payload of a field that is not read.
func (f *fieldReader) skip() {
	f.i, f.err = skipField(f.b, f.num, f.wt, f.i)
}

// want reports whether the current field, named field, has wire type wt,
// and records the error if not.
func (f *fieldReader) want(wt uint8, field string) bool {
	if f.wt != wt {
		f.err = wireTypeErr(f.at, field, f.wt)
		return false
	}
	return true
}

// advance moves past a payload that ends at j, or records the error of a
// negative j (errTruncated, errOverflow) and reports false.
func (f *fieldReader) advance(j int, field string) bool {
	if j < 0 {
		f.err = posErr(f.at, j, "field \""+field+"\"")
		return false
	}
	f.i = j
	return true
}

// msg reads a length-delimited field and returns the bounds of its payload
// (a message for the caller to decode within f.b, or a string's bytes), or
// ok false after an error.
func (f *fieldReader) msg(field string) (start, end int, ok bool) {
	if !f.want(wireLen, field) {
		return 0, 0, false
	}
	start, end = readLen(f.b, f.i)
	if !f.advance(end, field) {
		return 0, 0, false
	}
	return start, end, true
}

// varint reads a varint field.
func (f *fieldReader) varint(field string) uint64 {
	if !f.want(wireVarint, field) {
		return 0
	}
	v, j := readVarint(f.b, f.i)
	f.advance(j, field)
	return v
}

// uint32 reads a uint32 varint field; a value above 2^32-1 is an error.
func (f *fieldReader) uint32(field string) uint32 {
	v := f.varint(field)
	if f.err == nil && v > math.MaxUint32 {
		f.err = decodeErr(f.at, "field \""+field+"\": value above 2^32-1")
	}
	return uint32(v)
}

// int32 reads an int32 varint field, whose negative values are
// sign-extended to 64 bits; a value outside the int32 range is an error,
// where Protobuf would truncate.
func (f *fieldReader) int32(field string) int32 {
	v := f.varint(field)
	if f.err == nil && (int64(v) < math.MinInt32 || int64(v) > math.MaxInt32) {
		f.err = decodeErr(f.at, "field \""+field+"\": value outside the int32 range")
	}
	return int32(v)
}

// double reads a double (fixed64) field.
func (f *fieldReader) double(field string) float64 {
	if !f.want(wireI64, field) {
		return 0
	}
	v, j := readFixed64(f.b, f.i)
	f.advance(j, field)
	return math.Float64frombits(v)
}

// str reads a string field as a Go string. old is the string previously in
// the destination field, returned when equal, so that a reused destination
// does not allocate the same strings again.
func (f *fieldReader) str(field, old string) string {
	s, e, ok := f.msg(field)
	if !ok {
		return ""
	}
	p := f.b[s:e]
	if !utf8.Valid(p) {
		f.err = utf8Err(s, field)
		return ""
	}
	if string(p) == old {
		return old
	}
	return string(p)
}

func utf8Err(off int, field string) error {
	return &codec.DecodeError{Codec: Name, Offset: off, Msg: "field \"" + field + "\"", Err: codec.ErrInvalidUTF8}
}

// stringPair decodes a message of two string fields, 1 named name1 into
// *s1 and 2 named name2 into *s2 (an Error, a Col, a CursorHeader), which
// it clears first; old1 and old2 are the strings of the earlier use, reused
// when equal.
func stringPair(b []byte, i int, name1, name2 string, s1, s2 *string, old1, old2 string) error {
	*s1, *s2 = "", ""
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch f.num {
		case 1:
			*s1 = f.str(name1, old1)
		case 2:
			*s2 = f.str(name2, old2)
		default:
			f.skip()
		}
	}
	return f.err
}
