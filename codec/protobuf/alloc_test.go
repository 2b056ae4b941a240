package protobuf_test

import (
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// TestBenchResponse checks the Protobuf bench body against the JSON one:
// both decode to the same response.
func TestBenchResponse(t *testing.T) {
	for _, n := range []int{1, 7, 5000} {
		var p, j codec.PipelineResponse
		if err := protobuf.Codec.DecodePipelineResponse(benchResponse(n), &p); err != nil {
			t.Fatal(err)
		}
		if err := direct.Codec.DecodePipelineResponse(fixture.Response(n), &j); err != nil {
			t.Fatal(err)
		}
		if d := codectest.DiffPipelineResponse(&p, &j); d != "" {
			t.Fatalf("%d rows: %s", n, d)
		}
	}
}

func TestAllocsDecode(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	body := benchResponse(20000)
	var resp codec.PipelineResponse
	if err := protobuf.Codec.DecodePipelineResponse(body, &resp); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(20, func() {
		if err := protobuf.Codec.DecodePipelineResponse(body, &resp); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("decode 20,000 rows into a reused destination: %v allocations", n)
	if n > 16 {
		t.Errorf("decode 20,000 rows into a reused destination: %v allocations, want <= 16", n)
	}
	var e codec.CursorEntry
	entry := f().sub(4, row(vInt(1), vText("x"), vFloat(2), vBlob([]byte{3}), vNull(), vInt(4)))
	if n := testing.AllocsPerRun(100, func() { _ = protobuf.Codec.DecodeCursorEntry(entry, &e) }); n != 0 {
		t.Errorf("decode a row entry: %v allocations, want 0", n)
	}
}

func TestAllocsEncode(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	for _, shape := range []string{"exec6", "batch10"} {
		req := encodeRequest(shape)
		buf, err := protobuf.Codec.AppendPipelineRequest(nil, req)
		if err != nil {
			t.Fatal(err)
		}
		n := testing.AllocsPerRun(100, func() {
			buf, _ = protobuf.Codec.AppendPipelineRequest(buf[:0], req)
		})
		if n != 0 {
			t.Errorf("encode %s into a reused buffer: %v allocations, want 0", shape, n)
		}
	}
	creq := &codec.CursorRequest{Baton: "b", Batch: encodeRequest("batch10").Requests[0].Batch}
	buf, _ := protobuf.Codec.AppendCursorRequest(nil, creq)
	if n := testing.AllocsPerRun(100, func() { buf, _ = protobuf.Codec.AppendCursorRequest(buf[:0], creq) }); n != 0 {
		t.Errorf("encode a cursor request into a reused buffer: %v allocations, want 0", n)
	}
}
