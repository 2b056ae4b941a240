package codectest

// This file: the Protobuf form of the fixtures, for codecs of the Hrana 3
// Protobuf encoding. The messages are built from the fixtures' expected Go
// values, laid out as sqld's prost encoder writes them (fields in number
// order, proto3 zero values left out, optional fields written when set).
// It is a plain, allocating builder on purpose: it shares nothing with the
// codecs it checks.

import (
	"math"

	"github.com/gohrana/libsql/codec"
)

// pb builds one Protobuf message.
type pb []byte

func (m pb) varint(v uint64) pb {
	for v >= 0x80 {
		m = append(m, byte(v)|0x80)
		v >>= 7
	}
	return append(m, byte(v))
}

func (m pb) key(num, wt int) pb { return m.varint(uint64(num<<3 | wt)) }

// uint writes a varint field, always (callers leave out zeros).
func (m pb) uint(num int, v uint64) pb { return m.key(num, 0).varint(v) }

func (m pb) sint(num int, v int64) pb { return m.uint(num, uint64(v<<1)^uint64(v>>63)) }

func (m pb) double(num int, f float64) pb {
	u := math.Float64bits(f)
	m = m.key(num, 1)
	for i := 0; i < 8; i++ {
		m = append(m, byte(u>>(8*i)))
	}
	return m
}

func (m pb) bytes(num int, b []byte) pb {
	return append(m.key(num, 2).varint(uint64(len(b))), b...)
}

func (m pb) str(num int, s string) pb { return m.bytes(num, []byte(s)) }

// optStr writes a string field unless it is "" (proto3 leaves it out, and
// Go cannot tell "" from absent).
func (m pb) optStr(num int, s string) pb {
	if s == "" {
		return m
	}
	return m.str(num, s)
}

func (m pb) optUint(num int, v uint64) pb {
	if v == 0 {
		return m
	}
	return m.uint(num, v)
}

func (m pb) msg(num int, sub pb) pb { return m.bytes(num, sub) }

func pbValue(v codec.Value) pb {
	var m pb
	switch v.Type {
	case codec.Null:
		return m.msg(1, nil)
	case codec.Integer:
		return m.sint(2, v.Int)
	case codec.Float:
		return m.double(3, v.Float)
	case codec.Text:
		return m.bytes(4, v.Bytes)
	case codec.Blob:
		return m.bytes(5, v.Bytes)
	}
	panic("codectest: value of unknown type")
}

func pbRow(vals []codec.Value) pb {
	var m pb
	for _, v := range vals {
		m = m.msg(1, pbValue(v))
	}
	return m
}

func pbCol(c codec.Col) pb {
	var m pb
	return m.optStr(1, c.Name).optStr(2, c.Decltype)
}

func pbError(e codec.Error) pb {
	var m pb
	return m.optStr(1, e.Message).optStr(2, e.Code)
}

func pbStmtResult(r *codec.StmtResult) pb {
	var m pb
	for _, c := range r.Cols {
		m = m.msg(1, pbCol(c))
	}
	for i := 0; i < r.NumRows; i++ {
		m = m.msg(2, pbRow(r.Row(i)))
	}
	m = m.optUint(3, r.AffectedRowCount)
	if r.HasLastInsertRowID {
		m = m.sint(4, r.LastInsertRowID)
	}
	if r.HasReplicationIndex {
		m = m.uint(5, r.ReplicationIndex)
	}
	m = m.optUint(6, r.RowsRead).optUint(7, r.RowsWritten)
	if math.Float64bits(r.QueryDurationMS) != 0 {
		m = m.double(8, r.QueryDurationMS)
	}
	return m
}

// pbBatchResult writes the two maps, step_results = 1 and step_errors = 2,
// whose entries are {uint32 key = 1; value = 2}; sqld writes the key even
// when it is 0.
func pbBatchResult(b *codec.BatchResult) pb {
	var m pb
	for i := range b.Steps {
		if st := &b.Steps[i]; st.Status == codec.StepOK {
			m = m.msg(1, pb(nil).uint(1, uint64(i)).msg(2, pbStmtResult(&st.Result)))
		}
	}
	for i := range b.Steps {
		if st := &b.Steps[i]; st.Status == codec.StepFailed {
			m = m.msg(2, pb(nil).uint(1, uint64(i)).msg(2, pbError(st.Error)))
		}
	}
	return m
}

