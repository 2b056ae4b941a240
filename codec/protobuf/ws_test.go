package protobuf_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/protobuf"
)

var socketCodec = protobuf.Codec.(codec.SocketCodec)

// clientReq is a ClientMsg holding a RequestMsg with the request id and
// the member num holding body.
func clientReq(id int64, num int, body msg) msg {
	m := f()
	if id != 0 {
		m = m.uint(1, uint64(id))
	}
	return f().sub(2, m.sub(num, body))
}

// neg is the varint of a negative int32, sign-extended to 64 bits.
func neg(v int32) uint64 { return uint64(int64(v)) }

func TestEncodeSocket(t *testing.T) {
	long := strings.Repeat("s", 20000) // lengths of three bytes
	sel := codec.Stmt{SQL: "select ?", Args: []codec.Value{codec.IntValue(-5), codec.FloatValue(math.NaN()), codec.BlobValue(nil)}, WantRows: true}
	selMsg := f().str(1, "select ?").sub(3, vInt(-5)).sub(3, vFloat(math.NaN())).sub(3, vBlob(nil)).uint(5, 1)
	batch := codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "a"}},
		{Condition: &codec.BatchCond{Type: codec.CondOK}, Stmt: codec.Stmt{SQLID: 1, HasSQLID: true, WantRows: true}}}, ReplicationIndex: 77}
	batchMsg := f().sub(1, f().sub(2, f().str(1, "a").uint(5, 0))).
		sub(1, f().sub(1, f().uint(1, 0)).sub(2, f().uint(2, 1).uint(5, 1))).uint(2, 77)
	for _, tc := range []struct {
		name string
		req  codec.SocketRequest
		want msg
	}{
		{"open_stream", codec.SocketRequest{RequestID: 1, Type: codec.SocketOpenStream, StreamID: 7}, clientReq(1, 2, f().uint(1, 7))},
		{"open_stream with zero ids", codec.SocketRequest{Type: codec.SocketOpenStream}, clientReq(0, 2, f())},
		{"close_stream", codec.SocketRequest{RequestID: math.MaxInt32, Type: codec.SocketCloseStream, StreamID: math.MinInt32},
			clientReq(math.MaxInt32, 3, f().uint(1, neg(math.MinInt32)))},
		{"execute", codec.SocketRequest{RequestID: -1, Type: codec.SocketExecute, StreamID: 1, Stmt: sel, ReplicationIndex: 9},
			clientReq(-1, 4, f().uint(1, 1).sub(2, selMsg).uint(3, 9))},
		{"execute by sql_id, its index in the stmt", codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1,
			Stmt: codec.Stmt{SQL: "ignored", SQLID: 4, HasSQLID: true, ReplicationIndex: 5}},
			clientReq(0, 4, f().uint(1, 1).sub(2, f().uint(2, 4).uint(5, 0).uint(6, 5)))},
		{"execute with long SQL", codec.SocketRequest{RequestID: 2, Type: codec.SocketExecute, StreamID: 1, Stmt: codec.Stmt{SQL: long}},
			clientReq(2, 4, f().uint(1, 1).sub(2, f().str(1, long).uint(5, 0)))},
		{"batch", codec.SocketRequest{RequestID: 3, Type: codec.SocketBatch, StreamID: 2, Batch: batch},
			clientReq(3, 5, f().uint(1, 2).sub(2, batchMsg))},
		{"empty batch", codec.SocketRequest{RequestID: 3, Type: codec.SocketBatch, StreamID: 2}, clientReq(3, 5, f().uint(1, 2).sub(2))},
		{"open_cursor", codec.SocketRequest{RequestID: 4, Type: codec.SocketOpenCursor, StreamID: 2, CursorID: 9, Batch: batch},
			clientReq(4, 6, f().uint(1, 2).uint(2, 9).sub(3, batchMsg))},
		{"close_cursor", codec.SocketRequest{RequestID: 5, Type: codec.SocketCloseCursor, StreamID: 2, CursorID: 9},
			clientReq(5, 7, f().uint(1, 9))},
		{"fetch_cursor", codec.SocketRequest{RequestID: 6, Type: codec.SocketFetchCursor, CursorID: -9, MaxCount: math.MaxUint32},
			clientReq(6, 8, f().uint(1, neg(-9)).uint(2, math.MaxUint32))},
		{"fetch_cursor with zeros", codec.SocketRequest{RequestID: 6, Type: codec.SocketFetchCursor}, clientReq(6, 8, f())},
		{"sequence", codec.SocketRequest{RequestID: 7, Type: codec.SocketSequence, StreamID: 3, SQL: "s"},
			clientReq(7, 9, f().uint(1, 3).str(2, "s"))},
		{"sequence of empty SQL", codec.SocketRequest{RequestID: 7, Type: codec.SocketSequence, StreamID: 3},
			clientReq(7, 9, f().uint(1, 3).str(2, ""))},
		{"sequence by sql_id", codec.SocketRequest{RequestID: 8, Type: codec.SocketSequence, StreamID: 3, SQL: "\xff", SQLID: -4,
			HasSQLID: true, ReplicationIndex: 12}, clientReq(8, 9, f().uint(1, 3).uint(3, neg(-4)).uint(4, 12))},
		{"describe", codec.SocketRequest{RequestID: 9, Type: codec.SocketDescribe, StreamID: 3, SQL: "select :a", ReplicationIndex: 1},
			clientReq(9, 10, f().uint(1, 3).str(2, "select :a").uint(4, 1))},
		{"describe by sql_id 0", codec.SocketRequest{RequestID: 10, Type: codec.SocketDescribe, StreamID: 3, HasSQLID: true},
			clientReq(10, 10, f().uint(1, 3).uint(3, 0))},
		{"store_sql", codec.SocketRequest{RequestID: 11, Type: codec.SocketStoreSQL, StreamID: 3, SQLID: 2, SQL: "q"},
			clientReq(11, 11, f().uint(1, 2).str(2, "q"))},
		{"close_sql", codec.SocketRequest{RequestID: 12, Type: codec.SocketCloseSQL, SQLID: -2}, clientReq(12, 12, f().uint(1, neg(-2)))},
		{"get_autocommit", codec.SocketRequest{RequestID: 13, Type: codec.SocketGetAutocommit, StreamID: 3}, clientReq(13, 13, f().uint(1, 3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAppends(t, tc.want, func(dst []byte) ([]byte, error) { return socketCodec.AppendSocketRequest(dst, &tc.req) })
		})
	}
	for _, tc := range []struct {
		jwt  string
		want msg
	}{
		{"", f().sub(1)},
		{"eyJ.e30.sig", f().sub(1, f().str(1, "eyJ.e30.sig"))},
		{long, f().sub(1, f().str(1, long))},
	} {
		got, err := socketCodec.AppendHello([]byte("p"), tc.jwt)
		if err != nil || !bytes.Equal(got, append(msg("p"), tc.want...)) {
			t.Errorf("hello %.10q: got %x, %v\nwant %x", tc.jwt, trimHex(got), err, trimHex(tc.want))
		}
	}
}

