package protobuf

// This file: the Protobuf wire format itself (varints, zigzag, tags,
// length-delimited fields, skipping unknown fields) and SplitDelimited for
// the cursor stream. Nothing here knows the Hrana messages.

import (
	"errors"
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

// ErrTruncated is wrapped by the error of SplitDelimited when data holds
// less than one whole message: the caller should read more input and call
// it again, or report a truncated stream if there is no more.
var ErrTruncated = errors.New("truncated length-delimited message")

// ErrTooLarge is wrapped by the error of SplitDelimited when the length
// prefix announces a message longer than the caller's bound.
var ErrTooLarge = errors.New("length-delimited message too large")

// SplitDelimited splits one varint-length-prefixed message (the framing of
// prost's encode_length_delimited, which sqld uses for cursor responses)
// off the front of data: msg is the message's bytes (a sub-slice of data,
// possibly empty) and rest what follows it.
//
// A length above maxLen is an error wrapping ErrTooLarge, whether or not
// the bytes are there, so that a reader never buffers more than maxLen plus
// the 10 bytes of a prefix for one message. When data ends inside the prefix or
// the message (including when data is empty), the error wraps ErrTruncated.
// A malformed prefix (more than 10 bytes) is an error wrapping neither.
// Errors are *codec.DecodeError values.
func SplitDelimited(data []byte, maxLen int) (msg, rest []byte, err error) {
	n, i := readVarint(data, 0)
	switch {
	case i == errTruncated:
		return nil, data, &codec.DecodeError{Codec: Name, Offset: len(data), Msg: "message length", Err: ErrTruncated}
	case i < 0:
		return nil, data, decodeErr(0, "message length: varint overflows 64 bits")
	case n > uint64(maxLen):
		return nil, data, &codec.DecodeError{Codec: Name, Offset: 0,
			Msg: "message of " + strconv.FormatUint(n, 10) + " bytes, more than " + strconv.Itoa(maxLen), Err: ErrTooLarge}
	case n > uint64(len(data)-i):
		return nil, data, &codec.DecodeError{Codec: Name, Offset: len(data), Msg: "message of " + strconv.FormatUint(n, 10) + " bytes", Err: ErrTruncated}
	}
	end := i + int(n)
	return data[i:end:end], data[end:], nil
}