func pbDescribe(d *codec.DescribeResult) pb {
	var m pb
	for _, p := range d.Params {
		m = m.msg(1, pb(nil).optStr(1, p.Name))
	}
	for _, c := range d.Cols {
		m = m.msg(2, pbCol(c))
	}
	if d.IsExplain {
		m = m.uint(3, 1)
	}
	if d.IsReadonly {
		m = m.uint(4, 1)
	}
	return m
}

// pbResponseBody is the message of the response member for the request
// type named name (the same names over HTTP and WebSocket): the result,
// is_autocommit (written when false too if required, as the socket's
// GetAutocommitResp has it), or a fetch_cursor's entries and done.
func pbResponseBody(name string, r *codec.SocketResponse, required bool) pb {
	var m pb
	switch name {
	case "execute":
		return m.msg(1, pbStmtResult(&r.Result))
	case "batch":
		return m.msg(1, pbBatchResult(&r.Batch))
	case "describe":
		return m.msg(1, pbDescribe(&r.Describe))
	case "get_autocommit":
		if r.IsAutocommit || required {
			m = m.uint(1, b2u(r.IsAutocommit))
		}
	case "fetch_cursor":
		for i := range r.Entries {
			m = m.msg(1, pbEntry(&r.Entries[i]))
		}
		if r.Done {
			m = m.uint(2, 1)
		}
	}
	return m
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func pbStreamResult(r *codec.StreamResult) pb {
	var m pb
	if !r.OK {
		return m.msg(2, pbError(r.Error))
	}
	resp := &r.Response
	sr := codec.SocketResponse{Result: resp.Result, Batch: resp.Batch, Describe: resp.Describe, IsAutocommit: resp.IsAutocommit}
	member := pbResponseBody(resp.Type.String(), &sr, false)
	num := map[codec.RequestType]int{
		codec.RequestClose: 1, codec.RequestExecute: 2, codec.RequestBatch: 3, codec.RequestSequence: 4,
		codec.RequestDescribe: 5, codec.RequestStoreSQL: 6, codec.RequestCloseSQL: 7, codec.RequestGetAutocommit: 8,
	}[resp.Type]
	if num == 0 {
		panic("codectest: response of unknown type")
	}
	return m.msg(1, pb(nil).msg(num, member))
}

func pbEntry(e *codec.CursorEntry) pb {
	var m pb
	switch e.Type {
	case codec.EntryStepBegin:
		sub := pb(nil).optUint(1, uint64(e.Step))
		for _, c := range e.Cols {
			sub = sub.msg(2, pbCol(c))
		}
		return m.msg(1, sub)
	case codec.EntryStepEnd:
		sub := pb(nil).optUint(1, e.AffectedRowCount)
		if e.HasLastInsertRowID {
			sub = sub.sint(2, e.LastInsertRowID)
		}
		return m.msg(2, sub)
	case codec.EntryStepError:
		return m.msg(3, pb(nil).optUint(1, uint64(e.Step)).msg(2, pbError(e.Error)))
	case codec.EntryRow:
		return m.msg(4, pbRow(e.Row))
	case codec.EntryError:
		return m.msg(5, pbError(e.Error))
	case codec.EntryReplicationIndex:
		if e.HasReplicationIndex {
			return m.msg(6, pb(nil).optUint(1, e.ReplicationIndex))
		}
	}
	// sqld writes an entry without a replication index as an empty
	// message; unknown entries have no Protobuf form either.
	return m
}

// pbServerMsg writes a ServerMsg as sqld does (hrana/ws/protobuf.rs): the
// member of the message type, its request_id when not 0, and the Error and
// result messages that prost writes even when empty (they are required).
func pbServerMsg(s *codec.ServerMsg) pb {
	var m pb
	id := func(b pb) pb {
		if s.RequestID != 0 {
			b = b.uint(1, uint64(int64(s.RequestID)))
		}
		return b
	}
	switch s.Type {
	case codec.ServerHelloOK:
		return m.msg(1, nil)
	case codec.ServerHelloError:
		return m.msg(2, pb(nil).msg(1, pbError(s.Error)))
	case codec.ServerResponseOK:
		t := s.Response.Type
		if t.String() == "" {
			panic("codectest: socket response of unknown type")
		}
		return m.msg(3, id(nil).msg(int(t)+1, pbResponseBody(t.String(), &s.Response, true)))
	case codec.ServerResponseError:
		return m.msg(4, id(nil).msg(2, pbError(s.Error)))
	}
	panic("codectest: server message of unknown type")
}

// ProtobufInput returns the Hrana 3 Protobuf encoding of the payload of r
// that r.Kind names: a PipelineRespBody, a CursorRespBody, one CursorEntry
// (without a length prefix), an Error or a ServerMsg (hrana3-protobuf). It
// panics on a Result that no message can hold (a value or response of
// unknown type).
func ProtobufInput(r *Result) []byte {
	var m pb
	switch r.Kind {
	case KindPipeline:
		p := &r.Pipeline
		m = m.optStr(1, p.Baton).optStr(2, p.BaseURL)
		for i := range p.Results {
			m = m.msg(3, pbStreamResult(&p.Results[i]))
		}
	case KindCursorHeader:
		m = m.optStr(1, r.Header.Baton).optStr(2, r.Header.BaseURL)
	case KindCursorEntry:
		m = pbEntry(&r.Entry)
	case KindError:
		m = pbError(r.Error)
	case KindServerMsg:
		m = pbServerMsg(&r.Server)
	default:
		panic("codectest: unknown kind")
	}
	if m == nil {
		m = pb{}
	}
	return m
}

// ProtobufWant returns what a Protobuf decoder gives for ProtobufInput(r):
// r itself except where the Protobuf form cannot say what JSON says. A
// BatchResult loses its trailing skipped steps (the maps hold only the
// steps that ran) and its replication index (not in the Protobuf message);
// a replication_index cursor entry without an index is the empty entry
// sqld writes, EntryUnknown, also among a fetch_cursor's entries. Slices of
// r are shared, not copied, except those it changes.
func ProtobufWant(r Result) Result {
	out := r
	switch r.Kind {
	case KindPipeline:
		out.Pipeline.Results = make([]codec.StreamResult, len(r.Pipeline.Results))
		for i, sr := range r.Pipeline.Results {
			sr.Response.Batch = protobufBatch(sr.Response.Batch)
			out.Pipeline.Results[i] = sr
		}
	case KindCursorEntry:
		out.Entry = protobufEntry(r.Entry)
	case KindServerMsg:
		resp := &out.Server.Response
		resp.Batch = protobufBatch(resp.Batch)
		resp.Entries = make([]codec.CursorEntry, len(r.Server.Response.Entries))
		for i, e := range r.Server.Response.Entries {
			resp.Entries[i] = protobufEntry(e)
		}
	}
	return out
}

// protobufBatch is b as the Protobuf maps carry it.
func protobufBatch(b codec.BatchResult) codec.BatchResult {
	n := len(b.Steps)
	for n > 0 && b.Steps[n-1].Status == codec.StepSkipped {
		n--
	}
	return codec.BatchResult{Steps: b.Steps[:n]}
}

// protobufEntry is e as a Protobuf CursorEntry carries it.
func protobufEntry(e codec.CursorEntry) codec.CursorEntry {
	if e.Type == codec.EntryReplicationIndex && !e.HasReplicationIndex {
		return codec.CursorEntry{}
	}
	return e
}

// ProtobufFixtures returns the Protobuf form of every fixture that decodes:
// named "protobuf/" + the fixture's name, with ProtobufInput of its
// expected result as input and ProtobufWant of it as the expectation. The
// inputs that must fail are JSON-specific and have no Protobuf form. The
// server messages of a hrana3-protobuf session captured from sqld
// ("protobuf/sqld/...") follow.
func ProtobufFixtures() []Fixture {
	var out []Fixture
	for _, f := range Fixtures() {
		if f.Fail {
			continue
		}
		out = append(out, Fixture{
			Name:  "protobuf/" + f.Name,
			Kind:  f.Kind,
			Input: ProtobufInput(&f.Want),
			Want:  ProtobufWant(f.Want),
			Rule:  f.Rule,
		})
	}
	return append(out, sqldProtobufFixtures()...)
}
