// Package codec defines the Hrana message types, the Value type and the
// Codec interface that turns them into bytes and back.
//
// Two implementations exist: codec/direct (hand-written, allocation-free,
// the default) and codec/gojson (on github.com/goccy/go-json, the baseline).
// They register themselves by name; the driver picks one with the DSN
// parameter codec=.
//
//	c, err := codec.Lookup("direct")
//	buf, err = c.AppendPipelineRequest(buf[:0], &req)
//	err = c.DecodePipelineResponse(body, &resp)
//
// Every registered codec is also a SocketCodec, for Hrana over WebSocket
// (ws.go): the JSON codecs speak the "hrana3" and "hrana2"
// subprotocols, codec/protobuf "hrana3-protobuf".
//
// # Decoding rules
//
// Every codec decodes the same input to the same values, or rejects it; the
// differential tests hold them to that. The rules:
//
//   - Objects: fields in any order; unknown fields are skipped at any depth
//     (they must still be valid JSON); a repeated key is decoded each time
//     it appears, in order, so an invalid occurrence is an error even when a
//     later one is valid, and the last one wins; a null field is the same as
//     an absent one. Members are interpreted under the "type" seen so far. Whitespace is the four JSON
//     whitespace bytes. Nesting deeper than MaxDepth is an error.
//     Trailing non-whitespace after the top-level value is an error.
//   - A known field with the wrong JSON type is an error.
//   - Unsigned integer fields (affected_row_count, rows_read, step, ...)
//     take a JSON number that is an integer literal (no fraction or
//     exponent) in range, or a string holding one (replication_index is a
//     string in pipeline results and a number in cursor entries).
//     last_insert_rowid likewise, as an int64, in either form.
//   - query_duration_ms: any JSON number.
//   - Value objects: "type" is required. "integer": "value" is a string
//     accepted by strconv.ParseInt(s, 10, 64), or a JSON integer literal in
//     int64 range. "float": "value" is a JSON number (parsed like
//     strconv.ParseFloat; out-of-range is an error) or null, which means +Inf
//     (serde writes both infinities as null). "text": "value" is a string.
//     "blob": "base64" is standard-alphabet base64, padded or not. "null":
//     no payload. A missing payload, or an unknown type, is an error.
//   - Strings: every JSON escape, surrogate pairs combined; a lone
//     surrogate becomes U+FFFD, as in encoding/json. Input that is not
//     valid UTF-8 anywhere is an error (wrapping ErrInvalidUTF8). Raw
//     control bytes below 0x20 inside strings are an error.
//   - Each row must have exactly len(cols) values.
//   - A StreamResult needs "type" ("ok" or "error"); ok needs "response"
//     with a known "type"; error needs "error". A batch step with both a
//     result and an error is an error.
//   - Cursor entries with an unknown "type" decode as EntryUnknown.
//   - A server message (DecodeServerMsg) needs "type" ("hello_ok",
//     "hello_error", "response_ok" or "response_error"); hello_error and
//     response_error need "error", response_ok needs "response" with a
//     known "type", a SocketRequestType ("close", the HTTP request, is not
//     one). Their "request_id" is an int32, as a number or a string (like
//     last_insert_rowid), read from its last occurrence once the type is
//     known; null or absent is 0. A socket response carries what a stream
//     response of its type does; a fetch_cursor response carries "entries",
//     an array (or null) of cursor entry objects, each decoded as
//     DecodeCursorEntry decodes a line (a null element is an error), and
//     "done", a boolean (or null).
//
// Decoders may keep references into the input in Value.Bytes (zero-copy);
// strings (column names, errors, batons) are always copies. Memory that
// Value.Bytes points to outside the input is never written again by the
// codec once the decode call returns (no reuse of scratch memory handed out),
// so callers may share it, as the driver does for the strings it returns.
//
// # Encoding rules
//
// Encoders append to the caller's buffer. Integers go out as decimal strings,
// blobs as unpadded standard base64, floats in the shortest form that
// round-trips. NaN and ±Inf floats, and text that is not valid UTF-8, are
// rejected with an *EncodeError: JSON cannot carry them. Empty args and
// named_args are omitted (the server refuses null there).
//
// # Shared tables
//
// The protocol facts that every codec applies the same way are written once
// here, for codec implementations: EntryType.Members and ParseEntryMember
// (which members each cursor entry type carries), RequestType.SocketType
// and SocketRequestType.HasResult (which members each response type
// carries), TrimBase64 and Base64 (blob payloads), EncodableFloat and
// AppendFloat.
// Each codec still scans JSON and parses numbers its own way, so that one
// codec remains an independent check on another.
package codec

import (
	"errors"
	"sort"
	"strconv"
	"sync"
)