func TestEncodeSocketErrors(t *testing.T) {
	exec := func(s codec.Stmt) *codec.SocketRequest {
		return &codec.SocketRequest{Type: codec.SocketExecute, Stmt: s}
	}
	for _, tc := range []struct {
		name  string
		req   *codec.SocketRequest
		errIs error
	}{
		{"nil", nil, nil},
		{"unknown type", &codec.SocketRequest{}, nil},
		{"bad type", &codec.SocketRequest{Type: 99}, nil},
		{"sql not UTF-8", exec(codec.Stmt{SQL: "\xff"}), codec.ErrInvalidUTF8},
		{"text not UTF-8", exec(codec.Stmt{Args: []codec.Value{codec.TextValue([]byte{0xc3})}}), codec.ErrInvalidUTF8},
		{"unknown value type", exec(codec.Stmt{Args: []codec.Value{{Type: 9}}}), nil},
		{"not without an operand", &codec.SocketRequest{Type: codec.SocketOpenCursor, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Condition: &codec.BatchCond{Type: codec.CondNot}}}}}, nil},
		{"sequence not UTF-8", &codec.SocketRequest{Type: codec.SocketSequence, SQL: "\xff"}, codec.ErrInvalidUTF8},
		{"store_sql not UTF-8", &codec.SocketRequest{Type: codec.SocketStoreSQL, SQL: "\xff"}, codec.ErrInvalidUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := socketCodec.AppendSocketRequest([]byte("keep"), tc.req)
			checkEncodeFailed(t, out, err, tc.errIs)
		})
	}
	out, err := socketCodec.AppendHello([]byte("keep"), "a\xffb")
	if !errors.Is(err, codec.ErrInvalidUTF8) || string(out) != "keep" {
		t.Fatalf("hello with a JWT that is not UTF-8: %q, %v", out, err)
	}
}

