package protobuf_test

import (
	"fmt"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// encodeRequest is the request of libsql-perf's encode workloads: exec6 is
// one 6-argument execute (one value of each type plus a second text) and a
// close; batch10 a batch of 10 such statements and a close.
func encodeRequest(shape string) *codec.PipelineRequest {
	r := fixture.MakeRow(1)
	stmt := codec.Stmt{SQL: fixture.Insert, Args: []codec.Value{
		codec.IntValue(r.A), codec.StringValue(r.B), codec.FloatValue(r.C),
		codec.BlobValue(r.D), codec.NullValue(), codec.StringValue(*r.E),
	}}
	req := &codec.PipelineRequest{}
	switch shape {
	case "exec6":
		req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestExecute, Stmt: stmt})
	case "batch10":
		var steps []codec.BatchStep
		for range 10 {
			steps = append(steps, codec.BatchStep{Stmt: stmt})
		}
		req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: steps}})
	default:
		panic("unknown request shape " + shape)
	}
	req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestClose})
	return req
}

// BenchmarkDecode decodes the standard 5k- and 20k-row responses into a
// reused destination, with this codec (the Protobuf body) and with direct
// (the JSON body of the same rows), so that one run compares them; rows/s
// is reported for each.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{5000, 20000} {
		for _, bc := range []struct {
			c    codec.Codec
			body []byte
		}{
			{protobuf.Codec, benchResponse(n)},
			{direct.Codec, fixture.Response(n)},
		} {
			b.Run(fmt.Sprintf("%s/%dk", bc.c.Name(), n/1000), func(b *testing.B) {
				var resp codec.PipelineResponse
				if err := bc.c.DecodePipelineResponse(bc.body, &resp); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(bc.body)))
				for b.Loop() {
					if err := bc.c.DecodePipelineResponse(bc.body, &resp); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkDecodeCursorEntries decodes the row entries of a 1000-row cursor
// body, split with SplitDelimited.
func BenchmarkDecodeCursorEntries(b *testing.B) {
	var stream []byte
	for i := 1; i <= 1000; i++ {
		r := fixture.MakeRow(i)
		m := f().sub(4, row(vInt(r.A), vText(r.B), vFloat(r.C), vBlob(r.D), vNull(), vInt(r.F)))
		stream = append(append(stream, f().varint(uint64(len(m)))...), m...)
	}
	var e codec.CursorEntry
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		for rest := stream; len(rest) > 0; {
			m, r, err := protobuf.SplitDelimited(rest, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			if err := protobuf.Codec.DecodeCursorEntry(m, &e); err != nil {
				b.Fatal(err)
			}
			rest = r
		}
	}
}

// BenchmarkEncode appends the exec6 and batch10 requests into a reused
// buffer, with this codec and with direct.
func BenchmarkEncode(b *testing.B) {
	for _, shape := range []string{"exec6", "batch10"} {
		for _, c := range []codec.Codec{protobuf.Codec, direct.Codec} {
			b.Run(c.Name()+"/"+shape, func(b *testing.B) {
				req := encodeRequest(shape)
				buf, err := c.AppendPipelineRequest(nil, req)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					buf, _ = c.AppendPipelineRequest(buf[:0], req)
				}
			})
		}
	}
}
