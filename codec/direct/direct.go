// Package direct is a hand-written, allocation-free JSON codec for the Hrana
// 3 messages of package codec. It is the default codec of the driver.
//
// Importing the package registers the codec under the name "direct":
//
//	import (
//		"github.com/gohrana/libsql/codec"
//		_ "github.com/gohrana/libsql/codec/direct"
//	)
//
//	c, _ := codec.Lookup("direct")
//
// or use the exported value directly:
//
//	buf, err := direct.Codec.AppendPipelineRequest(buf[:0], &req)
//	...
//	var resp codec.PipelineResponse // reuse it across calls
//	err = direct.Codec.DecodePipelineResponse(body, &resp)
//
// # Encoding
//
// The encoder appends to the caller's buffer and allocates nothing when the
// buffer has room. On error it returns dst cut back to its original length
// and an *codec.EncodeError. Floats are written in the shortest form that
// round-trips; an integral float gets a ".0" suffix (1 is sent as 1.0 and -0
// as -0.0, so the server keeps the sign), as the server itself writes them.
// Any string that is not valid UTF-8 (text values, SQL, names, the baton) is
// rejected with an *codec.EncodeError wrapping codec.ErrInvalidUTF8.
//
// # Decoding
//
// The decoder is a byte-slice scanner without reflection. It follows every
// rule in the codec package documentation and returns *codec.DecodeError
// values with Codec "direct" and the byte offset of the problem. It never
// panics, whatever the input.
//
// Decoding into a reused destination allocates nothing per value in the
// steady state:
//
//   - Text values without escape sequences point into the input
//     (Value.Bytes is a sub-slice of data with its capacity clipped), so they
//     are valid only while the input buffer is.
//   - Text values with escape sequences and blobs are written to chunks of
//     memory that are never moved or reused once handed out; a chunk is
//     allocated now and then (chunk sizes double, bounded by the input that
//     is left), not per value.
//   - Go strings (column names, decltypes, error messages and codes,
//     parameter names, the baton and base_url) are copies. A string equal to
//     the one already in the same place of the destination is kept as it
//     is, and short strings are interned in a small per-decoder cache, so
//     that decoding the same shape of response again allocates no strings.
//   - The slices of the destination (Results, Steps, Cols, Values, Params,
//     Row) are truncated and refilled, keeping their capacity.
//
// On error the destination holds whatever was decoded before the error.
//
// Value objects written exactly as the server writes them
// ({"type":"integer","value":"1"} and so on, no whitespace) take a fast
// path; any other spelling (other field order, unknown or repeated fields,
// whitespace) takes the general path, which gives the same result.
//
// # Wire details that the codec documentation leaves open
//
// This codec and codec/gojson agree on these:
//
//   - The top-level object is at depth 1; codec.MaxDepth levels are
//     allowed.
//   - Unsigned fields given as a string are parsed like
//     strconv.ParseUint(s, 10, 64) (so "007" is 7, "+7" is an error); given
//     as a number the literal must have no fraction, exponent or minus sign
//     ("-0" is an error). step must also fit in 32 bits.
//   - Integer values and last_insert_rowid given as a string are parsed like
//     strconv.ParseInt(s, 10, 64) ("+5" and "007" are accepted); given as a
//     number, any integer literal in range ("-0" is 0). Strings are
//     unescaped before they are parsed.
//   - query_duration_ms out of float64 range is an error, as for float
//     values.
//   - Blob payloads are standard-alphabet base64. If the string ends in "="
//     the padding must be exact (the string is a multiple of 4 long, at
//     most two "="); the rest is decoded with
//     base64.RawStdEncoding.Strict(), so non-zero trailing bits are
//     rejected. Line breaks, which encoding/base64 would skip, are rejected.
//   - Fields that do not belong to an object's type (a value's "base64"
//     when it is an integer, a cursor entry's "row" when it is a step_end,
//     the "result" of a close response, the "error" of an ok stream result)
//     are ignored whatever their JSON type, like unknown fields.
//   - A null field, also when it repeats an earlier key, resets the field
//     to its zero value ("last one wins", and null means absent).
//   - Array elements that must be objects (results, columns, rows' values,
//     describe params) may not be null; step_results and step_errors
//     elements may.
//   - A cursor entry without "type" (or with a null one) is EntryUnknown.
//   - The result of an execute, batch or describe response is optional.
//   - DecodeError takes "message" when it is present (not null) and
//     "error" otherwise; "code" whenever present. An object with neither
//     decodes as an empty Error.
//
// # WebSocket messages
//
// The codec is a codec.SocketCodec for the "hrana3" and "hrana2"
// subprotocols (one message per text frame). AppendHello and
// AppendSocketRequest write the members the request's type carries, and
// all of them: stream_id, cursor_id, sql_id and max_count as numbers (also
// when 0), replication_index as a decimal string when not 0, sql_id instead
// of sql when HasSQLID; they allocate nothing when dst has room.
//
// DecodeServerMsg follows the same rules and the same paths as the pipeline
// decoder, and is allocation-free into a reused destination in the same
// way. A message's "response" and "error" are read like those of a stream
// result (in place when the type read so far uses them, otherwise once the
// type is known); "request_id", like "is_autocommit" and "done", is read
// from its last occurrence once the type is known. A fetch_cursor's entries
// are decoded as DecodeCursorEntry decodes a line, into the destination's
// entries, whose slices and strings are reused.
package direct

import "github.com/gohrana/libsql/codec"

// Name is the name the codec is registered under.
const Name = "direct"

// Codec is the direct codec. It is safe for concurrent use and is registered
// with codec.Register under Name when the package is imported.
var Codec codec.Codec = jsonCodec{}

func init() {
	codec.Register(Codec)
}

// jsonCodec implements codec.Codec. It has no state of its own: per-call
// scratch memory comes from a sync.Pool.
type jsonCodec struct{}

// Name returns "direct".
func (jsonCodec) Name() string { return Name }

// Format returns codec.FormatJSON.
func (jsonCodec) Format() codec.Format { return codec.FormatJSON }
