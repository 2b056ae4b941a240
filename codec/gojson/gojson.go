// Package gojson is the baseline JSON codec for the Hrana 3 messages of
// package codec, over HTTP and WebSocket ("hrana3" and "hrana2"), built on
// github.com/goccy/go-json and its encoding/json/v2 API
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
// The decoding rules it follows, and its own details, are in docs/CODECS.md.
//
// Who imports it: a program that wants codec=gojson imports it for its
// registration (import _ "github.com/gohrana/libsql/codec/gojson"); the driver
// does not, so goccy/go-json is linked only there.
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
