package gojson_test

import (
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/gojson"
)

var socketCodec = gojson.Codec.(codec.SocketCodec)

// FuzzDecodeServerMsg checks that decoding a server message never panics,
// reports errors as *codec.DecodeError values of this codec, and gives the
// same outcome into a fresh and a used destination.
func FuzzDecodeServerMsg(f *testing.F) {
	for _, fx := range codectest.Fixtures() {
		if fx.Kind == codectest.KindServerMsg {
			f.Add(fx.Input)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fresh := codectest.Decode(gojson.Codec, codectest.KindServerMsg, data)
		var pe *codectest.PanicError
		if errors.As(fresh.Err, &pe) {
			t.Fatal(pe)
		}
		var de *codec.DecodeError
		if fresh.Err != nil && (!errors.As(fresh.Err, &de) || de.Codec != gojson.Name) {
			t.Fatalf("error %v (%T) is not a *codec.DecodeError of the codec", fresh.Err, fresh.Err)
		}
		used := codectest.StaleResult(codectest.KindServerMsg)
		codectest.DecodeInto(gojson.Codec, data, &used)
		if d := codectest.Diff(&fresh, &used); d != "" {
			t.Fatalf("fresh and used destinations differ: %s", d)
		}
	})
}

func TestDecodeServerMsgNil(t *testing.T) {
	var de *codec.DecodeError
	if err := socketCodec.DecodeServerMsg([]byte(`{"type":"hello_ok"}`), nil); !errors.As(err, &de) {
		t.Fatalf("decoding into nil: %v", err)
	}
}

// TestEncodeSocketKeepsDst checks that a failed encode returns dst
// unchanged.
func TestEncodeSocketKeepsDst(t *testing.T) {
	req := codec.SocketRequest{Type: codec.SocketExecute, Stmt: codec.Stmt{Args: []codec.Value{codec.IntValue(1), {Type: 42}}}}
	for _, tc := range []struct {
		name   string
		encode func([]byte) ([]byte, error)
	}{
		{"request", func(dst []byte) ([]byte, error) { return socketCodec.AppendSocketRequest(dst, &req) }},
		{"nil request", func(dst []byte) ([]byte, error) { return socketCodec.AppendSocketRequest(dst, nil) }},
		{"hello", func(dst []byte) ([]byte, error) { return socketCodec.AppendHello(dst, "\xff") }},
	} {
		out, err := tc.encode([]byte("keep"))
		var ee *codec.EncodeError
		if !errors.As(err, &ee) || string(out) != "keep" {
			t.Errorf("%s: got %q, %v", tc.name, out, err)
		}
	}
}