type serverCase struct {
	name  string
	in    msg
	want  codec.ServerMsg // when !fail
	fail  bool
	errIs error
	// errAt and errMsg, when errMsg is set, are the error's offset and
	// message.
	errAt  int
	errMsg string
}

// responseOK is a ServerMsg holding a ResponseOkMsg with the request id and
// the member num holding body.
func responseOK(id int64, num int, body msg) msg {
	m := f()
	if id != 0 {
		m = m.uint(1, uint64(id))
	}
	return f().sub(3, m.sub(num, body))
}

func okMsg(id int32, r codec.SocketResponse) codec.ServerMsg {
	return codec.ServerMsg{Type: codec.ServerResponseOK, RequestID: id, Response: r}
}

// serverCases are the decoding rules of Protobuf server messages that the
// JSON fixtures of codectest do not reach.
func serverCases() []serverCase {
	fail := func(name string, in msg) serverCase { return serverCase{name: name, in: in, fail: true} }
	hello := codec.ServerMsg{Type: codec.ServerHelloOK}
	execOne := codec.StmtResult{Cols: []codec.Col{{Name: "a"}}, Values: []codec.Value{codec.IntValue(1)}, NumRows: 1}
	return []serverCase{
		{name: "hello_ok", in: f().sub(1), want: hello},
		{name: "hello_ok with unknown fields", in: f().uint(9, 1).sub(1, f().uint(5, 1).sub(6)).double(10, 1), want: hello},
		fail("hello_ok with a malformed body", f().sub(1, f().raw(0x08))),
		fail("hello_ok with the wrong wire type", f().uint(1, 0)),
		fail("empty", f()),
		fail("only unknown fields", f().uint(9, 1).sub(5)),
		fail("truncated member", f().raw(0x0a, 0x05, 0x00)),
		{name: "the last member wins", in: f().sub(4, f().uint(1, 5).sub(2, f().str(1, "m"))).sub(1), want: hello},
		{name: "hello_error", in: f().sub(2, f().sub(1, f().str(1, "m").str(2, "C"))),
			want: codec.ServerMsg{Type: codec.ServerHelloError, Error: codec.Error{Message: "m", Code: "C"}}},
		{name: "hello_error without an error", in: f().sub(2), want: codec.ServerMsg{Type: codec.ServerHelloError}},
		{name: "hello_error: the last error wins as a whole", in: f().sub(2, f().sub(1, f().str(1, "a").str(2, "X")).sub(1, f().str(1, "b"))),
			want: codec.ServerMsg{Type: codec.ServerHelloError, Error: codec.Error{Message: "b"}}},
		{name: "hello_error message not UTF-8", in: f().sub(2, f().sub(1, f().str(1, "\xff"))), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "response_ok with a negative request id", in: responseOK(-7, 2, f()), want: okMsg(-7, codec.SocketResponse{Type: codec.SocketOpenStream})},
		{name: "response_ok with the largest request id", in: responseOK(math.MaxInt32, 2, f()), want: okMsg(math.MaxInt32, codec.SocketResponse{Type: codec.SocketOpenStream})},
		fail("request id above int32", responseOK(1<<31, 2, f())),
		fail("request id below int32", responseOK(math.MinInt32-1, 2, f())),
		fail("request id with the wrong wire type", f().sub(3, f().str(1, "x").sub(2))),
		fail("response_ok without a member", f().sub(3, f().uint(1, 3))),
		fail("response_ok with an unknown member only", responseOK(3, 14, f())),
		{name: "response_ok: unknown members skipped", in: f().sub(3, f().sub(14).sub(2).uint(15, 1)), want: okMsg(0, codec.SocketResponse{Type: codec.SocketOpenStream})},
		fail("response member with the wrong wire type", f().sub(3, f().uint(4, 1))),
		{name: "response_ok: the last member wins as a whole",
			in:   f().sub(3, f().sub(4, f().sub(1, f().sub(1, col("a", "")).sub(2, row(vInt(1))))).sub(13, f().uint(1, 1))),
			want: okMsg(0, codec.SocketResponse{Type: codec.SocketGetAutocommit, IsAutocommit: true})},
		{name: "execute", in: responseOK(2, 4, f().sub(1, f().sub(1, col("a", "")).sub(2, row(vInt(1))))), want: okMsg(2, codec.SocketResponse{Type: codec.SocketExecute, Result: execOne})},
		{name: "execute without a result", in: responseOK(2, 4, f()), want: okMsg(2, codec.SocketResponse{Type: codec.SocketExecute})},
		fail("execute result with the wrong wire type", responseOK(2, 4, f().uint(1, 1))),
		fail("execute result of a bad row", responseOK(2, 4, f().sub(1, f().sub(1, col("a", "")).sub(2, row())))),
		{name: "get_autocommit false, written", in: responseOK(3, 13, f().uint(1, 0)), want: okMsg(3, codec.SocketResponse{Type: codec.SocketGetAutocommit})},
		fail("get_autocommit with the wrong wire type", responseOK(3, 13, f().str(1, "t"))),
		{name: "fetch_cursor", in: responseOK(4, 8, f().sub(1, f().sub(1, f().uint(1, 2).sub(2, col("a", "INTEGER")))).sub(1, f().sub(4, row(vText("x")))).
			sub(1).sub(1, f().sub(6, f().uint(1, 9))).uint(2, 1)),
			want: okMsg(4, codec.SocketResponse{Type: codec.SocketFetchCursor, Done: true, Entries: []codec.CursorEntry{
				{Type: codec.EntryStepBegin, Step: 2, Cols: []codec.Col{{Name: "a", Decltype: "INTEGER"}}},
				{Type: codec.EntryRow, Row: []codec.Value{codec.StringValue("x")}}, {},
				{Type: codec.EntryReplicationIndex, ReplicationIndex: 9, HasReplicationIndex: true}}})},
		fail("fetch_cursor entry with the wrong wire type", responseOK(4, 8, f().uint(1, 1))),
		fail("fetch_cursor entry of a bad step", responseOK(4, 8, f().sub(1, f().sub(1, f().uint(1, 1<<32))))),
		fail("fetch_cursor done with the wrong wire type", responseOK(4, 8, f().str(2, "t"))),
		{name: "fetch_cursor text not UTF-8", in: responseOK(4, 8, f().sub(1, f().sub(4, row(vText("\xc3"))))), fail: true, errIs: codec.ErrInvalidUTF8},
		{name: "response_error", in: f().sub(4, f().uint(1, 6).sub(2, f().str(1, "m").str(2, "C"))),
			want: codec.ServerMsg{Type: codec.ServerResponseError, RequestID: 6, Error: codec.Error{Message: "m", Code: "C"}}},
		{name: "response_error without an error", in: f().sub(4, f().uint(1, 6)), want: codec.ServerMsg{Type: codec.ServerResponseError, RequestID: 6}},
		{name: "response_error: field 1 is the request id, not the error", in: f().sub(4, f().uint(1, 6).uint(3, 1)),
			want: codec.ServerMsg{Type: codec.ServerResponseError, RequestID: 6}},
		fail("response_error with an error of the wrong wire type", f().sub(4, f().uint(2, 1))),
		{name: "request id outside the int32 range", in: f().sub(4, f().uint(1, 1<<31)), fail: true,
			errAt: 2, errMsg: `field "request_id": value outside the int32 range`},
	}
}

