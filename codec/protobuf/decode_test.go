package protobuf_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/protobuf"
)

type decodeCase struct {
	name  string
	kind  codectest.Kind
	in    msg
	want  codectest.Result // when !fail
	fail  bool
	errIs error
	// errAt and errMsg, when errMsg is set, are the error's offset and
	// message.
	errAt  int
	errMsg string
}

func pipe(rs ...codec.StreamResult) codectest.Result {
	return codectest.Result{Pipeline: codec.PipelineResponse{Results: rs}}
}

func okExec(r codec.StmtResult) codec.StreamResult {
	return codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestExecute, Result: r}}
}

func oneCol(vals ...codec.Value) codec.StmtResult {
	return codec.StmtResult{Cols: []codec.Col{{Name: "v"}}, Values: vals, NumRows: len(vals)}
}

// valuePipe is a pipeline with one execute result of one column whose
// rows hold one value each.
func valuePipe(vals ...msg) msg {
	res := f().sub(1, col("v", ""))
	for _, v := range vals {
		res = res.sub(2, row(v))
	}
	return pipeline(execResult(res))
}

func decodeCases() []decodeCase {
	long := strings.Repeat("x", 300)
	pipeFail := func(name string, in msg) decodeCase {
		return decodeCase{name: name, kind: codectest.KindPipeline, in: in, fail: true}
	}
	// fieldErr is a case of the field readers' errors, which name the
	// field and what is wrong with it, at the field's key.
	fieldErr := func(name string, kind codectest.Kind, in msg, at int, text string) decodeCase {
		return decodeCase{name: name, kind: kind, in: in, fail: true, errAt: at, errMsg: text}
	}
	entry := func(name string, in msg, want codec.CursorEntry) decodeCase {
		return decodeCase{name: name, kind: codectest.KindCursorEntry, in: in, want: codectest.Result{Entry: want}}
	}
	return []decodeCase{
		{name: "empty pipeline", kind: codectest.KindPipeline, in: f(), want: pipe()},
		{name: "baton and base_url", kind: codectest.KindPipeline, in: f().str(1, "b").str(2, "u"),
			want: codectest.Result{Pipeline: codec.PipelineResponse{Baton: "b", BaseURL: "u"}}},
		{name: "values", kind: codectest.KindPipeline,
			in: valuePipe(vNull(), vInt(0), vInt(-1), vInt(math.MinInt64), vInt(math.MaxInt64), vFloat(0.5),
				vFloat(math.NaN()), vFloat(math.Inf(-1)), vFloat(math.Copysign(0, -1)), vText(""), vText("é"), vText(long),
				vBlob(nil), vBlob([]byte{0, 255})),
			want: pipe(okExec(oneCol(codec.NullValue(), codec.IntValue(0), codec.IntValue(-1), codec.IntValue(math.MinInt64),
				codec.IntValue(math.MaxInt64), codec.FloatValue(0.5), codec.FloatValue(math.NaN()), codec.FloatValue(math.Inf(-1)),
				codec.FloatValue(math.Copysign(0, -1)), codec.StringValue(""), codec.StringValue("é"), codec.StringValue(long),
				codec.BlobValue(nil), codec.BlobValue([]byte{0, 255}))))},
		{name: "value: last member wins, unknown fields skipped", kind: codectest.KindPipeline,
			in:   valuePipe(vInt(5).str(4, "t").uint(9, 1), f().uint(15, 3).sub(1), f().sint(2, 7).raw(0x4d, 1, 2, 3, 4)),
			want: pipe(okExec(oneCol(codec.StringValue("t"), codec.NullValue(), codec.IntValue(7))))},
		{name: "integer with an overlong but valid varint", kind: codectest.KindPipeline,
			in:   valuePipe(f().raw(0x10, 0x82, 0x80, 0x00)),
			want: pipe(okExec(oneCol(codec.IntValue(1))))},
		pipeFail("value without a member", valuePipe(f())),
		pipeFail("value with only unknown fields", valuePipe(f().uint(6, 1))),
		pipeFail("integer with the wrong wire type", valuePipe(f().double(2, 1))),
		pipeFail("text with the wrong wire type", valuePipe(f().uint(4, 1))),
		pipeFail("float truncated", valuePipe(f().raw(0x19, 1, 2, 3))),
		pipeFail("null with a malformed body", valuePipe(f().sub(1, f().raw(0x08)))),
		{name: "text not UTF-8", kind: codectest.KindPipeline, in: valuePipe(vText("a\xffb")), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "long text not UTF-8", kind: codectest.KindPipeline, in: valuePipe(vText(long + "\xc3")), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "column name not UTF-8", kind: codectest.KindPipeline,
			in: pipeline(execResult(f().sub(1, col("\xff", "")))), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "baton not UTF-8", kind: codectest.KindPipeline, in: f().str(1, "\xed\xa0\x80"), fail: true, errIs: codec.ErrInvalidUTF8,
			errAt: 2, errMsg: `field "baton"`},
		{name: "blob not UTF-8 is fine", kind: codectest.KindPipeline, in: valuePipe(vBlob([]byte{0xff})),
			want: pipe(okExec(oneCol(codec.BlobValue([]byte{0xff}))))},
		{name: "stmt result, every field, zeros omitted", kind: codectest.KindPipeline,
			in: pipeline(execResult(f().uint(3, 2).sint(4, -5).uint(5, 0).uint(6, 7).uint(7, 8).double(8, 1.5).sub(1, col("a", "INT")))),
			want: pipe(okExec(codec.StmtResult{Cols: []codec.Col{{Name: "a", Decltype: "INT"}}, AffectedRowCount: 2,
				LastInsertRowID: -5, HasLastInsertRowID: true, HasReplicationIndex: true, RowsRead: 7, RowsWritten: 8, QueryDurationMS: 1.5}))},
		{name: "stmt result: scalars last wins", kind: codectest.KindPipeline,
			in:   pipeline(execResult(f().uint(3, 2).uint(3, 9))),
			want: pipe(okExec(codec.StmtResult{AffectedRowCount: 9}))},
		{name: "execute without a result", kind: codectest.KindPipeline, in: pipeline(okMember(2, nil)),
			want: pipe(okExec(codec.StmtResult{}))},
		{name: "rows before cols", kind: codectest.KindPipeline,
			in:   pipeline(execResult(f().sub(2, row(vInt(1), vInt(2))).sub(1, col("a", "")).sub(1, col("b", "")))),
			want: pipe(okExec(codec.StmtResult{Cols: []codec.Col{{Name: "a"}, {Name: "b"}}, Values: []codec.Value{codec.IntValue(1), codec.IntValue(2)}, NumRows: 1}))},
		pipeFail("row too short", pipeline(execResult(f().sub(1, col("a", "")).sub(1, col("b", "")).sub(2, row(vInt(1)))))),
		pipeFail("rows of different lengths", pipeline(execResult(f().sub(1, col("a", "")).sub(2, row(vInt(1))).sub(2, row())))),
		pipeFail("row values with the wrong wire type", pipeline(execResult(f().sub(1, col("a", "")).sub(2, f().uint(1, 1))))),
		{name: "row: unknown fields skipped", kind: codectest.KindPipeline,
			in:   pipeline(execResult(f().sub(1, col("a", "")).sub(2, row(vInt(1)).uint(2, 5).str(3, "x")))),
			want: pipe(okExec(codec.StmtResult{Cols: []codec.Col{{Name: "a"}}, Values: []codec.Value{codec.IntValue(1)}, NumRows: 1}))},
		{name: "error result", kind: codectest.KindPipeline, in: pipeline(f().sub(2, f().str(1, "m").str(2, "C"))),
			want: pipe(codec.StreamResult{Error: codec.Error{Message: "m", Code: "C"}})},
		{name: "stream result: last member wins", kind: codectest.KindPipeline,
			in:   pipeline(f().sub(2, f().str(1, "m")).sub(1, f().sub(1))),
			want: pipe(codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestClose}})},
		{name: "stream result: error after ok wins", kind: codectest.KindPipeline,
			in:   pipeline(execResult(f().uint(3, 1)).sub(2, f().str(2, "C"))),
			want: pipe(codec.StreamResult{Error: codec.Error{Code: "C"}})},
		{name: "response: last member wins as a whole", kind: codectest.KindPipeline,
			in:   pipeline(f().sub(1, f().sub(2, f().sub(1, f().uint(3, 4))).sub(2))),
			want: pipe(okExec(codec.StmtResult{}))},
		pipeFail("stream result without a member", pipeline(f())),
		pipeFail("stream result with only unknown fields", pipeline(f().uint(3, 1))),
		pipeFail("response without a member", pipeline(f().sub(1))),
		pipeFail("response of an unknown type", pipeline(f().sub(1, f().sub(9)))),
		{name: "every response type", kind: codectest.KindPipeline,
			in: pipeline(okMember(1, nil), okMember(4, nil), okMember(6, nil), okMember(7, nil), okMember(8, f().uint(1, 1)), okMember(8, nil)),
			want: pipe(
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestClose}},
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestSequence}},
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestStoreSQL}},
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestCloseSQL}},
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestGetAutocommit, IsAutocommit: true}},
				codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestGetAutocommit}})},
		{name: "describe", kind: codectest.KindPipeline,
			in: pipeline(okMember(5, f().sub(1, f().sub(1, f().str(1, ":a")).sub(1).sub(2, col("c", "TEXT")).uint(3, 1).uint(4, 1)))),
			want: pipe(codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestDescribe, Describe: codec.DescribeResult{
				Params: []codec.DescribeParam{{Name: ":a"}, {}}, Cols: []codec.Col{{Name: "c", Decltype: "TEXT"}}, IsExplain: true, IsReadonly: true}}})},
		{name: "batch: two maps, skipped steps between", kind: codectest.KindPipeline,
			in: pipeline(okMember(3, f().sub(1,
				f().sub(2, f().uint(1, 3).sub(2, f().str(1, "boom"))),
				f().sub(1, f().uint(1, 0).sub(2, f().uint(3, 1))),
				f().sub(1, f().sub(2).uint(1, 1)), // value before key
			))),
			want: pipe(codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestBatch, Batch: codec.BatchResult{Steps: []codec.StepOutcome{
				{Status: codec.StepOK, Result: codec.StmtResult{AffectedRowCount: 1}},
				{Status: codec.StepOK},
				{Status: codec.StepSkipped},
				{Status: codec.StepFailed, Error: codec.Error{Message: "boom"}},
			}}}})},
		{name: "batch: entry without key or value", kind: codectest.KindPipeline,
			in: pipeline(okMember(3, f().sub(1, f().sub(1)))),
			want: pipe(codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestBatch, Batch: codec.BatchResult{Steps: []codec.StepOutcome{
				{Status: codec.StepOK}}}}})},
		pipeFail("batch: a step with both a result and an error", pipeline(okMember(3, f().sub(1,
			f().sub(1, f().uint(1, 2)), f().sub(2, f().uint(1, 2)))))),
		pipeFail("batch: a step index too large", pipeline(okMember(3, f().sub(1, f().sub(1, f().uint(1, protobuf.MaxBatchSteps)))))),
		pipeFail("batch: a step index above uint32", pipeline(okMember(3, f().sub(1, f().sub(1, f().uint(1, 1<<32)))))),
		pipeFail("batch: a bad row in a step", pipeline(okMember(3, f().sub(1, f().sub(1, f().sub(2, f().sub(2, row(vInt(1))))))))),

		// Malformed wire data.
		pipeFail("truncated varint key", f().raw(0x80)),
		pipeFail("truncated varint value", f().raw(0x08, 0xff)),
		pipeFail("varint of 11 bytes", f().raw(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00)),
		pipeFail("varint overflowing in its 10th byte", f().raw(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02)),
		pipeFail("length past the end", f().raw(0x0a, 0x05, 'a')),
		pipeFail("huge length", f().raw(0x1a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)),
		pipeFail("length past the end of the enclosing message", pipeline(f().raw(0x12, 0x10))),
		pipeFail("field number 0", f().raw(0x00, 0x00)),
		pipeFail("field number above 2^31-1", f().key(1<<31, 0).raw(0)),
		pipeFail("wire type 6", f().raw(0x0e)),
		pipeFail("wire type 7", f().raw(0x0f)),
		fieldErr("known field with the wrong wire type", codectest.KindPipeline, f().uint(1, 1), 0, `field "baton": wrong wire type 0`),
		fieldErr("double with the wrong wire type", codectest.KindPipeline, pipeline(execResult(f().uint(8, 1))), 8,
			`field "query_duration_ms": wrong wire type 0`),
		fieldErr("truncated length", codectest.KindPipeline, f().key(1, 2).varint(5), 0, `field "baton": truncated`),
		fieldErr("truncated double", codectest.KindPipeline, pipeline(execResult(f().key(8, 1).raw(0, 0))), 8,
			`field "query_duration_ms": truncated`),
		fieldErr("varint overflow", codectest.KindPipeline,
			pipeline(execResult(f().key(3, 0).raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02))), 8,
			`field "affected_row_count": varint overflows 64 bits`),
		fieldErr("uint32 above 2^32-1", codectest.KindCursorEntry, f().sub(1, f().uint(1, 1<<32)), 2, `field "step": value above 2^32-1`),
		pipeFail("results with the wrong wire type", f().uint(3, 1)),
		pipeFail("truncated fixed32", f().raw(0x7d, 1, 2)),
		pipeFail("truncated fixed64", f().raw(0x79, 1, 2)),
		pipeFail("stray end group", f().key(9, 4)),
		pipeFail("unterminated group", f().key(9, 3).uint(1, 1)),
		pipeFail("mismatched end group", f().key(9, 3).key(10, 4)),
		pipeFail("groups nested too deeply", msg(strings.Repeat("\x4b", codec.MaxDepth+1)+strings.Repeat("\x4c", codec.MaxDepth+1))),
		{name: "unknown fields of every wire type", kind: codectest.KindPipeline,
			in:   f().uint(9, 1).double(10, 1).str(11, "x").raw(0x65, 1, 2, 3, 4).key(13, 3).uint(1, 1).key(14, 3).key(14, 4).key(13, 4).str(1, "b"),
			want: codectest.Result{Pipeline: codec.PipelineResponse{Baton: "b"}}},
		{name: "groups nested up to the limit", kind: codectest.KindPipeline,
			in:   msg(strings.Repeat("\x4b", codec.MaxDepth) + strings.Repeat("\x4c", codec.MaxDepth)),
			want: pipe()},

		// Cursor.
		{name: "header", kind: codectest.KindCursorHeader, in: f().str(1, "b").str(2, "u").uint(3, 1),
			want: codectest.Result{Header: codec.CursorHeader{Baton: "b", BaseURL: "u"}}},
		{name: "empty header", kind: codectest.KindCursorHeader, in: f()},
		{name: "header: baton with the wrong wire type", kind: codectest.KindCursorHeader, in: f().uint(1, 1), fail: true},
		entry("zero-length entry", f(), codec.CursorEntry{}),
		entry("unknown entry", f().sub(7, f().uint(1, 1)), codec.CursorEntry{}),
		entry("step_begin", f().sub(1, f().uint(1, 3).sub(2, col("a", "INT")).sub(2, col("b", ""))),
			codec.CursorEntry{Type: codec.EntryStepBegin, Step: 3, Cols: []codec.Col{{Name: "a", Decltype: "INT"}, {Name: "b"}}}),
		entry("step_begin of step 0", f().sub(1), codec.CursorEntry{Type: codec.EntryStepBegin}),
		entry("step_end", f().sub(2, f().uint(1, 4).sint(2, -9)),
			codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: 4, LastInsertRowID: -9, HasLastInsertRowID: true}),
		entry("step_end without rowid", f().sub(2), codec.CursorEntry{Type: codec.EntryStepEnd}),
		entry("step_error", f().sub(3, f().uint(1, 2).sub(2, f().str(1, "m").str(2, "C"))),
			codec.CursorEntry{Type: codec.EntryStepError, Step: 2, Error: codec.Error{Message: "m", Code: "C"}}),
		entry("row", f().sub(4, row(vInt(1), vText("t"), vNull())),
			codec.CursorEntry{Type: codec.EntryRow, Row: []codec.Value{codec.IntValue(1), codec.StringValue("t"), codec.NullValue()}}),
		entry("empty row", f().sub(4), codec.CursorEntry{Type: codec.EntryRow}),
		entry("error", f().sub(5, f().str(1, "m")), codec.CursorEntry{Type: codec.EntryError, Error: codec.Error{Message: "m"}}),
		entry("replication_index", f().sub(6, f().uint(1, 42)),
			codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: 42, HasReplicationIndex: true}),
		entry("replication_index 0", f().sub(6),
			codec.CursorEntry{Type: codec.EntryReplicationIndex, HasReplicationIndex: true}),
		entry("last member wins as a whole", f().sub(1, f().uint(1, 3)).sub(4, row(vInt(1))),
			codec.CursorEntry{Type: codec.EntryRow, Row: []codec.Value{codec.IntValue(1)}}),
		entry("members of other types ignored", f().sub(2, f().str(3, "x").uint(4, 1)), codec.CursorEntry{Type: codec.EntryStepEnd}),
		{name: "entry: step above uint32", kind: codectest.KindCursorEntry, in: f().sub(1, f().uint(1, 1<<32)), fail: true},
		{name: "entry: member with the wrong wire type", kind: codectest.KindCursorEntry, in: f().uint(4, 1), fail: true},
		{name: "entry: value without a member", kind: codectest.KindCursorEntry, in: f().sub(4, row(f())), fail: true},
		{name: "entry: text not UTF-8", kind: codectest.KindCursorEntry, in: f().sub(4, row(vText("\xff"))), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "entry: truncated", kind: codectest.KindCursorEntry, in: f().sub(4, row(vInt(1)))[:4], fail: true},

		// Error bodies.
		{name: "error body", kind: codectest.KindError, in: f().str(1, "The stream has expired due to inactivity").str(2, "STREAM_EXPIRED"),
			want: codectest.Result{Error: codec.Error{Message: "The stream has expired due to inactivity", Code: "STREAM_EXPIRED"}}},
		{name: "empty error body", kind: codectest.KindError, in: f()},
		{name: "error body not UTF-8", kind: codectest.KindError, in: f().str(1, "\xff"), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "JSON error body", kind: codectest.KindError, in: msg(`{"error":"x"}`), fail: true},
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, stale := range []bool{false, true} {
				got := codectest.Result{Kind: tc.kind}
				if stale {
					got = codectest.StaleResult(tc.kind)
				}
				codectest.DecodeInto(protobuf.Codec, tc.in, &got)
				var pe *codectest.PanicError
				if errors.As(got.Err, &pe) {
					t.Fatal(pe)
				}
				if tc.fail {
					checkDecodeFailed(t, tc.in, got.Err, tc.errIs, tc.errAt, tc.errMsg)
					continue
				}
				if got.Err != nil {
					t.Fatalf("input %x: %v", []byte(tc.in), got.Err)
				}
				want := tc.want
				want.Kind = tc.kind
				if d := codectest.Diff(&got, &want); d != "" {
					t.Fatalf("stale destination %v: input %x: %s", stale, []byte(tc.in), d)
				}
			}
		})
	}
}

