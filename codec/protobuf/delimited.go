package protobuf

// This file: the framing of the cursor stream, a sequence of
// varint-length-prefixed messages.

import (
	"errors"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

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
