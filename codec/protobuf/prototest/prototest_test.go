package prototest_test

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/codec/protobuf/prototest"
)

// compare decodes data with codec/protobuf (fresh and into a stale
// destination) and with the reference, and reports any disagreement.
func compare(t *testing.T, kind codectest.Kind, data []byte) {
	t.Helper()
	a := codectest.Decode(protobuf.Codec, kind, data)
	b := codectest.Decode(prototest.Ref, kind, data)
	var pe *codectest.PanicError
	if errors.As(a.Err, &pe) || errors.As(b.Err, &pe) {
		t.Fatalf("panic on %x: %v / %v", data, a.Err, b.Err)
	}
	if d := codectest.Diff(&a, &b); d != "" {
		t.Fatalf("protobuf vs protowire on %v %x: %s\nprotobuf: %v\nprotowire: %v", kind, data, d, a.Err, b.Err)
	}
	stale := codectest.StaleResult(kind)
	codectest.DecodeInto(protobuf.Codec, data, &stale)
	if d := codectest.Diff(&stale, &b); d != "" {
		t.Fatalf("into a used destination, protobuf vs protowire on %v %x: %s", kind, data, d)
	}
}

// TestDifferentialFixtures runs the Protobuf fixtures and every prefix of
// them through both decoders.
func TestDifferentialFixtures(t *testing.T) {
	for _, f := range codectest.ProtobufFixtures() {
		for n := 0; n <= len(f.Input); n++ {
			if len(f.Input) > 2000 && n%97 != 0 && n != len(f.Input) {
				continue
			}
			compare(t, f.Kind, f.Input[:n])
		}
		r := codectest.Decode(prototest.Ref, f.Kind, f.Input)
		if d := codectest.Diff(&r, &f.Want); d != "" {
			t.Errorf("%s: the reference decodes %s", f.Name, d)
		}
	}
}

// FuzzDifferential decodes arbitrary input as every kind with both
// decoders.
func FuzzDifferential(f *testing.F) {
	for _, fx := range codectest.ProtobufFixtures() {
		f.Add(fx.Input)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range codectest.Kinds {
			compare(t, k, data)
		}
	})
}

// roundTrip encodes req with codec/protobuf and decodes it with the
// reference: the request must come back as it went in.
func roundTrip(t *testing.T, req *codec.PipelineRequest) {
	t.Helper()
	enc, err := protobuf.Codec.AppendPipelineRequest(nil, req)
	if err != nil {
		return // checked by codec/protobuf's own tests
	}
	got, err := prototest.DecodePipelineRequest(enc)
	if err != nil {
		t.Fatalf("the reference cannot decode %x: %v", enc, err)
	}
	if a, b := prototest.Canon(&got), prototest.Canon(req); a != b {
		t.Fatalf("round trip:\n got %s\nwant %s", a, b)
	}
}