// checkDecodeFailed fails t unless err is a DecodeError of this codec at
// an offset within in, wrapping errIs if that is not nil, and, if text is
// set, at offset at with the message text.
func checkDecodeFailed(t *testing.T, in msg, err, errIs error, at int, text string) {
	t.Helper()
	var de *codec.DecodeError
	if !errors.As(err, &de) || de.Codec != protobuf.Name || de.Offset < 0 || de.Offset > len(in) {
		t.Fatalf("input %x: error %#v, want a *codec.DecodeError of this codec", []byte(in), err)
	}
	if errIs != nil && !errors.Is(err, errIs) {
		t.Fatalf("error %v does not wrap %v", err, errIs)
	}
	if text != "" && (de.Offset != at || de.Msg != text) {
		t.Fatalf("error at %d: %q; want at %d: %q", de.Offset, de.Msg, at, text)
	}
}

// TestZeroCopy checks that text and blob values point into the input, with
// their capacity clipped, and that empty ones are not nil.
func TestZeroCopy(t *testing.T) {
	in := valuePipe(vText("hello"), vBlob([]byte{1, 2}), vText(""), vBlob(nil), vText(strings.Repeat("y", 200)))
	var resp codec.PipelineResponse
	if err := protobuf.Codec.DecodePipelineResponse(in, &resp); err != nil {
		t.Fatal(err)
	}
	for i, v := range resp.Results[0].Response.Result.Values {
		if v.Bytes == nil {
			t.Fatalf("value %d: nil Bytes", i)
		}
		if len(v.Bytes) != cap(v.Bytes) {
			t.Errorf("value %d: capacity not clipped", i)
		}
		if len(v.Bytes) > 0 {
			v.Bytes[0] ^= 0xff
			if !strings.Contains(string(in), string(v.Bytes)) {
				t.Errorf("value %d does not share the input", i)
			}
			v.Bytes[0] ^= 0xff
		}
	}
}

