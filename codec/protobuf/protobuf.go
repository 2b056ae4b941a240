// Package protobuf is a hand-written, allocation-free codec for the Hrana 3
// Protobuf encoding (sqld's /v3-protobuf endpoints) of the messages of
// package codec. It uses no Protobuf library: the wire format is simple, and
// decoding straight into the codec types is the point.
//
// Importing the package registers the codec under the name "protobuf":
//
//	import (
//		"github.com/gohrana/libsql/codec"
//		_ "github.com/gohrana/libsql/codec/protobuf"
//	)
//
//	c, _ := codec.Lookup("protobuf")
//
// or use the exported value directly:
//
//	buf, err := protobuf.Codec.AppendPipelineRequest(buf[:0], &req)
//	...
//	var resp codec.PipelineResponse // reuse it across calls
//	err = protobuf.Codec.DecodePipelineResponse(body, &resp)
//
// A cursor response is a stream of varint-length-prefixed messages: the
// first is the header (CursorRespBody), the others are entries. Split them
// with SplitDelimited and decode each one:
//
//	msg, rest, err := protobuf.SplitDelimited(buf, maxLen)
//	err = protobuf.Codec.DecodeCursorHeader(msg, &h) // then DecodeCursorEntry
//
// The schema is Hrana 3's with sqld's extensions (libsql-hrana's proto.rs
// and protobuf.rs in tursodatabase/libsql): replication_index in Stmt,
// Batch, sequence, describe, StmtResult and cursor entries (field 6, a
// message holding the index in its field 1), rows_read, rows_written and
// query_duration_ms in StmtResult.
//
// # Encoding
//
// The encoder appends to the caller's buffer and allocates nothing when the
// buffer has room. On error it returns dst cut back to its original length
// and an *codec.EncodeError. Integers are zigzag sint64; floats are doubles,
// so NaN and ±Inf are sent exactly (this codec carries them; what the
// driver lets through is decided above the codec). Strings that are not
// valid UTF-8 (text values, SQL, names, the baton) are rejected with an
// *codec.EncodeError wrapping codec.ErrInvalidUTF8, since proto3 strings
// must be UTF-8; blobs are raw bytes. Fields with explicit presence are
// written when set even if zero: want_rows always (sqld defaults an absent
// want_rows to true), sql_id when HasSQLID, the step of a condition always.
// Empty args and named_args are omitted (that is how Protobuf writes an
// empty list). A nested message's length is written after its content, by
// moving the content when the length needs more than one byte, so that
// nothing is measured twice.
//
// # Decoding
//
// The decoder follows the rules of the codec package documentation where
// they apply to Protobuf and returns *codec.DecodeError values with Codec
// "protobuf" and the byte offset of the problem. It never panics, whatever
// the input.
//
//   - Fields may come in any order. Unknown fields are skipped, groups
//     included (nested up to codec.MaxDepth); they must still be well formed.
//   - A known field with the wrong wire type is an error. Field numbers
//     must be in 1..2^31-1, as protowire.ConsumeTag requires.
//   - Proto3 omits zero values: an absent scalar is 0, false or "". The
//     optional fields (last_insert_rowid, replication_index) set their Has
//     flag when present, whatever their value. An absent nested message is
//     an empty one, so a missing result is an empty result.
//   - A scalar field that repeats: the last one wins. A non-repeated message
//     field (and a oneof member) that repeats: the last one wins as a
//     whole, as for JSON objects in the codec rules, where Protobuf would
//     merge the two; sqld never writes a field twice. Of a oneof, the last
//     member present wins.
//   - uint32 fields (step, a batch step's index) above 2^32-1 are an error,
//     where Protobuf would truncate.
//   - Strings must be valid UTF-8, or the error wraps codec.ErrInvalidUTF8.
//   - Each row must have exactly len(cols) values. A Value without any of
//     its five members, a StreamResult with neither ok nor error, and a
//     StreamResponse with no known member are errors.
//   - BatchResult is two maps from step index to StmtResult and to Error.
//     Steps has one entry per index up to the highest present; a step in
//     both maps is an error, and an index of MaxBatchSteps or more is an
//     error (it bounds what a small input can make the decoder allocate).
//     Skipped steps after the last result or error are not on the wire, and
//     BatchResult has no replication_index in Protobuf, so
//     HasReplicationIndex is always false.
//   - A cursor entry with no known member (sqld writes a zero-length one
//     for a missing replication index) decodes as EntryUnknown.
//   - DecodeError decodes the Protobuf Error message, the body of sqld's
//     STREAM_EXPIRED answers on these routes; the other error bodies are
//     JSON or text, which the transport recognises by their Content-Type.
//
// Decoding into a reused destination allocates nothing in the steady state:
// text and blob values point into the input (Value.Bytes is a sub-slice of
// the data with its capacity clipped, so it is valid only while the input
// is, and an empty one is empty but not nil); Go strings (column names,
// decltypes, errors, parameter names, the baton) are copies, except that a
// string equal to the one already in the same place of the destination is
// kept; the destination's slices are truncated and refilled, keeping their
// capacity. On error the destination holds whatever was decoded before the
// error.
//
// # WebSocket messages
//
// The codec is a codec.SocketCodec for the "hrana3-protobuf" subprotocol
// (one message per binary frame; libsql-server's hrana/ws/proto.rs and
// protobuf.rs): ClientMsg { hello = 1, request = 2 } and ServerMsg
// { hello_ok = 1, hello_error = 2, response_ok = 3, response_error = 4 },
// where RequestMsg and ResponseOkMsg carry request_id = 1 and a oneof whose
// member number is the codec.SocketRequestType plus one (open_stream = 2
// ... get_autocommit = 13). An execute carries its replication index in
// ExecuteReq's own field 3, sequence and describe in field 4; a Stmt's
// index stays in the Stmt.
//
//   - Encoding follows proto3: int32 and uint32 fields that are 0 (ids,
//     max_count) are left out, a hello without a JWT is an empty HelloMsg;
//     sql or sql_id, whichever the request names its SQL by, is written
//     even when empty or 0.
//   - A ServerMsg or a ResponseOkMsg with no known member is an error; of
//     several members the last one wins as a whole. A HelloErrorMsg or
//     ResponseErrorMsg without its error has an empty one, as every absent
//     message is empty.
//   - request_id outside the int32 range (a varint that is not a
//     sign-extended int32) is an error, where Protobuf would truncate.
//   - A fetch_cursor's entries (FetchCursorResp { repeated CursorEntry
//     entries = 1; bool done = 2 }) decode as DecodeCursorEntry decodes
//     one: the zero-length entry sqld writes for a missing replication
//     index is EntryUnknown.
package protobuf

import "github.com/gohrana/libsql/codec"

// Name is the name the codec is registered under.
const Name = "protobuf"

// MaxBatchSteps bounds the step indexes of a decoded BatchResult.
const MaxBatchSteps = 1 << 16

// Codec is the Protobuf codec. It is safe for concurrent use and is
// registered with codec.Register under Name when the package is imported.
var Codec codec.Codec = pbCodec{}

func init() {
	codec.Register(Codec)
}

// pbCodec implements codec.Codec. It has no state: decoding needs no
// scratch memory beyond the destination.
type pbCodec struct{}

// Name returns "protobuf".
func (pbCodec) Name() string { return Name }

// Format returns codec.FormatProtobuf.
func (pbCodec) Format() codec.Format { return codec.FormatProtobuf }
