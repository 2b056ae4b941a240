package codectest_test

import (
	"encoding/binary"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
)

// valuesFrom turns fuzz bytes into statement arguments: a type byte, then
// the payload (8 bytes for numbers, a length byte and bytes for text and
// blobs).
func valuesFrom(data []byte) []codec.Value {
	var vs []codec.Value
	for len(data) > 0 && len(vs) < 64 {
		t := data[0] % 5
		data = data[1:]
		switch codec.Type(t) {
		case codec.Null:
			vs = append(vs, codec.NullValue())
		case codec.Integer, codec.Float:
			var b [8]byte
			n := copy(b[:], data)
			data = data[n:]
			u := binary.LittleEndian.Uint64(b[:])
			if codec.Type(t) == codec.Integer {
				vs = append(vs, codec.IntValue(int64(u)))
			} else {
				vs = append(vs, codec.FloatValue(math.Float64frombits(u)))
			}
		case codec.Text, codec.Blob:
			n := 0
			if len(data) > 0 {
				n = int(data[0])
				data = data[1:]
			}
			n = min(n, len(data))
			p := append([]byte{}, data[:n]...)
			data = data[n:]
			if codec.Type(t) == codec.Text {
				vs = append(vs, codec.TextValue(p))
			} else {
				vs = append(vs, codec.BlobValue(p))
			}
		}
	}
	return vs
}

// FuzzEncodeRoundTrip encodes arguments with the direct codec and decodes
// the encoded value objects with the gojson codec: every value that can be
// sent must come back identical, and every value that cannot (NaN, ±Inf,
// invalid UTF-8 text) must be refused by both encoders.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 3, 3, 'a', 'b', 'c', 4, 2, 0xff, 0})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0x80})         // -0.0
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f})      // +Inf
	f.Add([]byte{3, 6, '"', '\\', '\n', 0, 0x1f, 0x7f}) // escapes
	f.Add([]byte{3, 4, 0xf0, 0x9f, 0x98, 0x80})         // non-BMP
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		vs := valuesFrom(data)
		sendable := true
		for _, v := range vs {
			switch {
			case v.Type == codec.Float && (math.IsNaN(v.Float) || math.IsInf(v.Float, 0)):
				sendable = false
			case v.Type == codec.Text && !utf8.Valid(v.Bytes):
				sendable = false
			}
		}
		req := codec.PipelineRequest{Requests: []codec.StreamRequest{
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "SELECT 1", Args: vs}},
		}}
		outA, errA := codecA.AppendPipelineRequest(nil, &req)
		_, errB := codecB.AppendPipelineRequest(nil, &req)
		if (errA == nil) != sendable || (errB == nil) != sendable {
			t.Fatalf("sendable=%v but direct: %v, gojson: %v", sendable, errA, errB)
		}
		if !sendable || len(vs) == 0 {
			return
		}
		body, err := codectest.ArgsAsResponse(outA)
		if err != nil {
			t.Fatalf("direct wrote invalid JSON: %v\n%s", err, outA)
		}
		var resp codec.PipelineResponse
		if err := codecB.DecodePipelineResponse(body, &resp); err != nil {
			t.Fatalf("gojson cannot decode what direct encoded: %v\n%s", err, body)
		}
		got := resp.Results[0].Response.Result.Values
		if len(got) != len(vs) {
			t.Fatalf("%d values sent, %d decoded", len(vs), len(got))
		}
		for i := range vs {
			if !got[i].Equal(vs[i]) {
				t.Fatalf("value %d: sent %v, decoded %v", i, vs[i], got[i])
			}
		}
	})
}
