package direct

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// benchRequest is a typical pipeline: an interactive-transaction step with
// arguments of every type, a guarded batch, get_autocommit and close.
func benchRequest() *codec.PipelineRequest {
	args := []codec.Value{
		codec.IntValue(-1234567890123),
		codec.FloatValue(3.141592653589793),
		codec.FloatValue(2),
		codec.StringValue("plain text"),
		codec.StringValue("needs \"escaping\"\n\tand é unicode"),
		codec.BlobValue([]byte("\x00\x01\x02\x03 blob bytes \xff")),
		codec.NullValue(),
	}
	steps := []codec.BatchStep{{Stmt: codec.Stmt{SQL: "BEGIN IMMEDIATE"}}}
	for i := 1; i <= 10; i++ {
		steps = append(steps, codec.BatchStep{
			Condition: &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{
				{Type: codec.CondOK, Step: uint32(i - 1)},
				{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondIsAutocommit}},
			}},
			Stmt: codec.Stmt{SQL: "INSERT INTO t(a, b, c, d, e, f, g) VALUES (?, ?, ?, ?, ?, ?, ?)", Args: args},
		})
	}
	steps = append(steps,
		codec.BatchStep{Condition: &codec.BatchCond{Type: codec.CondOK, Step: 10}, Stmt: codec.Stmt{SQL: "COMMIT"}},
		codec.BatchStep{Condition: &codec.BatchCond{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondOK, Step: 11}}, Stmt: codec.Stmt{SQL: "ROLLBACK"}},
	)
	return &codec.PipelineRequest{
		Baton: "8FxdBWk5AkTobfMd+jjKXivEfNOgihZDcD74dx338aldxt5iRv7ObUzV2WKKXe8d",
		Requests: []codec.StreamRequest{
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "SELECT * FROM t WHERE a = :a AND b = @b", NamedArgs: []codec.NamedArg{{Name: ":a", Value: args[0]}, {Name: "@b", Value: args[4]}}, WantRows: true}},
			{Type: codec.RequestBatch, Batch: codec.Batch{Steps: steps}},
			{Type: codec.RequestGetAutocommit},
			{Type: codec.RequestClose},
		},
	}
}

// rowsResponse builds a pipeline response with n rows of four columns, in
// the server's format.
func rowsResponse(n int, baton string) []byte {
	var b strings.Builder
	b.WriteString(`{"baton":` + baton + `,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"id","decltype":"INTEGER"},{"name":"name","decltype":"TEXT"},{"name":"score","decltype":"REAL"},{"name":"maybe","decltype":null}],"rows":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		s := strconv.Itoa(i)
		b.WriteString(`[{"type":"integer","value":"` + s + `"},{"type":"text","value":"name-` + s + `"},{"type":"float","value":` + s + `.25},`)
		if i%10 == 0 {
			b.WriteString(`{"type":"null"}]`)
		} else {
			b.WriteString(`{"type":"integer","value":"` + strconv.Itoa(i*7) + `"}]`)
		}
	}
	b.WriteString(`],"affected_row_count":0,"last_insert_rowid":null,"replication_index":"6","rows_read":0,"rows_written":0,"query_duration_ms":0.012}}},{"type":"ok","response":{"type":"close"}}]}`)
	return []byte(b.String())
}

func TestAllocsEncode(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	req := benchRequest()
	buf, err := Codec.AppendPipelineRequest(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	creq := &codec.CursorRequest{Baton: req.Baton, Batch: req.Requests[1].Batch}
	n := testing.AllocsPerRun(100, func() {
		buf, _ = Codec.AppendPipelineRequest(buf[:0], req)
		buf, _ = Codec.AppendCursorRequest(buf[:0], creq)
	})
	if n != 0 {
		t.Errorf("encoding into a reused buffer: %v allocs, want 0", n)
	}
}

func TestAllocsDecode(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	measure := func(data []byte) float64 {
		var resp codec.PipelineResponse
		if err := Codec.DecodePipelineResponse(data, &resp); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(50, func() {
			if err := Codec.DecodePipelineResponse(data, &resp); err != nil {
				t.Fatal(err)
			}
		})
	}
	fixture := []byte(readFixture(t, "pipeline_1000rows.json"))
	if n := measure(fixture); n != 0 {
		t.Errorf("sqld 1000-row response: %v allocs, want 0", n)
	}
	for _, baton := range []string{`null`, `"8FxdBWk5AkTobfMd+jjKXivEfNOgihZDcD74dx338aldxt5iRv7ObUzV2WKKXe8d"`} {
		small, large := measure(rowsResponse(10, baton)), measure(rowsResponse(1000, baton))
		// A new baton is one string per response; nothing else allocates.
		if small != large || large > 1 {
			t.Errorf("baton %s: %v allocs for 10 rows, %v for 1000 rows; want the same, at most 1", baton, small, large)
		}
	}
	// The other fixtures decode without allocating too.
	for _, f := range []string{"pipeline_batch.json", "pipeline_values.json"} {
		if n := measure([]byte(readFixture(t, f))); n != 0 {
			t.Errorf("%s: %v allocs, want 0", f, n)
		}
	}

	// Cursor lines into a reused entry.
	var lines [][]byte
	for _, l := range strings.Split(strings.TrimSpace(readFixture(t, "cursor.ndjson")), "\n") {
		lines = append(lines, []byte(l))
	}
	var e codec.CursorEntry
	var h codec.CursorHeader
	_ = Codec.DecodeCursorHeader(lines[0], &h)
	for _, l := range lines[1:] {
		_ = Codec.DecodeCursorEntry(l, &e)
	}
	n := testing.AllocsPerRun(50, func() {
		_ = Codec.DecodeCursorHeader(lines[0], &h)
		for _, l := range lines[1:] {
			if err := Codec.DecodeCursorEntry(l, &e); err != nil {
				t.Fatal(err)
			}
		}
	})
	// The two step_error entries carry different messages, and each
	// message is a new string (messages are not interned); nothing else
	// allocates.
	if n > 2 {
		t.Errorf("cursor: %v allocs, want at most 2", n)
	}
}

// TestAllocsDecodeArena reports the allocations of responses whose values
// need arena memory (escaped text, blobs): a few chunks per decode, growing
// with the logarithm of the payload at most, never per value.
func TestAllocsDecodeArena(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	build := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"t"},{"name":"b"}],"rows":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`[{"type":"text","value":"line\nbreak \"` + strconv.Itoa(i) + `\""},{"type":"blob","base64":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}]`)
		}
		b.WriteString(`]}}}]}`)
		return []byte(b.String())
	}
	for _, rows := range []int{10, 1000, 10000} {
		data := build(rows)
		var resp codec.PipelineResponse
		if err := Codec.DecodePipelineResponse(data, &resp); err != nil {
			t.Fatal(err)
		}
		n := testing.AllocsPerRun(20, func() {
			_ = Codec.DecodePipelineResponse(data, &resp)
		})
		t.Logf("%d rows with escaped text and blobs (%d bytes): %v allocs per decode", rows, len(data), n)
		if n > 4 {
			t.Errorf("%d rows: %v allocs, want at most 4", rows, n)
		}
	}
}
