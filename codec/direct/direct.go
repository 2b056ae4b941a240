// Package direct is a hand-written, allocation-free JSON codec for the Hrana
// 3 messages of package codec, over HTTP and WebSocket ("hrana3" and
// "hrana2"). It is the default codec of the driver.
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
//	// resp's text values may point into body
//
// The decoding rules it follows, and its own details, are in docs/CODECS.md.
//
// Who imports it: the driver, which registers it; users only to hold its Codec
// directly.
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
