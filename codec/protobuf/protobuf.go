// Package protobuf is a hand-written, allocation-free codec for the Hrana 3
// Protobuf encoding of the messages of package codec: sqld's /v3-protobuf
// endpoints and the "hrana3-protobuf" WebSocket subprotocol. It uses no
// Protobuf library.
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
//	// resp's text and blob values point into body
//
// A cursor response is a stream of length-prefixed messages, the header and
// then the entries; split them with SplitDelimited:
//
//	msg, rest, err := protobuf.SplitDelimited(buf, maxLen)
//	err = protobuf.Codec.DecodeCursorHeader(msg, &h) // then DecodeCursorEntry
//
// The schema, the framing and the decoding rules are in docs/CODECS.md.
//
// Who imports it: the driver, which registers it (codec=protobuf, codec=auto);
// users only to hold its Codec directly.
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
