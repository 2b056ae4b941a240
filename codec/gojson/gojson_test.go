package gojson_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/gojson"
)

func TestConformance(t *testing.T) {
	codectest.Conformance(t, gojson.Codec)
}

func TestLookup(t *testing.T) {
	c, ok := codec.Lookup("gojson")
	if !ok || c.Name() != gojson.Name {
		t.Fatalf("Lookup(gojson) = %v, %v", c, ok)
	}
}

// TestDecodeErrorDetails checks what the errors carry beyond their type.
func TestDecodeErrorDetails(t *testing.T) {
	var resp codec.PipelineResponse
	err := gojson.Codec.DecodePipelineResponse([]byte("{\"baton\":\"\xff\"}"), &resp)
	var de *codec.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, codec.ErrInvalidUTF8) || de.Offset != 10 {
		t.Fatalf("invalid UTF-8: %#v", err)
	}
	err = gojson.Codec.DecodePipelineResponse([]byte(`{"x":`+strings.Repeat("[", 70)), &resp)
	if !errors.As(err, &de) || de.Offset != 5+codec.MaxDepth-1 {
		t.Fatalf("depth: %#v", err)
	}
	err = gojson.Codec.DecodePipelineResponse([]byte(`{"results":[]} x`), &resp)
	if !errors.As(err, &de) || de.Offset < 15 {
		t.Fatalf("trailing garbage: %#v", err)
	}
}

// TestEncodeKeepsDst checks that a failed encode returns dst unchanged.
func TestEncodeKeepsDst(t *testing.T) {
	req := codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestExecute,
		Stmt: codec.Stmt{SQL: "select ?", Args: []codec.Value{codec.FloatValue(1), {Type: 42}}}}}}
	out, err := gojson.Codec.AppendPipelineRequest([]byte("keep"), &req)
	if err == nil || string(out) != "keep" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func benchBody(rows int) []byte {
	var b strings.Builder
	b.WriteString(`{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"id","decltype":"INTEGER"},{"name":"name","decltype":"TEXT"},{"name":"score","decltype":"REAL"},{"name":"data","decltype":"BLOB"}],"rows":[`)
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`[{"type":"integer","value":"` + strconv.Itoa(i) + `"},{"type":"text","value":"name ` + strconv.Itoa(i) + `"},{"type":"float","value":` + strconv.Itoa(i) + `.5},{"type":"blob","base64":"AAECAwQFBgc"}]`)
	}
	b.WriteString(`],"affected_row_count":0,"last_insert_rowid":null,"replication_index":"1","rows_read":1000,"rows_written":0,"query_duration_ms":0.5}}},{"type":"ok","response":{"type":"close"}}]}`)
	return []byte(b.String())
}

func BenchmarkDecodePipeline1000Rows(b *testing.B) {
	body := benchBody(1000)
	var resp codec.PipelineResponse
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := gojson.Codec.DecodePipelineResponse(body, &resp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodePipeline(b *testing.B) {
	args := []codec.Value{codec.IntValue(1), codec.StringValue("hello"), codec.FloatValue(1.5), codec.BlobValue([]byte{1, 2, 3}), codec.NullValue()}
	req := codec.PipelineRequest{Baton: "baton", Requests: []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "insert into t values (?, ?, ?, ?, ?)", Args: args}},
		{Type: codec.RequestClose},
	}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = gojson.Codec.AppendPipelineRequest(buf[:0], &req); err != nil {
			b.Fatal(err)
		}
	}
}