func TestDecodeServerMsg(t *testing.T) {
	for _, tc := range serverCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := codectest.Decode(protobuf.Codec, codectest.KindServerMsg, tc.in)
			if tc.fail {
				checkDecodeFailed(t, tc.in, got.Err, tc.errIs, tc.errAt, tc.errMsg)
				return
			}
			if got.Err != nil {
				t.Fatal(got.Err)
			}
			if d := codectest.DiffServerMsg(&got.Server, &tc.want); d != "" {
				t.Fatal(d)
			}
			stale := codectest.StaleResult(codectest.KindServerMsg)
			codectest.DecodeInto(protobuf.Codec, tc.in, &stale)
			if d := codectest.DiffServerMsg(&stale.Server, &tc.want); stale.Err != nil || d != "" {
				t.Fatalf("into a used destination: %v %s", stale.Err, d)
			}
		})
	}
	if err := socketCodec.DecodeServerMsg(f().sub(1), nil); err == nil {
		t.Error("decoding into nil succeeded")
	}
}

// FuzzDecodeServerMsg decodes arbitrary server messages under the
// invariants of checkFuzz.
func FuzzDecodeServerMsg(f *testing.F) {
	fuzzSeeds(f, codectest.KindServerMsg)
	for _, tc := range serverCases() {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, codectest.KindServerMsg, data) })
}

func TestAllocsSocket(t *testing.T) {
	codectest.CheckSocketAllocs(t, socketCodec, "eyJ.e30.sig", encodeRequest("exec6").Requests[0].Stmt, encodeRequest("batch10").Requests[0].Batch)
}