func TestSplitDelimited(t *testing.T) {
	stream := f().varint(3).raw('a', 'b', 'c').varint(0).varint(200).raw(make([]byte, 200)...)
	var got []int
	rest := []byte(stream)
	for len(rest) > 0 {
		m, r, err := protobuf.SplitDelimited(rest, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if cap(m) != len(m) {
			t.Errorf("message capacity not clipped")
		}
		got = append(got, len(m))
		rest = r
	}
	if len(got) != 3 || got[0] != 3 || got[1] != 0 || got[2] != 200 {
		t.Fatalf("lengths %v", got)
	}
	for _, tc := range []struct {
		in    msg
		max   int
		errIs error
	}{
		{f(), 10, protobuf.ErrTruncated},
		{f().raw(0x80), 10, protobuf.ErrTruncated},
		{f().varint(5).raw(1, 2), 10, protobuf.ErrTruncated},
		{f().varint(11), 10, protobuf.ErrTooLarge},
		{f().varint(1 << 40), 1 << 30, protobuf.ErrTooLarge},
		{f().raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 10, nil},
	} {
		_, rest, err := protobuf.SplitDelimited(tc.in, tc.max)
		var de *codec.DecodeError
		if !errors.As(err, &de) || de.Codec != protobuf.Name {
			t.Errorf("%x: error %#v", []byte(tc.in), err)
			continue
		}
		if tc.errIs != nil && !errors.Is(err, tc.errIs) {
			t.Errorf("%x: %v does not wrap %v", []byte(tc.in), err, tc.errIs)
		}
		if tc.errIs == nil && (errors.Is(err, protobuf.ErrTruncated) || errors.Is(err, protobuf.ErrTooLarge)) {
			t.Errorf("%x: %v", []byte(tc.in), err)
		}
		if len(rest) != len(tc.in) {
			t.Errorf("%x: rest is not the input", []byte(tc.in))
		}
	}
}
