package prototest

// Deliberately independent of codec/protobuf: the differential tests compare them.

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
)

// RefName is the Codec name of Ref's decode errors.
const RefName = "protowire"

// Ref is the reference decoder. It implements codec.SocketCodec so that
// codectest can drive it; its encode methods always fail. It favours
// plainness over speed and allocates freely.
var Ref codec.Codec = ref{}

type ref struct{}

// Name returns RefName.
func (ref) Name() string { return RefName }

// Format returns codec.FormatProtobuf.
func (ref) Format() codec.Format { return codec.FormatProtobuf }

// AppendPipelineRequest fails: Ref only decodes.
func (ref) AppendPipelineRequest(dst []byte, _ *codec.PipelineRequest) ([]byte, error) {
	return dst, &codec.EncodeError{Codec: RefName, Msg: "decode only"}
}

// AppendCursorRequest fails: Ref only decodes.
func (ref) AppendCursorRequest(dst []byte, _ *codec.CursorRequest) ([]byte, error) {
	return dst, &codec.EncodeError{Codec: RefName, Msg: "decode only"}
}

// errBad is the panic value by which the walkers below give up; run
// recovers it into a *codec.DecodeError (with no offset).
type errBad struct{ msg string }

func bad(format string, args ...any) { panic(errBad{fmt.Sprintf(format, args...)}) }

// field is one field of a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // varint, fixed64, fixed32
	b   []byte // bytes
}

// fields splits a message into its fields, skipping groups (nested up to
// codec.MaxDepth, as codec/protobuf does).
func fields(b []byte) []field {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			bad("tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			f.u, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.u = uint64(v)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			n = skipGroup(b, num, 1)
		default:
			bad("wire type %d", typ)
		}
		if n < 0 {
			bad("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.StartGroupType {
			out = append(out, f)
		}
	}
	return out
}

func skipGroup(b []byte, num protowire.Number, depth int) int {
	if depth > codec.MaxDepth {
		bad("groups nested too deeply")
	}
	total := 0
	for {
		n2, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			bad("group: %v", protowire.ParseError(n))
		}
		b, total = b[n:], total+n
		switch typ {
		case protowire.EndGroupType:
			if n2 != num {
				bad("mismatched end group")
			}
			return total
		case protowire.StartGroupType:
			n = skipGroup(b, n2, depth+1)
		default:
			n = protowire.ConsumeFieldValue(n2, typ, b)
		}
		if n < 0 {
			bad("group: %v", protowire.ParseError(n))
		}
		b, total = b[n:], total+n
	}
}

func want(f field, typ protowire.Type) {
	if f.typ != typ {
		bad("field %d: wire type %d, want %d", f.num, f.typ, typ)
	}
}

func str(f field) string {
	want(f, protowire.BytesType)
	if !utf8.Valid(f.b) {
		panic(errUTF8)
	}
	return string(f.b)
}

var errUTF8 = errors.New("utf8")

func u64(f field) uint64 { want(f, protowire.VarintType); return f.u }

func i32(f field) int32 {
	v := int64(u64(f))
	if v < math.MinInt32 || v > math.MaxInt32 {
		bad("int32 out of range")
	}
	return int32(v)
}

func u32(f field) uint32 {
	v := u64(f)
	if v > math.MaxUint32 {
		bad("uint32 out of range")
	}
	return uint32(v)
}

func sint(f field) int64 { return protowire.DecodeZigZag(u64(f)) }

func msg(f field) []byte { want(f, protowire.BytesType); return f.b }

func dbl(f field) float64 { want(f, protowire.Fixed64Type); return math.Float64frombits(f.u) }

// run calls fn, turning its errBad and errUTF8 panics into the error.
func run(fn func()) (err error) {
	defer func() {
		switch v := recover().(type) {
		case nil:
		case errBad:
			err = &codec.DecodeError{Codec: RefName, Offset: -1, Msg: v.msg}
		case error:
			if v != errUTF8 {
				panic(v)
			}
			err = &codec.DecodeError{Codec: RefName, Offset: -1, Msg: "string", Err: codec.ErrInvalidUTF8}
		default:
			panic(v)
		}
	}()
	fn()
	return nil
}

// DecodePipelineResponse decodes a PipelineRespBody.
func (ref) DecodePipelineResponse(data []byte, resp *codec.PipelineResponse) error {
	*resp = codec.PipelineResponse{}
	return run(func() {
		for _, f := range fields(data) {
			switch f.num {
			case 1:
				resp.Baton = str(f)
			case 2:
				resp.BaseURL = str(f)
			case 3:
				resp.Results = append(resp.Results, streamResult(msg(f)))
			}
		}
	})
}

func streamResult(b []byte) codec.StreamResult {
	var r codec.StreamResult
	seen := false
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			r = codec.StreamResult{OK: true, Response: streamResponse(msg(f))}
			seen = true
		case 2:
			r = codec.StreamResult{Error: errorMsg(msg(f))}
			seen = true
		}
	}
	if !seen {
		bad("stream result without a member")
	}
	return r
}