// socketRoundTrip encodes the socket message m with codec/protobuf and
// decodes it with the reference: it must come back as it went in.
func socketRoundTrip(t *testing.T, m *codectest.ClientMsg) {
	t.Helper()
	var enc []byte
	var err error
	if m.Hello {
		enc, err = protobuf.Codec.(codec.SocketCodec).AppendHello(nil, m.JWT)
	} else {
		enc, err = protobuf.Codec.(codec.SocketCodec).AppendSocketRequest(nil, &m.Request)
	}
	if err != nil {
		return // checked by codec/protobuf's own tests
	}
	got, err := prototest.DecodeClientMsg(enc)
	if err != nil {
		t.Fatalf("the reference cannot decode %x: %v", enc, err)
	}
	if d := codectest.DiffClientMsg(&got, m); d != "" {
		t.Fatalf("round trip: %s\nencoded: %x", d, enc)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	n := 0
	for _, ec := range codectest.EncodeCases() {
		if m := ec.ClientMsg(); m != nil {
			socketRoundTrip(t, m)
			n++
			continue
		}
		if ec.Pipeline != nil {
			roundTrip(t, ec.Pipeline)
			n++
			continue
		}
		enc, err := protobuf.Codec.AppendCursorRequest(nil, ec.Cursor)
		if err != nil {
			continue
		}
		got, err := prototest.DecodeCursorRequest(enc)
		if err != nil {
			t.Fatalf("%s: %v", ec.Name, err)
		}
		if a, b := prototest.CanonCursor(&got), prototest.CanonCursor(ec.Cursor); a != b {
			t.Fatalf("%s: round trip:\n got %s\nwant %s", ec.Name, a, b)
		}
		n++
	}
	t.Logf("%d requests", n)
}

// FuzzEncodeRoundTrip builds requests from arbitrary bytes (values of
// every type, SQL, batons, conditions) and round-trips them, as pipeline
// requests and as socket messages.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05abc\xff"), "select 1", int64(-1), 1.5)
	f.Add([]byte{}, "", int64(math.MinInt64), math.NaN())
	f.Fuzz(func(t *testing.T, data []byte, sql string, n int64, x float64) {
		var vals []codec.Value
		for i := 0; i < len(data); i++ {
			switch data[i] % 5 {
			case 0:
				vals = append(vals, codec.NullValue())
			case 1:
				vals = append(vals, codec.IntValue(n^int64(i)))
			case 2:
				vals = append(vals, codec.FloatValue(x*float64(i)))
			case 3:
				vals = append(vals, codec.TextValue(data[i:]))
			case 4:
				vals = append(vals, codec.BlobValue(data[:i]))
			}
		}
		var c *codec.BatchCond
		if len(data) > 0 {
			c = &codec.BatchCond{Type: codec.CondOK, Step: uint32(n)}
			for _, d := range data[:min(len(data), 8)] {
				switch d % 4 {
				case 0:
					c = &codec.BatchCond{Type: codec.CondNot, Cond: c}
				case 1:
					c = &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{*c, {Type: codec.CondIsAutocommit}}}
				case 2:
					c = &codec.BatchCond{Type: codec.CondOr, Conds: []codec.BatchCond{{Type: codec.CondError, Step: uint32(d)}, *c}}
				}
			}
		}
		u := uint64(n)
		id := int32(binary.LittleEndian.Uint32(append(data[:min(len(data), 4):min(len(data), 4)], 0, 0, 0, 0)))
		req := &codec.PipelineRequest{Baton: sql, Requests: []codec.StreamRequest{
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql, Args: vals, WantRows: n%2 == 0, ReplicationIndex: u}},
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQLID: id, HasSQLID: true, NamedArgs: []codec.NamedArg{{Name: sql, Value: codec.FloatValue(x)}}}},
			{Type: codec.RequestBatch, Batch: codec.Batch{ReplicationIndex: u >> 1, Steps: []codec.BatchStep{{Condition: c, Stmt: codec.Stmt{SQL: sql, Args: vals}}, {}}}},
			{Type: codec.RequestSequence, SQL: sql, ReplicationIndex: u},
			{Type: codec.RequestDescribe, SQL: sql},
			{Type: codec.RequestStoreSQL, SQLID: id, SQL: sql},
			{Type: codec.RequestCloseSQL, SQLID: id},
			{Type: codec.RequestGetAutocommit},
			{Type: codec.RequestClose},
		}}
		roundTrip(t, req)
		for i := range req.Requests {
			r := &req.Requests[i]
			socketRoundTrip(t, &codectest.ClientMsg{Request: codec.SocketRequest{RequestID: id, Type: socketTypes[i],
				StreamID: int32(n), CursorID: -id, MaxCount: uint32(u), Stmt: r.Stmt, Batch: r.Batch, SQL: r.SQL,
				SQLID: r.SQLID, HasSQLID: n%3 == 0, ReplicationIndex: r.ReplicationIndex}})
		}
		socketRoundTrip(t, &codectest.ClientMsg{Hello: true, JWT: sql})
	})
}

// socketTypes pairs the requests of FuzzEncodeRoundTrip with socket request
// types that carry what they hold, and the types that carry ids only.
var socketTypes = []codec.SocketRequestType{codec.SocketExecute, codec.SocketExecute, codec.SocketOpenCursor,
	codec.SocketSequence, codec.SocketDescribe, codec.SocketStoreSQL, codec.SocketCloseSQL, codec.SocketFetchCursor,
	codec.SocketCloseCursor}
