package direct

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
)

// socketCodec is the codec as a transport of WebSocket sessions sees it.
var socketCodec = Codec.(codec.SocketCodec)

// FuzzDecodeServerMsg checks that decoding a server message never panics,
// accepts only valid JSON, reports errors in the documented form, gives the
// same outcome into a fresh and a used destination, and the same result
// whether value objects take the fast path or not.
func FuzzDecodeServerMsg(f *testing.F) {
	for _, fx := range codectest.Fixtures() {
		if fx.Kind == codectest.KindServerMsg {
			f.Add(fx.Input)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m1 codec.ServerMsg
		err1 := socketCodec.DecodeServerMsg(data, &m1)
		checkOutcome(t, data, err1)
		stale := codectest.StaleResult(codectest.KindServerMsg).Server
		err2 := socketCodec.DecodeServerMsg(data, &stale)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("fresh and used destinations: %v / %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if d := codectest.DiffServerMsg(&m1, &stale); d != "" {
			t.Fatalf("fresh and used destinations differ: %s", d)
		}
		// See FuzzDecodePipeline: the space keeps the meaning and misses
		// the fast path of value objects.
		if slow := bytes.ReplaceAll(data, []byte(`{"type":"`), []byte(`{ "type":"`)); len(slow) != len(data) {
			var m3 codec.ServerMsg
			if err := socketCodec.DecodeServerMsg(slow, &m3); err != nil {
				t.Fatalf("the general path fails: %v", err)
			}
			if d := codectest.DiffServerMsg(&m1, &m3); d != "" {
				t.Fatalf("fast and general paths differ: %s", d)
			}
		}
	})
}

func TestAllocsSocket(t *testing.T) {
	req := benchRequest()
	codectest.CheckSocketAllocs(t, socketCodec, req.Baton, req.Requests[0].Stmt, req.Requests[1].Batch)
}

// TestDecodeServerMsgErrors checks where decode errors point: at the
// start of at in the input.
func TestDecodeServerMsgErrors(t *testing.T) {
	for _, tc := range []struct{ in, at string }{
		{`{"type":"response_ok","request_id":2147483648,"response":{"type":"open_stream"}}`, `2147483648`},
		{`{"type":"response_ok","request_id":1}`, `{"type"`},
		{`{"type":"response_ok","response":{"type":"fetch_cursor","entries":[{"type":"row","row":5}]}}`, `5}`},
		{`{"type":"response_ok","response":{"type":"fetch_cursor","done":"x"}}`, `"x"`},
		{`{"type":"response_ok","response":{"type":"fetch_cursor","entries":[null]}}`, `null`},
		{`{"type":"hello_error","error":[]}`, `[]`},
		{`{"type":"nope"}`, `{`},
	} {
		var m codec.ServerMsg
		err := socketCodec.DecodeServerMsg([]byte(tc.in), &m)
		de, ok := err.(*codec.DecodeError)
		if want := strings.Index(tc.in, tc.at); !ok || de.Codec != Name || de.Offset != want {
			t.Errorf("%s: error %#v, want one at offset %d", tc.in, err, want)
		}
	}
	if err := socketCodec.DecodeServerMsg([]byte(`{}`), nil); err == nil {
		t.Error("decoding into nil succeeded")
	}
}