func streamResponse(b []byte) codec.StreamResponse {
	var r codec.StreamResponse
	for _, f := range fields(b) {
		if f.num < 1 || f.num > 8 {
			continue
		}
		t := []codec.RequestType{0, codec.RequestClose, codec.RequestExecute, codec.RequestBatch,
			codec.RequestSequence, codec.RequestDescribe, codec.RequestStoreSQL, codec.RequestCloseSQL, codec.RequestGetAutocommit}[f.num]
		x := responseBody(t.String(), msg(f))
		r = codec.StreamResponse{Type: t, Result: x.Result, Batch: x.Batch, Describe: x.Describe, IsAutocommit: x.IsAutocommit}
	}
	if r.Type == codec.RequestUnknown {
		bad("stream response without a known member")
	}
	return r
}

// responseBody decodes the message of the response member of the request
// type named name (the same names over HTTP and WebSocket): the result,
// is_autocommit, or a fetch_cursor's entries = 1 and done = 2.
func responseBody(name string, b []byte) codec.SocketResponse {
	var r codec.SocketResponse
	for _, g := range fields(b) {
		switch {
		case g.num == 1 && name == "execute":
			r.Result = stmtResult(msg(g))
		case g.num == 1 && name == "batch":
			r.Batch = batchResult(msg(g))
		case g.num == 1 && name == "describe":
			r.Describe = describeResult(msg(g))
		case g.num == 1 && name == "get_autocommit":
			r.IsAutocommit = u64(g) != 0
		case g.num == 1 && name == "fetch_cursor":
			r.Entries = append(r.Entries, cursorEntry(msg(g)))
		case g.num == 2 && name == "fetch_cursor":
			r.Done = u64(g) != 0
		}
	}
	return r
}

func errorMsg(b []byte) codec.Error {
	var e codec.Error
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			e.Message = str(f)
		case 2:
			e.Code = str(f)
		}
	}
	return e
}

func col(b []byte) codec.Col {
	var c codec.Col
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			c.Name = str(f)
		case 2:
			c.Decltype = str(f)
		}
	}
	return c
}

func stmtResult(b []byte) codec.StmtResult {
	var r codec.StmtResult
	var lens []int
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			r.Cols = append(r.Cols, col(msg(f)))
		case 2:
			vals := row(msg(f))
			lens = append(lens, len(vals))
			r.Values = append(r.Values, vals...)
			r.NumRows++
		case 3:
			r.AffectedRowCount = u64(f)
		case 4:
			r.LastInsertRowID, r.HasLastInsertRowID = sint(f), true
		case 5:
			r.ReplicationIndex, r.HasReplicationIndex = u64(f), true
		case 6:
			r.RowsRead = u64(f)
		case 7:
			r.RowsWritten = u64(f)
		case 8:
			r.QueryDurationMS = dbl(f)
		}
	}
	for _, n := range lens {
		if n != len(r.Cols) {
			bad("row of %d values for %d columns", n, len(r.Cols))
		}
	}
	return r
}

func row(b []byte) []codec.Value {
	vals := []codec.Value{}
	for _, f := range fields(b) {
		if f.num == 1 {
			vals = append(vals, value(msg(f)))
		}
	}
	return vals
}

func value(b []byte) codec.Value {
	var v codec.Value
	seen := false
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			fields(msg(f)) // an empty message; its fields must parse
			v = codec.NullValue()
		case 2:
			v = codec.IntValue(sint(f))
		case 3:
			v = codec.FloatValue(dbl(f))
		case 4:
			v = codec.StringValue(str(f))
		case 5:
			v = codec.BlobValue(append([]byte{}, msg(f)...))
		default:
			continue
		}
		seen = true
	}
	if !seen {
		bad("value without a member")
	}
	return v
}

func batchResult(b []byte) codec.BatchResult {
	var br codec.BatchResult
	seen := map[int]int{} // step index -> maps seen in (1 results, 2 errors)
	for _, f := range fields(b) {
		if f.num != 1 && f.num != 2 {
			continue
		}
		var key uint32
		var val []byte
		for _, g := range fields(msg(f)) {
			switch g.num {
			case 1:
				key = u32(g)
			case 2:
				val = msg(g)
			}
		}
		if key >= protobuf.MaxBatchSteps {
			bad("step index too large")
		}
		for len(br.Steps) <= int(key) {
			br.Steps = append(br.Steps, codec.StepOutcome{})
		}
		st := &br.Steps[key]
		seen[int(key)] |= int(f.num)
		if f.num == 1 {
			st.Status, st.Result = codec.StepOK, stmtResult(val)
		} else {
			st.Status, st.Error = codec.StepFailed, errorMsg(val)
		}
	}
	for k, s := range seen {
		if s == 3 {
			bad("step %d has a result and an error", k)
		}
	}
	return br
}

