// Package codectest holds what the tests of every codec.Codec share: a table
// of response inputs with the values they must decode to (or the promise
// that they fail), a table of requests with the JSON they must encode to,
// structural comparison of decoded messages, and Conformance, which runs a
// codec through all of it.
//
// A codec's own test calls Conformance:
//
//	func TestConformance(t *testing.T) {
//		codectest.Conformance(t, gojson.Codec)
//	}
//
// and a differential test decodes the same input with two codecs and
// compares the outcomes:
//
//	a := codectest.Decode(gojson.Codec, codectest.KindPipeline, data)
//	b := codectest.Decode(direct.Codec, codectest.KindPipeline, data)
//	if d := codectest.Diff(&a, &b); d != "" {
//		t.Error(d)
//	}
//
// Real responses of sqld 0.24.32 are kept under testdata/sqld and are part
// of the fixtures: HTTP bodies, and the server messages of WebSocket
// sessions (ws.go holds what is particular to those).
//
// A codec that decodes into a reused destination and encodes into a reused
// buffer without allocating, as direct and protobuf do, checks that promise
// on its socket methods with CheckSocketAllocs.
//
// Who imports it: the tests of every codec, this repository's and a codec
// author's own, for Conformance.
package codectest

import (
	"bytes"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// Kind says which decode method of codec.Codec an input is for.
type Kind uint8

// The kinds of input.
const (
	KindPipeline     Kind = iota + 1 // DecodePipelineResponse
	KindCursorHeader                 // DecodeCursorHeader
	KindCursorEntry                  // DecodeCursorEntry
	KindError                        // DecodeError
	KindServerMsg                    // codec.SocketCodec's DecodeServerMsg
)

// Kinds lists every Kind.
var Kinds = []Kind{KindPipeline, KindCursorHeader, KindCursorEntry, KindError, KindServerMsg}

// String returns a short name of the kind.
func (k Kind) String() string {
	switch k {
	case KindPipeline:
		return "pipeline"
	case KindCursorHeader:
		return "header"
	case KindCursorEntry:
		return "entry"
	case KindError:
		return "error"
	case KindServerMsg:
		return "server"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Result is the outcome of decoding one input: the payload that matches
// Kind, or Err.
type Result struct {
	Kind     Kind
	Pipeline codec.PipelineResponse // KindPipeline
	Header   codec.CursorHeader     // KindCursorHeader
	Entry    codec.CursorEntry      // KindCursorEntry
	Error    codec.Error            // KindError
	Server   codec.ServerMsg        // KindServerMsg
	Err      error                  // the decode error, or a *PanicError
}

// PanicError is the Err of a Result whose decoder panicked.
type PanicError struct {
	Value any    // what the decoder panicked with
	Stack []byte // the stack of the panic
}

// Error describes the panic with its stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("decoder panicked: %v\n%s", e.Value, e.Stack)
}

// Decode decodes input with the method of c that kind names, into a fresh
// destination.
func Decode(c codec.Codec, kind Kind, input []byte) Result {
	r := Result{Kind: kind}
	DecodeInto(c, input, &r)
	return r
}

// DecodeInto decodes input into the payload of dst that dst.Kind names,
// keeping whatever dst holds (so that a test can check that decoders reset
// their destination), and sets dst.Err. A panic is recovered into a
// *PanicError.
func DecodeInto(c codec.Codec, input []byte, dst *Result) {
	defer func() {
		if v := recover(); v != nil {
			dst.Err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	switch dst.Kind {
	case KindPipeline:
		dst.Err = c.DecodePipelineResponse(input, &dst.Pipeline)
	case KindCursorHeader:
		dst.Err = c.DecodeCursorHeader(input, &dst.Header)
	case KindCursorEntry:
		dst.Err = c.DecodeCursorEntry(input, &dst.Entry)
	case KindError:
		dst.Err = c.DecodeError(input, &dst.Error)
	case KindServerMsg:
		sc, ok := c.(codec.SocketCodec)
		if !ok {
			dst.Err = fmt.Errorf("codectest: codec %s decodes no server messages", c.Name())
			return
		}
		dst.Err = sc.DecodeServerMsg(input, &dst.Server)
	default:
		dst.Err = fmt.Errorf("codectest: unknown kind %v", dst.Kind)
	}
}

// Diff compares two outcomes: they agree when both failed, or when both
// succeeded with structurally equal payloads of the same kind. It returns ""
// when they agree and a description of the first difference otherwise.
// Error values themselves are not compared, except that a panic never agrees
// with anything.
func Diff(a, b *Result) string {
	if a.Kind != b.Kind {
		return fmt.Sprintf("kind %v != %v", a.Kind, b.Kind)
	}
	var pa, pb *PanicError
	if asPanic(a.Err, &pa) || asPanic(b.Err, &pb) {
		return fmt.Sprintf("panic: %v / %v", a.Err, b.Err)
	}
	switch {
	case a.Err != nil && b.Err != nil:
		return ""
	case a.Err != nil:
		return fmt.Sprintf("first failed (%v), second succeeded", a.Err)
	case b.Err != nil:
		return fmt.Sprintf("first succeeded, second failed (%v)", b.Err)
	}
	switch a.Kind {
	case KindPipeline:
		return DiffPipelineResponse(&a.Pipeline, &b.Pipeline)
	case KindCursorHeader:
		return DiffCursorHeader(&a.Header, &b.Header)
	case KindCursorEntry:
		return DiffCursorEntry(&a.Entry, &b.Entry)
	case KindError:
		return DiffError(&a.Error, &b.Error)
	case KindServerMsg:
		return DiffServerMsg(&a.Server, &b.Server)
	}
	return ""
}

func asPanic(err error, p **PanicError) bool {
	pe, ok := err.(*PanicError)
	*p = pe
	return ok
}

// differ collects the path of the first difference.
type differ struct {
	path []string
	msg  string
}

func (d *differ) at(name string, f func()) {
	if d.msg != "" {
		return
	}
	d.path = append(d.path, name)
	f()
	d.path = d.path[:len(d.path)-1]
}

func (d *differ) fail(format string, args ...any) {
	if d.msg != "" {
		return
	}
	p := ""
	for _, s := range d.path {
		p += "/" + s
	}
	d.msg = p + ": " + fmt.Sprintf(format, args...)
}

func (d *differ) str(name, a, b string) {
	if a != b && d.msg == "" {
		d.at(name, func() { d.fail("%q != %q", a, b) })
	}
}

func (d *differ) num(name string, a, b any) {
	if a != b && d.msg == "" {
		d.at(name, func() { d.fail("%v != %v", a, b) })
	}
}

func (d *differ) length(name string, a, b int) bool {
	if a != b {
		d.at(name, func() { d.fail("length %d != %d", a, b) })
		return false
	}
	return true
}

func (d *differ) pipeline(a, b *codec.PipelineResponse) {
	d.str("baton", a.Baton, b.Baton)
	d.str("base_url", a.BaseURL, b.BaseURL)
	if d.length("results", len(a.Results), len(b.Results)) {
		for i := range a.Results {
			d.at("results/"+strconv.Itoa(i), func() { d.streamResult(&a.Results[i], &b.Results[i]) })
		}
	}
}

func (d *differ) streamResult(a, b *codec.StreamResult) {
	d.num("ok", a.OK, b.OK)
	d.at("error", func() { d.error(&a.Error, &b.Error) })
	d.at("response", func() {
		d.response(a.Response.Type, b.Response.Type, asSocketResponse(&a.Response), asSocketResponse(&b.Response))
	})
}

// asSocketResponse returns the members of r in a SocketResponse, whose
// members include every member of a StreamResponse, so that one comparison
// serves both; Type is left out, its types differ.
func asSocketResponse(r *codec.StreamResponse) *codec.SocketResponse {
	return &codec.SocketResponse{Result: r.Result, Batch: r.Batch, Describe: r.Describe, IsAutocommit: r.IsAutocommit}
}

// response compares two responses of types ta and tb (RequestType or
// SocketRequestType).
func (d *differ) response(ta, tb any, ra, rb *codec.SocketResponse) {
	d.num("type", ta, tb)
	d.at("result", func() { d.stmtResult(&ra.Result, &rb.Result) })
	d.at("batch", func() { d.batch(&ra.Batch, &rb.Batch) })
	d.at("describe", func() { d.describe(&ra.Describe, &rb.Describe) })
	d.num("is_autocommit", ra.IsAutocommit, rb.IsAutocommit)
	if d.length("entries", len(ra.Entries), len(rb.Entries)) {
		for i := range ra.Entries {
			d.at("entries/"+strconv.Itoa(i), func() { d.entry(&ra.Entries[i], &rb.Entries[i]) })
		}
	}
	d.num("done", ra.Done, rb.Done)
}

func (d *differ) serverMsg(a, b *codec.ServerMsg) {
	d.num("type", a.Type, b.Type)
	d.num("request_id", a.RequestID, b.RequestID)
	d.at("error", func() { d.error(&a.Error, &b.Error) })
	d.at("response", func() { d.response(a.Response.Type, b.Response.Type, &a.Response, &b.Response) })
}

func (d *differ) cols(a, b []codec.Col) {
	if d.length("cols", len(a), len(b)) {
		for i := range a {
			d.at("cols/"+strconv.Itoa(i), func() {
				d.str("name", a[i].Name, b[i].Name)
				d.str("decltype", a[i].Decltype, b[i].Decltype)
			})
		}
	}
}

func (d *differ) values(name string, a, b []codec.Value) {
	if d.length(name, len(a), len(b)) {
		for i := range a {
			if !a[i].Equal(b[i]) {
				d.at(name+"/"+strconv.Itoa(i), func() { d.fail("%v (%v) != %v (%v)", a[i], a[i].Type, b[i], b[i].Type) })
				return
			}
		}
	}
}

func (d *differ) stmtResult(a, b *codec.StmtResult) {
	d.cols(a.Cols, b.Cols)
	d.num("num_rows", a.NumRows, b.NumRows)
	d.values("values", a.Values, b.Values)
	d.num("affected_row_count", a.AffectedRowCount, b.AffectedRowCount)
	d.num("last_insert_rowid", a.LastInsertRowID, b.LastInsertRowID)
	d.num("has_last_insert_rowid", a.HasLastInsertRowID, b.HasLastInsertRowID)
	d.num("replication_index", a.ReplicationIndex, b.ReplicationIndex)
	d.num("has_replication_index", a.HasReplicationIndex, b.HasReplicationIndex)
	d.num("rows_read", a.RowsRead, b.RowsRead)
	d.num("rows_written", a.RowsWritten, b.RowsWritten)
	if math.Float64bits(a.QueryDurationMS) != math.Float64bits(b.QueryDurationMS) {
		d.at("query_duration_ms", func() { d.fail("%v != %v", a.QueryDurationMS, b.QueryDurationMS) })
	}
}

func (d *differ) batch(a, b *codec.BatchResult) {
	if d.length("steps", len(a.Steps), len(b.Steps)) {
		for i := range a.Steps {
			d.at("steps/"+strconv.Itoa(i), func() {
				sa, sb := &a.Steps[i], &b.Steps[i]
				d.num("status", sa.Status, sb.Status)
				d.at("result", func() { d.stmtResult(&sa.Result, &sb.Result) })
				d.at("error", func() { d.error(&sa.Error, &sb.Error) })
			})
		}
	}
	d.num("replication_index", a.ReplicationIndex, b.ReplicationIndex)
	d.num("has_replication_index", a.HasReplicationIndex, b.HasReplicationIndex)
}

func (d *differ) describe(a, b *codec.DescribeResult) {
	if d.length("params", len(a.Params), len(b.Params)) {
		for i := range a.Params {
			d.str("params/"+strconv.Itoa(i), a.Params[i].Name, b.Params[i].Name)
		}
	}
	d.cols(a.Cols, b.Cols)
	d.num("is_explain", a.IsExplain, b.IsExplain)
	d.num("is_readonly", a.IsReadonly, b.IsReadonly)
}

func (d *differ) error(a, b *codec.Error) {
	d.str("message", a.Message, b.Message)
	d.str("code", a.Code, b.Code)
}

func (d *differ) header(a, b *codec.CursorHeader) {
	d.str("baton", a.Baton, b.Baton)
	d.str("base_url", a.BaseURL, b.BaseURL)
}

func (d *differ) entry(a, b *codec.CursorEntry) {
	d.num("type", a.Type, b.Type)
	d.num("step", a.Step, b.Step)
	d.cols(a.Cols, b.Cols)
	d.values("row", a.Row, b.Row)
	d.num("affected_row_count", a.AffectedRowCount, b.AffectedRowCount)
	d.num("last_insert_rowid", a.LastInsertRowID, b.LastInsertRowID)
	d.num("has_last_insert_rowid", a.HasLastInsertRowID, b.HasLastInsertRowID)
	d.at("error", func() { d.error(&a.Error, &b.Error) })
	d.num("replication_index", a.ReplicationIndex, b.ReplicationIndex)
	d.num("has_replication_index", a.HasReplicationIndex, b.HasReplicationIndex)
}

// diff compares a and b with one of differ's methods and returns the
// first difference it finds, "" if none: the body of the Diff functions.
func diff[T any](a, b *T, compare func(d *differ, a, b *T)) string {
	var d differ
	compare(&d, a, b)
	return d.msg
}

// DiffPipelineResponse compares two pipeline responses field by field: nil
// and empty slices are equal, values compare with codec.Value.Equal and
// floats by bit pattern. It returns "" when they are equal and the path and
// values of the first difference otherwise.
func DiffPipelineResponse(a, b *codec.PipelineResponse) string { return diff(a, b, (*differ).pipeline) }

// DiffStreamResult compares two stream results like DiffPipelineResponse.
func DiffStreamResult(a, b *codec.StreamResult) string { return diff(a, b, (*differ).streamResult) }

// DiffStmtResult compares two statement results like DiffPipelineResponse.
func DiffStmtResult(a, b *codec.StmtResult) string { return diff(a, b, (*differ).stmtResult) }

// DiffCursorHeader compares two cursor headers.
func DiffCursorHeader(a, b *codec.CursorHeader) string { return diff(a, b, (*differ).header) }

// DiffCursorEntry compares two cursor entries field by field, like
// DiffPipelineResponse.
func DiffCursorEntry(a, b *codec.CursorEntry) string { return diff(a, b, (*differ).entry) }

// DiffServerMsg compares two server messages field by field, like
// DiffPipelineResponse.
func DiffServerMsg(a, b *codec.ServerMsg) string { return diff(a, b, (*differ).serverMsg) }

// DiffError compares two Error objects.
func DiffError(a, b *codec.Error) string { return diff(a, b, (*differ).error) }

// DiffValues compares two lists of values with codec.Value.Equal.
func DiffValues(a, b []codec.Value) string {
	var d differ
	d.values("values", a, b)
	return d.msg
}

// EqualPipelineResponse reports whether DiffPipelineResponse finds no
// difference.
func EqualPipelineResponse(a, b *codec.PipelineResponse) bool {
	return DiffPipelineResponse(a, b) == ""
}

// EqualCursorEntry reports whether DiffCursorEntry finds no difference.
func EqualCursorEntry(a, b *codec.CursorEntry) bool { return DiffCursorEntry(a, b) == "" }

// EqualCursorHeader reports whether DiffCursorHeader finds no difference.
func EqualCursorHeader(a, b *codec.CursorHeader) bool { return DiffCursorHeader(a, b) == "" }

// EqualError reports whether DiffError finds no difference.
func EqualError(a, b *codec.Error) bool { return DiffError(a, b) == "" }

// strings lists every Go string of a result (batons, names, messages, ...),
// which the codec contract says are copies, never views of the input.
func (r *Result) strings() []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	cols := func(cs []codec.Col) {
		for _, c := range cs {
			add(c.Name, c.Decltype)
		}
	}
	results := func(r *codec.StmtResult, b *codec.BatchResult, d *codec.DescribeResult) {
		cols(r.Cols)
		for _, st := range b.Steps {
			cols(st.Result.Cols)
			add(st.Error.Message, st.Error.Code)
		}
		for _, p := range d.Params {
			add(p.Name)
		}
		cols(d.Cols)
	}
	switch r.Kind {
	case KindPipeline:
		add(r.Pipeline.Baton, r.Pipeline.BaseURL)
		for _, sr := range r.Pipeline.Results {
			add(sr.Error.Message, sr.Error.Code)
			results(&sr.Response.Result, &sr.Response.Batch, &sr.Response.Describe)
		}
	case KindCursorHeader:
		add(r.Header.Baton, r.Header.BaseURL)
	case KindCursorEntry:
		cols(r.Entry.Cols)
		add(r.Entry.Error.Message, r.Entry.Error.Code)
	case KindError:
		add(r.Error.Message, r.Error.Code)
	case KindServerMsg:
		m := &r.Server
		add(m.Error.Message, m.Error.Code)
		results(&m.Response.Result, &m.Response.Batch, &m.Response.Describe)
		for _, e := range m.Response.Entries {
			cols(e.Cols)
			add(e.Error.Message, e.Error.Code)
		}
	}
	return out
}

// clone returns a copy of b that shares no memory with it.
func clone(b []byte) []byte { return append([]byte(nil), b...) }

// scribble overwrites b.
func scribble(b []byte) {
	copy(b, bytes.Repeat([]byte{'#'}, len(b)))
}
