package protobuf_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
)

// stmtReq is a PipelineReqBody holding one StreamRequest of member num.
func req(baton string, members ...msg) msg {
	m := f()
	if baton != "" {
		m = m.str(1, baton)
	}
	for _, r := range members {
		m = m.sub(2, r)
	}
	return m
}

func TestEncode(t *testing.T) {
	long := strings.Repeat("s", 20000) // lengths of three bytes
	cond := &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{
		{Type: codec.CondOK, Step: 0},
		{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondError, Step: 1}},
		{Type: codec.CondOr, Conds: []codec.BatchCond{{Type: codec.CondIsAutocommit}}},
	}}
	for _, tc := range []struct {
		name string
		req  codec.PipelineRequest
		want msg
	}{
		{"empty", codec.PipelineRequest{}, f()},
		{"close with a baton", codec.PipelineRequest{Baton: "b", Requests: []codec.StreamRequest{{Type: codec.RequestClose}}},
			req("b", f().sub(1))},
		{"execute with every value", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{
			SQL: "select ?", WantRows: true, ReplicationIndex: 9,
			Args: []codec.Value{codec.NullValue(), codec.IntValue(-3), codec.IntValue(math.MinInt64), codec.FloatValue(math.NaN()),
				codec.FloatValue(math.Inf(1)), codec.FloatValue(math.Copysign(0, -1)), codec.StringValue("é"), codec.BlobValue(nil),
				codec.StringValue(long)}}}}},
			req("", f().sub(2, f().sub(1, f().str(1, "select ?"),
				f().sub(3, vNull()), f().sub(3, vInt(-3)), f().sub(3, vInt(math.MinInt64)), f().sub(3, vFloat(math.NaN())),
				f().sub(3, vFloat(math.Inf(1))), f().sub(3, vFloat(math.Copysign(0, -1))), f().sub(3, vText("é")), f().sub(3, vBlob(nil)),
				f().sub(3, vText(long)), f().uint(5, 1).uint(6, 9))))},
		{"execute by sql_id with named args, want_rows false", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{
			SQLID: 0, HasSQLID: true, NamedArgs: []codec.NamedArg{{Name: ":a", Value: codec.IntValue(1)}}}}}},
			req("", f().sub(2, f().sub(1, f().uint(2, 0), f().sub(4, f().str(1, ":a").sub(2, vInt(1))), f().uint(5, 0))))},
		{"negative sql_id", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestCloseSQL, SQLID: -1}}},
			req("", f().sub(7, f().uint(1, math.MaxUint64)))},
		{"batch with conditions", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{
			ReplicationIndex: 5, Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "a"}}, {Condition: cond, Stmt: codec.Stmt{SQL: long}}}}}}},
			req("", f().sub(3, f().sub(1,
				f().sub(1, f().sub(2, f().str(1, "a").uint(5, 0))),
				f().sub(1, f().sub(1, f().sub(4,
					f().sub(1, f().uint(1, 0)),
					f().sub(1, f().sub(3, f().uint(2, 1))),
					f().sub(1, f().sub(5, f().sub(1, f().sub(6)))),
				)), f().sub(2, f().str(1, long).uint(5, 0))),
				f().uint(2, 5))))},
		{"sequence, describe, store_sql, close_sql, get_autocommit", codec.PipelineRequest{Requests: []codec.StreamRequest{
			{Type: codec.RequestSequence, SQL: "s", ReplicationIndex: 3},
			{Type: codec.RequestDescribe, SQL: ""},
			{Type: codec.RequestStoreSQL, SQLID: 2, SQL: "q"},
			{Type: codec.RequestCloseSQL, SQLID: 2},
			{Type: codec.RequestGetAutocommit},
		}}, req("", f().sub(4, f().str(1, "s").uint(3, 3)), f().sub(5, f().str(1, "")), f().sub(6, f().uint(1, 2).str(2, "q")),
			f().sub(7, f().uint(1, 2)), f().sub(8))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAppends(t, tc.want, func(dst []byte) ([]byte, error) { return protobuf.Codec.AppendPipelineRequest(dst, &tc.req) })
		})
	}
}

func trimHex(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

func TestEncodeCursor(t *testing.T) {
	r := &codec.CursorRequest{Baton: "b", Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "x", WantRows: true}}}}}
	got, err := protobuf.Codec.AppendCursorRequest(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	want := f().str(1, "b").sub(2, f().sub(1, f().sub(2, f().str(1, "x").uint(5, 1))))
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, []byte(want))
	}
	// A new stream and an empty batch: the batch is still there.
	got, _ = protobuf.Codec.AppendCursorRequest(nil, &codec.CursorRequest{})
	if want := f().sub(2); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, []byte(want))
	}
}

