package direct

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// TestLiveServer sends requests encoded by this codec to a running sqld and
// decodes its answers: the server must accept every encoding and echo the
// values back unchanged. It only reads. Set DIRECT_SQLD_URL (for example
// http://127.0.0.1:18080) to run it.
func TestLiveServer(t *testing.T) {
	base := os.Getenv("DIRECT_SQLD_URL")
	if base == "" {
		t.Skip("DIRECT_SQLD_URL not set")
	}
	post := func(path string, body []byte) []byte {
		t.Helper()
		resp, err := http.Post(strings.TrimSuffix(base, "/")+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			var e codec.Error
			if err := Codec.DecodeError(data, &e); err == nil {
				t.Fatalf("HTTP %d: %q %q\nrequest: %s", resp.StatusCode, e.Message, e.Code, body)
			}
			t.Fatalf("HTTP %d: %s\nrequest: %s", resp.StatusCode, data, body)
		}
		return data
	}

	args := []codec.Value{
		codec.NullValue(),
		codec.IntValue(math.MaxInt64), codec.IntValue(math.MinInt64), codec.IntValue(0),
		codec.FloatValue(1), codec.FloatValue(math.Copysign(0, -1)), codec.FloatValue(-2.5), codec.FloatValue(1e21), codec.FloatValue(1e-7),
		codec.FloatValue(math.MaxFloat64), codec.FloatValue(math.SmallestNonzeroFloat64), codec.FloatValue(1.0 / 3),
		codec.StringValue(""), codec.StringValue("\"\\/\b\f\n\r\t\x00\x01\x1f\x7f é 😀 \u2028\u2029 \ufffd"),
		codec.BlobValue(nil), codec.BlobValue([]byte{0xfb, 0xff}), codec.BlobValue([]byte{0, 1, 2, 3, 4}),
	}
	qs := make([]string, len(args))
	for i := range qs {
		qs[i] = "?"
	}
	sel := "select " + strings.Join(qs, ", ")
	req := codec.PipelineRequest{Requests: []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sel, Args: args, WantRows: true}},
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "select :a, @b, $c", NamedArgs: []codec.NamedArg{
			{Name: ":a", Value: codec.StringValue("x\ny")}, {Name: "b", Value: codec.FloatValue(-0.5)}, {Name: "$c", Value: codec.BlobValue([]byte("z"))}}}},
		{Type: codec.RequestStoreSQL, SQLID: 5, SQL: "select ? * 2 as \"twice \"\"x\"\"\""},
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQLID: 5, HasSQLID: true, Args: []codec.Value{codec.IntValue(21)}, WantRows: true}},
		{Type: codec.RequestCloseSQL, SQLID: 5},
		{Type: codec.RequestSequence, SQL: "select 1; select 2"},
		{Type: codec.RequestDescribe, SQL: "select ?, :name"},
		{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Stmt: codec.Stmt{SQL: "select 1"}},
			{Condition: &codec.BatchCond{Type: codec.CondOK, Step: 0}, Stmt: codec.Stmt{SQL: "select * from no_such_table_direct"}},
			{Condition: &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{{Type: codec.CondError, Step: 1}, {Type: codec.CondIsAutocommit}}}, Stmt: codec.Stmt{SQL: "select 2"}},
			{Condition: &codec.BatchCond{Type: codec.CondOr}, Stmt: codec.Stmt{SQL: "select 3"}},
			{Condition: &codec.BatchCond{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondOK, Step: 3}}, Stmt: codec.Stmt{SQL: "select 4"}},
		}}},
		{Type: codec.RequestGetAutocommit},
		{Type: codec.RequestClose},
	}}
	body, err := Codec.AppendPipelineRequest(nil, &req)
	if err != nil {
		t.Fatal(err)
	}
	var resp codec.PipelineResponse
	if err := Codec.DecodePipelineResponse(post("/v3/pipeline", body), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != len(req.Requests) {
		t.Fatalf("%d results for %d requests", len(resp.Results), len(req.Requests))
	}
	for i, r := range resp.Results {
		if !r.OK {
			t.Fatalf("result %d: %q %q", i, r.Error.Message, r.Error.Code)
		}
	}
	if d := diffValues(resp.Results[0].Response.Result.Values, args); d != "" {
		t.Errorf("positional args: %s", d)
	}
	if got := dumpStmt(&resp.Results[1].Response.Result); !strings.HasPrefix(got, `cols=[:a,@b,$c] rows=[["x\ny",-0.5,x'7a']]`) {
		t.Errorf("named args: %s", got)
	}
	if got := dumpStmt(&resp.Results[3].Response.Result); !strings.HasPrefix(got, `cols=[twice "x"] rows=[[42]]`) {
		t.Errorf("stored sql: %s", got)
	}
	if got := dumpResult(&resp.Results[6]); got != `ok describe params=["",":name"] cols=[?,:name] explain=false readonly=true` {
		t.Errorf("describe: %s", got)
	}
	b := &resp.Results[7].Response.Batch
	var st []string
	for _, s := range b.Steps {
		st = append(st, [...]string{"skipped", "ok", "failed"}[s.Status])
	}
	if got := strings.Join(st, " "); got != "ok failed ok skipped ok" {
		t.Errorf("batch: %s", dumpBatch(b))
	}
	if got := dumpResult(&resp.Results[8]); got != "ok get_autocommit true" {
		t.Errorf("get_autocommit: %s", got)
	}
	if resp.Baton != "" {
		t.Errorf("baton %q after close", resp.Baton)
	}

	// The cursor endpoint.
	creq := codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{
		{Stmt: codec.Stmt{SQL: sel, Args: args}},
		{Stmt: codec.Stmt{SQL: "select * from no_such_table_direct"}},
	}}}
	body, err = Codec.AppendCursorRequest(nil, &creq)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(post("/v3/cursor", body)))
	sc.Buffer(nil, 1<<20)
	var h codec.CursorHeader
	var e codec.CursorEntry
	var kinds []string
	for first := true; sc.Scan(); first = false {
		if first {
			if err := Codec.DecodeCursorHeader(sc.Bytes(), &h); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := Codec.DecodeCursorEntry(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, strings.Fields(dumpEntry(&e))[0])
		if e.Type == codec.EntryRow {
			if d := diffValues(e.Row, args); d != "" {
				t.Errorf("cursor row: %s", d)
			}
		}
	}
	if got := strings.Join(kinds, " "); got != "step_begin row step_end step_error replication_index" {
		t.Errorf("cursor entries: %s", got)
	}
	if h.Baton == "" {
		t.Error("no cursor baton")
	} else {
		// Close the cursor's stream.
		body, _ = Codec.AppendPipelineRequest(nil, &codec.PipelineRequest{Baton: h.Baton, Requests: []codec.StreamRequest{{Type: codec.RequestClose}}})
		if err := Codec.DecodePipelineResponse(post("/v3/pipeline", body), &resp); err != nil {
			t.Fatal(err)
		}
	}
}

// diffValues compares two value lists with codec.Value.Equal.
func diffValues(got, want []codec.Value) string {
	if len(got) != len(want) {
		return "different lengths"
	}
	var diffs []string
	for i := range got {
		if !got[i].Equal(want[i]) {
			diffs = append(diffs, got[i].String()+" != "+want[i].String())
		}
	}
	return strings.Join(diffs, "; ")
}
