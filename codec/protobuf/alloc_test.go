package protobuf_test

import (
	"reflect"
	"runtime"
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

// TestAllocsDecodeFresh: into an empty destination (a Result the pool lost),
// the values of a large result are allocated in one slice sized from its
// first row, not through a chain of append's steps (which allocated 27.8 MB
// for these 5.8 MB of values, in 41 allocations).
func TestAllocsDecodeFresh(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	const rows = 20000
	body := benchResponse(rows)
	var resp codec.PipelineResponse
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := protobuf.Codec.DecodePipelineResponse(body, &resp); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	r := &resp.Results[0].Response.Result
	values := rows * 6 * int(reflect.TypeFor[codec.Value]().Size())
	allocs, bytes := after.Mallocs-before.Mallocs, int(after.TotalAlloc-before.TotalAlloc)
	t.Logf("decode %d rows into an empty destination: %d allocations, %d bytes (the values alone: %d); %d values in a capacity of %d",
		rows, allocs, bytes, values, len(r.Values), cap(r.Values))
	if len(r.Values) != 6*rows || cap(r.Values) > len(r.Values)*5/4 {
		t.Errorf("%d values in a capacity of %d, want at most 1.25x", len(r.Values), cap(r.Values))
	}
	if allocs > 24 || bytes > values*5/4+64<<10 {
		t.Errorf("%d allocations and %d bytes, want <= 24 and <= %d", allocs, bytes, values*5/4+64<<10)
	}
}