func describeResult(b []byte) codec.DescribeResult {
	var d codec.DescribeResult
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			var p codec.DescribeParam
			for _, g := range fields(msg(f)) {
				if g.num == 1 {
					p.Name = str(g)
				}
			}
			d.Params = append(d.Params, p)
		case 2:
			d.Cols = append(d.Cols, col(msg(f)))
		case 3:
			d.IsExplain = u64(f) != 0
		case 4:
			d.IsReadonly = u64(f) != 0
		}
	}
	return d
}

// DecodeCursorHeader decodes a CursorRespBody.
func (ref) DecodeCursorHeader(data []byte, h *codec.CursorHeader) error {
	*h = codec.CursorHeader{}
	return run(func() {
		for _, f := range fields(data) {
			switch f.num {
			case 1:
				h.Baton = str(f)
			case 2:
				h.BaseURL = str(f)
			}
		}
	})
}

// DecodeCursorEntry decodes a CursorEntry.
func (ref) DecodeCursorEntry(data []byte, e *codec.CursorEntry) error {
	*e = codec.CursorEntry{}
	return run(func() { *e = cursorEntry(data) })
}

func cursorEntry(b []byte) codec.CursorEntry {
	var e codec.CursorEntry
	for _, f := range fields(b) {
		if f.num < 1 || f.num > 6 {
			continue
		}
		b := msg(f)
		var x codec.CursorEntry
		switch f.num {
		case 1:
			x.Type = codec.EntryStepBegin
			for _, g := range fields(b) {
				switch g.num {
				case 1:
					x.Step = u32(g)
				case 2:
					x.Cols = append(x.Cols, col(msg(g)))
				}
			}
		case 2:
			x.Type = codec.EntryStepEnd
			for _, g := range fields(b) {
				switch g.num {
				case 1:
					x.AffectedRowCount = u64(g)
				case 2:
					x.LastInsertRowID, x.HasLastInsertRowID = sint(g), true
				}
			}
		case 3:
			x.Type = codec.EntryStepError
			for _, g := range fields(b) {
				switch g.num {
				case 1:
					x.Step = u32(g)
				case 2:
					x.Error = errorMsg(msg(g))
				}
			}
		case 4:
			x.Type, x.Row = codec.EntryRow, row(b)
		case 5:
			x.Type, x.Error = codec.EntryError, errorMsg(b)
		case 6:
			x.Type, x.HasReplicationIndex = codec.EntryReplicationIndex, true
			for _, g := range fields(b) {
				if g.num == 1 {
					x.ReplicationIndex = u64(g)
				}
			}
		}
		e = x
	}
	return e
}

// DecodeError decodes an Error message.
func (ref) DecodeError(data []byte, e *codec.Error) error {
	*e = codec.Error{}
	return run(func() { *e = errorMsg(data) })
}

// DecodeServerMsg decodes a ServerMsg of the hrana3-protobuf subprotocol:
// oneof hello_ok = 1, hello_error = 2 (error = 1), response_ok = 3
// (request_id = 1, oneof response 2..13, the request type plus one),
// response_error = 4 (request_id = 1, error = 2).
func (ref) DecodeServerMsg(data []byte, m *codec.ServerMsg) error {
	*m = codec.ServerMsg{}
	return run(func() {
		for _, f := range fields(data) {
			if f.num < 1 || f.num > 4 {
				continue
			}
			b := msg(f)
			x := codec.ServerMsg{Type: codec.ServerMsgType(f.num)}
			for _, g := range fields(b) {
				switch {
				case x.Type == codec.ServerHelloError && g.num == 1,
					x.Type == codec.ServerResponseError && g.num == 2:
					x.Error = errorMsg(msg(g))
				case (x.Type == codec.ServerResponseOK || x.Type == codec.ServerResponseError) && g.num == 1:
					x.RequestID = i32(g)
				case x.Type == codec.ServerResponseOK && g.num >= 2 && g.num <= 13:
					t := codec.SocketRequestType(g.num - 1)
					x.Response = responseBody(t.String(), msg(g))
					x.Response.Type = t
				}
			}
			if x.Type == codec.ServerResponseOK && x.Response.Type == codec.SocketUnknown {
				bad("response_ok without a response")
			}
			*m = x
		}
		if m.Type == codec.ServerMsgUnknown {
			bad("server message without a known member")
		}
	})
}

// AppendHello fails: Ref only decodes.
func (ref) AppendHello(dst []byte, _ string) ([]byte, error) {
	return dst, &codec.EncodeError{Codec: RefName, Msg: "decode only"}
}

// AppendSocketRequest fails: Ref only decodes.
func (ref) AppendSocketRequest(dst []byte, _ *codec.SocketRequest) ([]byte, error) {
	return dst, &codec.EncodeError{Codec: RefName, Msg: "decode only"}
}

var _ codec.SocketCodec = ref{}
