package protobuf_test

import (
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
)

// TestFieldErrors checks the errors of the field readers, which the decode
// tables only check to fail: the message names the field and what is wrong
// with it, and the offset is the field's key (or, for invalid UTF-8, its
// payload).
func TestFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		decode func(msg) error
		in     msg
		offset int
		text   string
		errIs  error
	}{
		{"wrong wire type", decodePipeline, f().uint(1, 1), 0, `field "baton": wrong wire type 0`, nil},
		{"wrong wire type of a double", decodePipeline, pipeline(execResult(f().uint(8, 1))), 8, `field "query_duration_ms": wrong wire type 0`, nil},
		{"truncated length", decodePipeline, f().key(1, 2).varint(5), 0, `field "baton": truncated`, nil},
		{"truncated double", decodePipeline, pipeline(execResult(f().key(8, 1).raw(0, 0))), 8, `field "query_duration_ms": truncated`, nil},
		{"varint overflow", decodePipeline, pipeline(execResult(f().key(3, 0).raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02))), 8, `field "affected_row_count": varint overflows 64 bits`, nil},
		{"invalid UTF-8", decodePipeline, f().bytes(1, []byte{0xff}), 2, `field "baton"`, codec.ErrInvalidUTF8},
		{"uint32 above 2^32-1", decodeEntry, f().sub(1, f().uint(1, 1<<32)), 2, `field "step": value above 2^32-1`, nil},
		{"int32 out of range", decodeServerMsg, f().sub(4, f().uint(1, 1<<31)), 2, `field "request_id": value outside the int32 range`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode(tc.in)
			var de *codec.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %#v, want a *codec.DecodeError", err)
			}
			if de.Codec != protobuf.Name || de.Offset != tc.offset || de.Msg != tc.text {
				t.Errorf("got %s error at %d: %q; want at %d: %q", de.Codec, de.Offset, de.Msg, tc.offset, tc.text)
			}
			if tc.errIs != nil && !errors.Is(err, tc.errIs) {
				t.Errorf("%v does not wrap %v", err, tc.errIs)
			}
		})
	}
}

func decodePipeline(in msg) error {
	var r codec.PipelineResponse
	return protobuf.Codec.DecodePipelineResponse(in, &r)
}

func decodeEntry(in msg) error {
	var e codec.CursorEntry
	return protobuf.Codec.DecodeCursorEntry(in, &e)
}

func decodeServerMsg(in msg) error {
	var m codec.ServerMsg
	return socketCodec.DecodeServerMsg(in, &m)
}
