// Package codec defines the Hrana message types, the Value type and the
// Codec interface that turns them into bytes and back. Three implementations
// register themselves by name: codec/direct (hand-written JSON, the
// default), codec/gojson (JSON on github.com/goccy/go-json, the baseline) and
// codec/protobuf (hand-written Protobuf). The driver picks one with the DSN
// parameter codec=. Every codec is also a SocketCodec, for Hrana over
// WebSocket.
//
//	c, _ := codec.Lookup("direct")
//	buf, err := c.AppendPipelineRequest(buf[:0], &req)
//	err = c.DecodePipelineResponse(body, &resp)
//
// The decoding and encoding rules every codec follows are in docs/CODECS.md.
//
// Who imports it: codec authors, who implement Codec and register it; the driver
// and the transports, which speak in its messages; users only to name a codec
// for Config.Codec by Lookup.
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
// destination first and reuse its slices' capacity; they may keep
// references into the input in Value.Bytes (docs/CODECS.md says which).
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

// Error returns "codec NAME: cannot decode response: " and the message,
// followed by the cause if there is one.
func (e *DecodeError) Error() string { return errorText(e.Codec, "decode response", e.Msg, e.Err) }

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// EncodeError is returned by encoders for values the wire cannot carry.
type EncodeError struct {
	Codec string
	Msg   string
	Err   error // optional cause
}

// Error returns "codec NAME: cannot encode request: " and the message,
// followed by the cause if there is one.
func (e *EncodeError) Error() string { return errorText(e.Codec, "encode request", e.Msg, e.Err) }

// Unwrap returns the cause.
func (e *EncodeError) Unwrap() error { return e.Err }

// errorText is the message of a DecodeError or EncodeError: "codec NAME:
// cannot ACTION: MSG", then the cause if there is one.
func errorText(codecName, action, msg string, cause error) string {
	s := "codec " + codecName + ": cannot " + action + ": " + msg
	if cause != nil {
		s += ": " + cause.Error()
	}
	return s
}

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

// Error returns the message, without the location.
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
