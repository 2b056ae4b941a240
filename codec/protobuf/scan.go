package protobuf

// This file: the Protobuf scanner, the wire format itself (varints,
// zigzag, tags, length-delimited fields, skipping unknown fields). Nothing
// here knows the Hrana messages; fields.go reads one known field, and
// delimited.go splits the cursor stream into messages.

import (
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// The Protobuf wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireSGroup = 3
	wireEGroup = 4
	wireI32    = 5
)

// Negative positions returned by the readers instead of an error value, so
// that the hot paths return two words; see posErr.
const (
	errTruncated = -1 // the input ends inside a varint, fixed field or length
	errOverflow  = -2 // a varint longer than 10 bytes or above 2^64-1
)

// readVarint reads a varint at b[i:]. It returns the value and the position
// after it, or a negative position (errTruncated, errOverflow). Encodings
// that are longer than needed (0x80 0x00 for 0) are accepted, as every
// Protobuf parser does, up to the 10-byte limit.
func readVarint(b []byte, i int) (uint64, int) {
	// One byte covers most tags, lengths of short fields and small ints;
	// this part is small enough for the compiler to inline.
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1
	}
	return readVarintSlow(b, i)
}

func readVarintSlow(b []byte, i int) (uint64, int) {
	var v uint64
	for k := 0; k < 9; k++ {
		if i >= len(b) {
			return 0, errTruncated
		}
		c := b[i]
		i++
		v |= uint64(c&0x7f) << (7 * k)
		if c < 0x80 {
			return v, i
		}
	}
	// The 10th byte may only hold bit 63.
	if i >= len(b) {
		return 0, errTruncated
	}
	if c := b[i]; c > 1 {
		return 0, errOverflow
	}
	return v | uint64(b[i])<<63, i + 1
}

// zigzag decodes a sint64.
func zigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// readFixed64 reads a little-endian 64-bit field at b[i:].
func readFixed64(b []byte, i int) (uint64, int) {
	if len(b)-i < 8 {
		return 0, errTruncated
	}
	_ = b[i+7]
	v := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
		uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
	return v, i + 8
}

// readLen reads the length prefix of a length-delimited field at b[i:] and
// returns the bounds [start, end) of its payload within b.
func readLen(b []byte, i int) (start, end int) {
	n, j := readVarint(b, i)
	if j < 0 {
		return j, j
	}
	if n > uint64(len(b)-j) {
		return errTruncated, errTruncated
	}
	return j, j + int(n)
}

// decodeErr builds the error of a decode that failed at offset off.
func decodeErr(off int, msg string) error {
	return &codec.DecodeError{Codec: Name, Offset: off, Msg: msg}
}

// posErr turns a negative position from a reader into an error at off.
func posErr(off, pos int, what string) error {
	if pos == errOverflow {
		return decodeErr(off, what+": varint overflows 64 bits")
	}
	return decodeErr(off, what+": truncated")
}

// readTag reads a field key at b[i:]. Field numbers must be in 1..MaxInt32
// (as in google.golang.org/protobuf's protowire.ConsumeTag); wire types 6
// and 7 do not exist.
func readTag(b []byte, i int) (num uint64, wt uint8, j int, err error) {
	v, j := readVarint(b, i)
	if j < 0 {
		return 0, 0, j, posErr(i, j, "field key")
	}
	num, wt = v>>3, uint8(v&7)
	if num == 0 || num > math.MaxInt32 {
		return 0, 0, j, decodeErr(i, "invalid field number "+strconv.FormatUint(num, 10))
	}
	if wt > wireI32 {
		return 0, 0, j, decodeErr(i, "invalid wire type "+strconv.Itoa(int(wt)))
	}
	return num, wt, j, nil
}

// skipField skips the payload of an unknown field with wire type wt whose
// key ended at b[i:], validating it as a field of that type. Groups are
// skipped field by field, nested up to codec.MaxDepth, with their end key
// matching; a stray end-group key is an error. The payload of a
// length-delimited field is not looked into (it may not be a message).
func skipField(b []byte, num uint64, wt uint8, i int) (int, error) {
	start := i
	switch wt {
	case wireVarint:
		if _, i = readVarint(b, i); i < 0 {
			return i, posErr(start, i, "unknown field")
		}
	case wireI64:
		if len(b)-i < 8 {
			return errTruncated, decodeErr(start, "unknown field: truncated")
		}
		i += 8
	case wireI32:
		if len(b)-i < 4 {
			return errTruncated, decodeErr(start, "unknown field: truncated")
		}
		i += 4
	case wireLen:
		if _, i = readLen(b, i); i < 0 {
			return i, posErr(start, i, "unknown field")
		}
	case wireSGroup:
		return skipGroup(b, num, i)
	default: // wireEGroup
		return i, decodeErr(start, "end-group key without a group")
	}
	return i, nil
}

// skipGroup skips the fields of a group up to its end key. It keeps a stack
// of open group numbers in a fixed array rather than recursing.
func skipGroup(b []byte, num uint64, i int) (int, error) {
	var open [codec.MaxDepth]uint64
	depth := 1
	open[0] = num
	for {
		if i >= len(b) {
			return errTruncated, decodeErr(i, "group: truncated")
		}
		at := i
		n, wt, j, err := readTag(b, i)
		if err != nil {
			return j, err
		}
		i = j
		switch wt {
		case wireSGroup:
			if depth == len(open) {
				return i, decodeErr(at, "groups nested deeper than "+strconv.Itoa(codec.MaxDepth))
			}
			open[depth] = n
			depth++
		case wireEGroup:
			if n != open[depth-1] {
				return i, decodeErr(at, "end-group key does not match its group")
			}
			depth--
			if depth == 0 {
				return i, nil
			}
		default:
			if i, err = skipField(b, n, wt, i); err != nil {
				return i, err
			}
		}
	}
}

// wireTypeErr is the error for a known field sent with the wrong wire type.
func wireTypeErr(off int, field string, wt uint8) error {
	return decodeErr(off, "field \""+field+"\": wrong wire type "+strconv.Itoa(int(wt)))
}
