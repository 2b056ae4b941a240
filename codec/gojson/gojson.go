// Package gojson is the baseline codec for the Hrana 3 messages of package
// codec, built on github.com/goccy/go-json and its encoding/json/v2 API
// (github.com/goccy/go-json/v2).
//
// Importing the package registers the codec under the name "gojson":
//
//	import (
//		"github.com/gohrana/libsql/codec"
//		_ "github.com/gohrana/libsql/codec/gojson"
//	)
//
//	c, _ := codec.Lookup("gojson")
//
// or use the exported value directly:
//
//	buf, err := gojson.Codec.AppendPipelineRequest(buf[:0], &req)
//	...
//	var resp codec.PipelineResponse
//	err = gojson.Codec.DecodePipelineResponse(body, &resp)
//
// # How it works
//
// Responses are decoded by the library's encoding/json/v2 API into wire
// types with JSON tags and then copied into the codec types; requests are
// converted to wire structs and marshalled with the encoding/json API. The
// library's own rules are narrowed where the codec package documentation
// asks for something else:
//
//   - The input must be valid UTF-8 as a whole and nest no deeper than
//     codec.MaxDepth, and the top-level value must be an object; these are
//     checked before the library sees it. The library then decodes with
//     duplicate names allowed and with invalid UTF-8 allowed, so that a lone
//     surrogate escape becomes U+FFFD, as in encoding/json (raw invalid
//     UTF-8 never gets that far).
//   - Names match exactly (the v2 API is case-sensitive, unlike the
//     encoding/json API of the library, which folds case), and null zeroes
//     a field, so that a null is the same as an absent field, also when it
//     repeats an earlier key.
//   - Objects do not merge across repeated keys: the wire types reset
//     themselves in their UnmarshalJSON methods, which also check and
//     convert what they decoded (null elements, unknown types, row lengths,
//     value payloads), so that every occurrence of a repeated key is checked
//     as it is read and the last one wins.
//   - Objects with a "type" member whose other members depend on it (stream
//     results, stream responses, cursor entries) are walked member by member
//     with the library's jsontext decoder: a member is checked as it is read
//     when the type read so far uses it, and of the members the final type
//     uses, the last occurrence counts. Value objects take the last
//     occurrence of each member and are interpreted once complete.
//   - Leaves with rules of their own (Value payloads, unsigned integers
//     given as numbers or strings, last_insert_rowid, query_duration_ms) are
//     parsed by this package from the raw JSON with strconv; blob payloads
//     follow the base64 rules of package codec (codec.TrimBase64,
//     codec.Base64), and the members of each cursor entry type and the
//     response types with a result come from its tables too.
//
// Decoded values never point into the caller's input: Value.Bytes refers to
// memory owned by the result.
//
// # Wire details that the codec documentation leaves open
//
// This codec and codec/direct agree on these (the differential tests in
// codec/codectest hold them to it):
//
//   - The depth of the top-level object is 1.
//   - Repeated keys: as described above; an invalid earlier occurrence is an
//     error unless its meaning was still unknown when it was read.
//   - Unsigned fields given as a string are parsed with
//     strconv.ParseUint(s, 10, 64); as a number, the literal must have no
//     fraction, exponent or minus sign ("-0" is rejected). Integer Values and
//     last_insert_rowid given as a string use strconv.ParseInt(s, 10, 64)
//     (so "+5" and "007" are accepted); as a number, any integer literal in
//     range ("-0" is 0). Strings are unescaped before they are parsed.
//   - query_duration_ms out of float64 range is an error, as for float
//     Values.
//   - Blob payloads are standard-alphabet base64; if the string ends in "="
//     the padding must be exact (a multiple of 4 long), non-zero trailing
//     bits are rejected (RawStdEncoding.Strict), and so are line breaks.
//   - Members that do not belong to the object's type (a Value's "base64"
//     when it is an integer, a cursor entry's "row" when it is a step_end,
//     "result" of a close response, ...) are ignored whatever their JSON
//     type, like unknown fields.
//   - A cursor entry without "type" (or with a null one) is EntryUnknown.
//   - The result of an execute, batch or describe response is optional.
//   - DecodeError takes "message" when it is present and "error" otherwise.
//
// The codec is a codec.SocketCodec for the "hrana3" and "hrana2"
// subprotocols: server messages decode under the same rules, their
// "response" and "error" like those of a stream result, "request_id" from
// its last occurrence once the type is known, and a fetch_cursor's entries
// as DecodeCursorEntry decodes a line. Client messages carry every member
// of their request type, the numbers as numbers and replication_index as a
// decimal string, as codec/direct writes them.
//
// Encoding writes floats with codec.AppendFloat, as codec/direct does: the
// shortest form that round-trips (strconv's 'g' format), with ".0" added to
// integral values so that the server keeps -0 as a float. Strings that are not valid UTF-8
// (text values, SQL, argument names, the baton) are rejected with an
// *codec.EncodeError wrapping codec.ErrInvalidUTF8.
package gojson

import (
	"fmt"

	"github.com/gohrana/libsql/codec"
)

// Name is the name the codec is registered under.
const Name = "gojson"

// Codec is the gojson codec. It is safe for concurrent use and is registered
// with codec.Register under Name when the package is imported.
var Codec codec.Codec = jsonCodec{}

func init() {
	codec.Register(Codec)
}

// jsonCodec implements codec.Codec. It has no state.
type jsonCodec struct{}

// Name returns "gojson".
func (jsonCodec) Name() string { return Name }

// Format returns codec.FormatJSON.
func (jsonCodec) Format() codec.Format { return codec.FormatJSON }

// decodeErr makes a *codec.DecodeError with an unknown offset.
func decodeErr(msg string, cause error) *codec.DecodeError {
	return &codec.DecodeError{Codec: Name, Offset: -1, Msg: msg, Err: cause}
}

// encodeErr makes a *codec.EncodeError.
func encodeErr(msg string, cause error) *codec.EncodeError {
	return &codec.EncodeError{Codec: Name, Msg: msg, Err: cause}
}

// recoverDecode turns a panic of the library or of this package into a
// DecodeError. It is a last line of defence, not the way errors are found.
func recoverDecode(err *error) {
	if r := recover(); r != nil {
		*err = decodeErr(fmt.Sprintf("internal error: %v", r), nil)
	}
}

// recoverEncode turns a panic into an EncodeError.
func recoverEncode(err *error) {
	if r := recover(); r != nil {
		*err = encodeErr(fmt.Sprintf("internal error: %v", r), nil)
	}
}