// MaxDepth is the deepest nesting of JSON arrays and objects a decoder
// accepts.
const MaxDepth = 64

// Codec encodes Hrana requests and decodes Hrana responses.
//
// Implementations are safe for concurrent use. Decode methods reset the
// destination first and reuse its slices' capacity.
type Codec interface {
	// Name is the name the codec is registered under.
	Name() string
	// Format is the encoding the codec speaks, which decides the endpoints
	// and content types a transport uses with it.
	Format() Format
	// AppendPipelineRequest appends the encoded request to dst.
	AppendPipelineRequest(dst []byte, req *PipelineRequest) ([]byte, error)
	// AppendCursorRequest appends the encoded cursor request to dst.
	AppendCursorRequest(dst []byte, req *CursorRequest) ([]byte, error)
	// DecodePipelineResponse decodes a pipeline response body into resp.
	DecodePipelineResponse(data []byte, resp *PipelineResponse) error
	// DecodeCursorHeader decodes the first line of a cursor response.
	DecodeCursorHeader(line []byte, h *CursorHeader) error
	// DecodeCursorEntry decodes one later line of a cursor response.
	DecodeCursorEntry(line []byte, e *CursorEntry) error
	// DecodeError decodes an HTTP error body of the Hrana shape
	// {"message":...,"code":...} or the sqld shape {"error":...}.
	DecodeError(data []byte, e *Error) error
}

// Format is a wire encoding of Hrana 3.
type Format uint8

// The formats. JSON is served on /v3 (and /v2) and the WebSocket
// subprotocols hrana3 and hrana2; Protobuf on /v3-protobuf and hrana3-protobuf.
const (
	FormatJSON Format = iota
	FormatProtobuf
)

// String returns "json" or "protobuf".
func (f Format) String() string {
	if f == FormatProtobuf {
		return "protobuf"
	}
	return "json"
}

// ErrInvalidUTF8 is returned (wrapped) for text that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// DecodeError is returned by decoders for input they cannot decode.
type DecodeError struct {
	Codec  string
	Offset int // byte offset in the input, -1 if unknown
	Msg    string
	Err    error // optional cause
}

func (e *DecodeError) Error() string {
	s := "codec " + e.Codec + ": cannot decode response: " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// EncodeError is returned by encoders for values the wire cannot carry.
type EncodeError struct {
	Codec string
	Msg   string
	Err   error // optional cause
}

func (e *EncodeError) Error() string {
	s := "codec " + e.Codec + ": cannot encode request: " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *EncodeError) Unwrap() error { return e.Err }

var (
	registryMu sync.RWMutex
	registry   = map[string]Codec{}
)

// Register makes a codec available by its name. It panics on a duplicate
// name, as database/sql.Register does.
func Register(c Codec) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[c.Name()]; dup {
		panic("codec: Register called twice for " + c.Name())
	}
	registry[c.Name()] = c
}

// Lookup returns the codec registered under name.
func Lookup(name string) (Codec, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	c, ok := registry[name]
	return c, ok
}

// Names returns the registered codec names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Encoder errors. Encoders report a bad field while unwinding: the
// innermost call makes an EncodeFailure (NewEncodeFailure), each caller on
// the way out prepends its location (AtField, on the error path only), and
// the exported method turns it into the *EncodeError callers see
// (ExportEncodeFailure), whose message starts with the location, e.g.
// "requests[2].stmt.args[0]: ...".

// EncodeFailure is an encoder's error on its way out; see NewEncodeFailure.
type EncodeFailure struct {
	path  string
	msg   string
	cause error
}

func (e *EncodeFailure) Error() string { return e.msg }

// NewEncodeFailure returns the error of a field the wire cannot carry.
func NewEncodeFailure(msg string, cause error) error {
	return &EncodeFailure{msg: msg, cause: cause}
}

// AtField prepends a location segment (before, the index unless it is
// negative, after) to the path of an *EncodeFailure; other errors pass
// unchanged.
func AtField(err error, before string, idx int, after string) error {
	e, ok := err.(*EncodeFailure)
	if !ok {
		return err
	}
	seg := before
	if idx >= 0 {
		seg += strconv.Itoa(idx)
	}
	seg += after
	switch {
	case e.path == "":
		e.path = seg
	case e.path[0] == '[':
		e.path = seg + e.path
	default:
		e.path = seg + "." + e.path
	}
	return e
}

// ExportEncodeFailure converts an *EncodeFailure into the *EncodeError of
// the named codec; other errors pass unchanged.
func ExportEncodeFailure(codecName string, err error) error {
	e, ok := err.(*EncodeFailure)
	if !ok {
		return err
	}
	msg := e.msg
	if e.path != "" {
		msg = e.path + ": " + msg
	}
	return &EncodeError{Codec: codecName, Msg: msg, Err: e.cause}
}