func TestEncodeErrors(t *testing.T) {
	deep := &codec.BatchCond{Type: codec.CondIsAutocommit}
	for range 1000 {
		deep = &codec.BatchCond{Type: codec.CondNot, Cond: deep}
	}
	exec := func(s codec.Stmt) *codec.PipelineRequest {
		return &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestClose}, {Type: codec.RequestExecute, Stmt: s}}}
	}
	batch := func(c *codec.BatchCond) *codec.PipelineRequest {
		return &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{Condition: c}}}}}}
	}
	for _, tc := range []struct {
		name  string
		req   *codec.PipelineRequest
		errIs error
	}{
		{"nil", nil, nil},
		{"unknown request type", &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: 99}}}, nil},
		{"baton not UTF-8", &codec.PipelineRequest{Baton: "\xff"}, codec.ErrInvalidUTF8},
		{"sql not UTF-8", exec(codec.Stmt{SQL: "\xff"}), codec.ErrInvalidUTF8},
		{"text not UTF-8", exec(codec.Stmt{Args: []codec.Value{codec.TextValue([]byte{0xc3})}}), codec.ErrInvalidUTF8},
		{"name not UTF-8", exec(codec.Stmt{NamedArgs: []codec.NamedArg{{Name: "\xff"}}}), codec.ErrInvalidUTF8},
		{"unknown value type", exec(codec.Stmt{Args: []codec.Value{{Type: 9}}}), nil},
		{"not without an operand", batch(&codec.BatchCond{Type: codec.CondNot}), nil},
		{"unknown condition", batch(&codec.BatchCond{Type: 99}), nil},
		{"condition nested too deeply", batch(deep), nil},
		{"store_sql not UTF-8", &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestStoreSQL, SQL: "\xff"}}}, codec.ErrInvalidUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := protobuf.Codec.AppendPipelineRequest(dst, tc.req)
			checkEncodeFailed(t, out, err, tc.errIs)
		})
	}
	if _, err := protobuf.Codec.AppendCursorRequest(nil, nil); err == nil {
		t.Error("nil cursor request encoded")
	}
	out, err := protobuf.Codec.AppendCursorRequest([]byte("keep"), &codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "\xff"}}}}})
	if !errors.Is(err, codec.ErrInvalidUTF8) || string(out) != "keep" {
		t.Errorf("cursor request with bad SQL: %q, %v", out, err)
	}
}

// TestEncodeRoundTrip sends values through the encoder and back through the
// decoder, as a one-column row of their own.
func TestEncodeRoundTrip(t *testing.T) {
	vals := []codec.Value{codec.NullValue(), codec.IntValue(math.MaxInt64), codec.FloatValue(math.NaN()),
		codec.FloatValue(math.Inf(-1)), codec.StringValue(strings.Repeat("é", 100)), codec.BlobValue(make([]byte, 70000))}
	for _, v := range vals {
		enc, err := protobuf.Codec.AppendPipelineRequest(nil, &codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{Args: []codec.Value{v}}}}})
		if err != nil {
			t.Fatal(err)
		}
		// The Value message is the args field of the Stmt; copy it into a
		// row of a result.
		val := findArg(t, enc)
		body := pipeline(execResult(f().sub(1, col("v", "")).sub(2, f().bytes(1, val))))
		var resp codec.PipelineResponse
		if err := protobuf.Codec.DecodePipelineResponse(body, &resp); err != nil {
			t.Fatal(err)
		}
		if got := resp.Results[0].Response.Result.Values[0]; !got.Equal(v) {
			t.Fatalf("%v came back as %v", v, got)
		}
	}
}

// findArg returns the first args value of the execute in a request body
// encoded by the codec, walking its fields by hand.
func findArg(t *testing.T, b []byte) []byte {
	t.Helper()
	for _, num := range []uint64{2, 2, 1, 3} { // requests, execute, stmt, args
		for {
			m, rest, key := splitField(t, b)
			if key == num<<3|2 {
				b = m
				break
			}
			b = rest
		}
	}
	return b
}

// splitField splits the first field off b, for fields the codec writes
// (varint, fixed64 or length-delimited), returning the payload of a
// length-delimited one.
func splitField(t *testing.T, b []byte) (payload, rest []byte, key uint64) {
	t.Helper()
	key, n := uvarint(b)
	b = b[n:]
	switch key & 7 {
	case 0:
		_, n = uvarint(b)
		return nil, b[n:], key
	case 1:
		return nil, b[8:], key
	case 2:
		l, n := uvarint(b)
		return b[n : n+int(l)], b[n+int(l):], key
	}
	t.Fatalf("wire type %d", key&7)
	return nil, nil, 0
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	panic("truncated")
}
