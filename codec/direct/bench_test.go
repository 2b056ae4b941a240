package direct

import (
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

func BenchmarkDecode(b *testing.B) {
	escaped := func() []byte {
		var s strings.Builder
		s.WriteString(`{"baton":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"t"},{"name":"b"}],"rows":[`)
		for i := 0; i < 1000; i++ {
			if i > 0 {
				s.WriteByte(',')
			}
			s.WriteString(`[{"type":"text","value":"line\nbreak \"quoted\" \u00e9"},{"type":"blob","base64":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}]`)
		}
		s.WriteString(`]}}}]}`)
		return []byte(s.String())
	}
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"sqld-1000rows", []byte(readFixture(b, "pipeline_1000rows.json"))},
		{"sqld-batch", []byte(readFixture(b, "pipeline_batch.json"))},
		{"sqld-values", []byte(readFixture(b, "pipeline_values.json"))},
		{"1000rows-baton", rowsResponse(1000, `"8FxdBWk5AkTobfMd+jjKXivEfNOgihZDcD74dx338aldxt5iRv7ObUzV2WKKXe8d"`)},
		{"1000rows-escaped-blobs", escaped()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var resp codec.PipelineResponse
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				if err := Codec.DecodePipelineResponse(bc.data, &resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("cursor-entries", func(b *testing.B) {
		var lines [][]byte
		size := 0
		for _, l := range strings.Split(strings.TrimSpace(readFixture(b, "cursor.ndjson")), "\n")[1:] {
			lines = append(lines, []byte(l))
			size += len(l)
		}
		var e codec.CursorEntry
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, l := range lines {
				if err := Codec.DecodeCursorEntry(l, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	many := &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestExecute}}}
	for i := 0; i < 1000; i++ {
		var v codec.Value
		switch i % 4 {
		case 0:
			v = codec.IntValue(int64(i) * 1000003)
		case 1:
			v = codec.FloatValue(float64(i) / 7)
		case 2:
			v = codec.StringValue("some text, with \"quotes\"")
		case 3:
			v = codec.BlobValue([]byte("0123456789abcdef0123456789abcdef"))
		}
		many.Requests[0].Stmt.Args = append(many.Requests[0].Stmt.Args, v)
	}
	for _, bc := range []struct {
		name string
		req  *codec.PipelineRequest
	}{
		{"pipeline-batch", benchRequest()},
		{"1000args", many},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf, err := Codec.AppendPipelineRequest(nil, bc.req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				buf, _ = Codec.AppendPipelineRequest(buf[:0], bc.req)
			}
		})
	}
}
