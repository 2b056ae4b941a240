// Package prototest checks codec/protobuf against an independent Hrana 3
// Protobuf decoder built on google.golang.org/protobuf's protowire. It is a
// module of its own so that the driver never depends on that library.
//
// Ref decodes responses and requests field by field with protowire, under
// the decoding rules of docs/CODECS.md, over HTTP and WebSocket
// (ServerMsg, and ClientMsg with DecodeClientMsg); the tests decode the
// same inputs with both (FuzzDifferential) and decode what codec/protobuf
// encodes (FuzzEncodeRoundTrip).
package prototest
