package codectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// EncodeCase is a request with the JSON every codec must encode it to, or
// the promise that encoding fails.
type EncodeCase struct {
	Name     string
	Pipeline *codec.PipelineRequest // one of Pipeline, Cursor, Socket and Hello is set
	Cursor   *codec.CursorRequest
	Socket   *codec.SocketRequest // a socket's request message
	Hello    *string              // a socket's hello message, with this JWT
	// Want is the expected JSON. It is compared with JSONDiff: member
	// order and the spelling of numbers are free, strings and the value of
	// numbers are not.
	Want  string
	Fail  bool  // encoding must fail with a *codec.EncodeError
	ErrIs error // when Fail and not nil, the error must wrap it
	Rule  string
}

// Encode encodes the request of ec with c, appending to dst. A socket
// message needs c to be a codec.SocketCodec.
func (ec *EncodeCase) Encode(c codec.Codec, dst []byte) ([]byte, error) {
	switch {
	case ec.Cursor != nil:
		return c.AppendCursorRequest(dst, ec.Cursor)
	case ec.Socket != nil || ec.Hello != nil:
		sc, ok := c.(codec.SocketCodec)
		if !ok {
			return dst, fmt.Errorf("codectest: codec %s encodes no socket messages", c.Name())
		}
		if ec.Hello != nil {
			return sc.AppendHello(dst, *ec.Hello)
		}
		return sc.AppendSocketRequest(dst, ec.Socket)
	}
	return c.AppendPipelineRequest(dst, ec.Pipeline)
}

// ClientMsg returns the socket message of ec (nil for other requests).
func (ec *EncodeCase) ClientMsg() *ClientMsg {
	switch {
	case ec.Hello != nil:
		return &ClientMsg{Hello: true, JWT: *ec.Hello}
	case ec.Socket != nil:
		return &ClientMsg{Request: *ec.Socket}
	}
	return nil
}

// Values used by the encode cases and the round trip.
func encodeValues() []codec.Value {
	return []codec.Value{
		vN(),
		vI(0), vI(1), vI(-1), vI(math.MaxInt64), vI(math.MinInt64),
		vF(0), vF(math.Copysign(0, -1)), vF(1), vF(-2.5), vF(0.1), vF(1e308), vF(math.MaxFloat64),
		vF(5e-324), vF(2.2250738585072014e-308), vF(1e21), vF(1e20), vF(1e-7), vF(123456789.125), vF(math.Pi),
		vT(""), vT("héllo"), vT("\x00\"\\/\b\f\n\r\t\x01\x1f\x7f"), vT("😀𝄞"), vT("\u2028\u2029<>&"), vT("\ufffd"),
		vB(), vB(0xab), vB(0xfb, 0xff), vB(0, 1, 2), allBytes(),
	}
}

func allBytes() codec.Value {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return vB(b...)
}

// encodeValuesJSON is encodeValues as the wire carries them.
const encodeValuesJSON = `[{"type":"null"},
	{"type":"integer","value":"0"},{"type":"integer","value":"1"},{"type":"integer","value":"-1"},
	{"type":"integer","value":"9223372036854775807"},{"type":"integer","value":"-9223372036854775808"},
	{"type":"float","value":0.0},{"type":"float","value":-0.0},{"type":"float","value":1.0},{"type":"float","value":-2.5},
	{"type":"float","value":0.1},{"type":"float","value":1e308},{"type":"float","value":1.7976931348623157e308},
	{"type":"float","value":5e-324},{"type":"float","value":2.2250738585072014e-308},{"type":"float","value":1e21},
	{"type":"float","value":1e20},{"type":"float","value":1e-7},{"type":"float","value":123456789.125},
	{"type":"float","value":3.141592653589793},
	{"type":"text","value":""},{"type":"text","value":"héllo"},{"type":"text","value":"\u0000\"\\/\b\f\n\r\t\u0001\u001f\u007f"},
	{"type":"text","value":"\ud83d\ude00\ud834\udd1e"},{"type":"text","value":"\u2028\u2029<>&"},{"type":"text","value":"\ufffd"},
	{"type":"blob","base64":""},{"type":"blob","base64":"qw"},{"type":"blob","base64":"+/8"},{"type":"blob","base64":"AAEC"},
	{"type":"blob","base64":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w"}]`

func pipe(baton string, reqs ...codec.StreamRequest) *codec.PipelineRequest {
	if reqs == nil {
		reqs = []codec.StreamRequest{}
	}
	return &codec.PipelineRequest{Baton: baton, Requests: reqs}
}

func execReq(s codec.Stmt) codec.StreamRequest {
	return codec.StreamRequest{Type: codec.RequestExecute, Stmt: s}
}

func batchReq(steps ...codec.BatchStep) codec.StreamRequest {
	return codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: steps}}
}

func wrapReqs(reqs string) string { return `{"baton":null,"requests":[` + reqs + `]}` }

// EncodeCases returns the encode cases, a new copy on every call.
func EncodeCases() []EncodeCase {
	const (
		ruleEnc     = "encoding: integers as decimal strings, blobs as unpadded std base64, floats round-trip, empty args and named_args omitted"
		ruleEncFail = "NaN and ±Inf floats, and text that is not valid UTF-8, are rejected with an *EncodeError"
		ruleShape   = "the request shapes of the Hrana 3 spec (hrana.md §3-§8)"
	)
	ok := func(name, rule string, p *codec.PipelineRequest, want string) EncodeCase {
		return EncodeCase{Name: name, Pipeline: p, Want: want, Rule: rule}
	}
	cur := func(name, rule string, c *codec.CursorRequest, want string) EncodeCase {
		return EncodeCase{Name: name, Cursor: c, Want: want, Rule: rule}
	}
	fail := func(name string, p *codec.PipelineRequest, errIs error) EncodeCase {
		return EncodeCase{Name: name, Pipeline: p, Fail: true, ErrIs: errIs, Rule: ruleEncFail}
	}
	failCur := func(name string, c *codec.CursorRequest, errIs error) EncodeCase {
		return EncodeCase{Name: name, Cursor: c, Fail: true, ErrIs: errIs, Rule: ruleEncFail}
	}
	sel := codec.Stmt{SQL: "select 1", WantRows: true}
	badText := codec.Value{Type: codec.Text, Bytes: []byte("a\xffb")}
	nan := vF(math.NaN())
	inArgs := func(v codec.Value) *codec.PipelineRequest {
		return pipe("", execReq(codec.Stmt{SQL: "select ?", Args: []codec.Value{v}}))
	}
	inNamed := func(v codec.Value) *codec.PipelineRequest {
		return pipe("", execReq(codec.Stmt{SQL: "select :a", NamedArgs: []codec.NamedArg{{Name: ":a", Value: v}}}))
	}
	inBatch := func(v codec.Value) *codec.PipelineRequest {
		return pipe("", batchReq(codec.BatchStep{Stmt: sel}, codec.BatchStep{Stmt: codec.Stmt{SQL: "select ?", Args: []codec.Value{v}}}))
	}
	inCursor := func(v codec.Value) *codec.CursorRequest {
		return &codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "select ?", Args: []codec.Value{v}}}}}}
	}
	condStmt := func(c *codec.BatchCond) *codec.PipelineRequest {
		return pipe("", batchReq(codec.BatchStep{Condition: c, Stmt: sel}))
	}
	condWant := func(c string) string {
		return wrapReqs(`{"type":"batch","batch":{"steps":[{"condition":` + c + `,"stmt":{"sql":"select 1","want_rows":true}}]}}`)
	}
	cases := []EncodeCase{
		ok("empty", ruleShape, pipe(""), `{"baton":null,"requests":[]}`),
		ok("empty-nil-requests", ruleShape, &codec.PipelineRequest{}, `{"baton":null,"requests":[]}`),
		ok("baton-close", ruleShape, pipe("b+/x", codec.StreamRequest{Type: codec.RequestClose}), `{"baton":"b+/x","requests":[{"type":"close"}]}`),
		ok("execute", ruleShape, pipe("", execReq(sel)), wrapReqs(`{"type":"execute","stmt":{"sql":"select 1","want_rows":true}}`)),
		ok("execute-want-rows-false", ruleShape, pipe("", execReq(codec.Stmt{SQL: "delete from t"})), wrapReqs(`{"type":"execute","stmt":{"sql":"delete from t","want_rows":false}}`)),
		ok("execute-empty-sql", ruleShape, pipe("", execReq(codec.Stmt{})), wrapReqs(`{"type":"execute","stmt":{"sql":"","want_rows":false}}`)),
		ok("execute-sql-escapes", ruleShape, pipe("", execReq(codec.Stmt{SQL: "select '\"\\\n\t\x00<>&é😀'", WantRows: true})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"select '\"\\\n\t\u0000<>&é😀'","want_rows":true}}`)),
		ok("execute-sql-id", ruleShape, pipe("", execReq(codec.Stmt{SQL: "ignored", SQLID: 7, HasSQLID: true, WantRows: true})),
			wrapReqs(`{"type":"execute","stmt":{"sql_id":7,"want_rows":true}}`)),
		ok("execute-sql-id-zero", ruleShape, pipe("", execReq(codec.Stmt{HasSQLID: true})), wrapReqs(`{"type":"execute","stmt":{"sql_id":0,"want_rows":false}}`)),
		ok("execute-sql-id-negative", ruleShape, pipe("", execReq(codec.Stmt{SQLID: math.MinInt32, HasSQLID: true})), wrapReqs(`{"type":"execute","stmt":{"sql_id":-2147483648,"want_rows":false}}`)),
		ok("execute-empty-args-omitted", ruleEnc, pipe("", execReq(codec.Stmt{SQL: "select 1", Args: []codec.Value{}, NamedArgs: []codec.NamedArg{}, WantRows: true})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"select 1","want_rows":true}}`)),
		ok("execute-all-values", ruleEnc, pipe("", execReq(codec.Stmt{SQL: "select", Args: encodeValues(), WantRows: true})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"select","args":`+encodeValuesJSON+`,"want_rows":true}}`)),
		ok("execute-named-args", ruleEnc, pipe("", execReq(codec.Stmt{SQL: "select :a, @b, $c", NamedArgs: []codec.NamedArg{
			{Name: ":a", Value: vI(1)}, {Name: "@b", Value: vT("x")}, {Name: "$c", Value: vN()}, {Name: "é", Value: vB(1)}}, WantRows: true})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"select :a, @b, $c","named_args":[{"name":":a","value":{"type":"integer","value":"1"}},{"name":"@b","value":{"type":"text","value":"x"}},{"name":"$c","value":{"type":"null"}},{"name":"é","value":{"type":"blob","base64":"AQ"}}],"want_rows":true}}`)),
		ok("execute-both-args", ruleEnc, pipe("", execReq(codec.Stmt{SQL: "s", Args: []codec.Value{vI(1)}, NamedArgs: []codec.NamedArg{{Name: ":a", Value: vI(2)}}})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"s","args":[{"type":"integer","value":"1"}],"named_args":[{"name":":a","value":{"type":"integer","value":"2"}}],"want_rows":false}}`)),
		ok("batch-empty", ruleShape, pipe("", batchReq()), wrapReqs(`{"type":"batch","batch":{"steps":[]}}`)),
		ok("batch", ruleShape, pipe("", batchReq(
			codec.BatchStep{Stmt: codec.Stmt{SQL: "begin"}},
			codec.BatchStep{Condition: &codec.BatchCond{Type: codec.CondOK, Step: 0}, Stmt: codec.Stmt{SQL: "insert", Args: []codec.Value{vI(5)}}},
			codec.BatchStep{Condition: &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{
				{Type: codec.CondOK, Step: 1}, {Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondIsAutocommit}}}}, Stmt: codec.Stmt{SQL: "commit"}},
			codec.BatchStep{Condition: &codec.BatchCond{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondOK, Step: 2}}, Stmt: codec.Stmt{SQL: "rollback"}},
		)), wrapReqs(`{"type":"batch","batch":{"steps":[
			{"stmt":{"sql":"begin","want_rows":false}},
			{"condition":{"type":"ok","step":0},"stmt":{"sql":"insert","args":[{"type":"integer","value":"5"}],"want_rows":false}},
			{"condition":{"type":"and","conds":[{"type":"ok","step":1},{"type":"not","cond":{"type":"is_autocommit"}}]},"stmt":{"sql":"commit","want_rows":false}},
			{"condition":{"type":"not","cond":{"type":"ok","step":2}},"stmt":{"sql":"rollback","want_rows":false}}]}}`)),
		ok("cond-ok", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondOK, Step: 4294967295}), condWant(`{"type":"ok","step":4294967295}`)),
		ok("cond-error", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondError, Step: 3}), condWant(`{"type":"error","step":3}`)),
		ok("cond-error-step-zero", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondError}), condWant(`{"type":"error","step":0}`)),
		ok("cond-and-empty", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondAnd}), condWant(`{"type":"and","conds":[]}`)),
		ok("cond-or-empty", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondOr, Conds: []codec.BatchCond{}}), condWant(`{"type":"or","conds":[]}`)),
		ok("cond-or", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondOr, Conds: []codec.BatchCond{{Type: codec.CondError, Step: 1}, {Type: codec.CondIsAutocommit}}}),
			condWant(`{"type":"or","conds":[{"type":"error","step":1},{"type":"is_autocommit"}]}`)),
		ok("cond-is-autocommit", ruleShape, condStmt(&codec.BatchCond{Type: codec.CondIsAutocommit}), condWant(`{"type":"is_autocommit"}`)),
		ok("sequence", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestSequence, SQL: "select 1; select 2"}), wrapReqs(`{"type":"sequence","sql":"select 1; select 2"}`)),
		ok("sequence-empty", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestSequence}), wrapReqs(`{"type":"sequence","sql":""}`)),
		ok("describe", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestDescribe, SQL: "select ?"}), wrapReqs(`{"type":"describe","sql":"select ?"}`)),
		ok("store-sql", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestStoreSQL, SQL: "select 42", SQLID: 1}), wrapReqs(`{"type":"store_sql","sql_id":1,"sql":"select 42"}`)),
		ok("close-sql", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestCloseSQL, SQLID: -3}), wrapReqs(`{"type":"close_sql","sql_id":-3}`)),
		ok("get-autocommit", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestGetAutocommit}), wrapReqs(`{"type":"get_autocommit"}`)),
		ok("typical", ruleShape, pipe("BATON", execReq(codec.Stmt{SQL: "commit"}), codec.StreamRequest{Type: codec.RequestGetAutocommit}, codec.StreamRequest{Type: codec.RequestClose}),
			`{"baton":"BATON","requests":[{"type":"execute","stmt":{"sql":"commit","want_rows":false}},{"type":"get_autocommit"},{"type":"close"}]}`),
		cur("cursor", ruleShape, &codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: sel}, {Condition: &codec.BatchCond{Type: codec.CondOK}, Stmt: codec.Stmt{SQL: "select ?", Args: []codec.Value{vF(1.5)}}}}}},
			`{"baton":null,"batch":{"steps":[{"stmt":{"sql":"select 1","want_rows":true}},{"condition":{"type":"ok","step":0},"stmt":{"sql":"select ?","args":[{"type":"float","value":1.5}],"want_rows":false}}]}}`),
		cur("cursor-baton-empty-batch", ruleShape, &codec.CursorRequest{Baton: "b"}, `{"baton":"b","batch":{"steps":[]}}`),
		ok("execute-replication-index", ruleShape, pipe("", execReq(codec.Stmt{SQL: "select 1", WantRows: true, ReplicationIndex: 18446744073709551615})),
			wrapReqs(`{"type":"execute","stmt":{"sql":"select 1","replication_index":"18446744073709551615","want_rows":true}}`)),
		ok("batch-replication-index", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{
			Steps: []codec.BatchStep{{Stmt: sel}}, ReplicationIndex: 42}}),
			wrapReqs(`{"type":"batch","batch":{"steps":[{"stmt":{"sql":"select 1","want_rows":true}}],"replication_index":"42"}}`)),
		ok("sequence-replication-index", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestSequence, SQL: "select 1", ReplicationIndex: 7}),
			wrapReqs(`{"type":"sequence","sql":"select 1","replication_index":"7"}`)),
		ok("describe-replication-index", ruleShape, pipe("", codec.StreamRequest{Type: codec.RequestDescribe, SQL: "select 1", ReplicationIndex: 1}),
			wrapReqs(`{"type":"describe","sql":"select 1","replication_index":"1"}`)),
		cur("cursor-replication-index", ruleShape, &codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: sel}}, ReplicationIndex: 3845}},
			`{"baton":null,"batch":{"steps":[{"stmt":{"sql":"select 1","want_rows":true}}],"replication_index":"3845"}}`),

		fail("nan-arg", inArgs(nan), nil),
		fail("inf-arg", inArgs(vF(math.Inf(1))), nil),
		fail("neg-inf-arg", inArgs(vF(math.Inf(-1))), nil),
		fail("nan-named-arg", inNamed(nan), nil),
		fail("inf-in-batch", inBatch(vF(math.Inf(1))), nil),
		failCur("nan-in-cursor", inCursor(nan), nil),
		fail("utf8-text-arg", inArgs(badText), codec.ErrInvalidUTF8),
		fail("utf8-text-named-arg", inNamed(badText), codec.ErrInvalidUTF8),
		fail("utf8-text-in-batch", inBatch(badText), codec.ErrInvalidUTF8),
		failCur("utf8-text-in-cursor", inCursor(badText), codec.ErrInvalidUTF8),
		fail("utf8-text-surrogate", inArgs(codec.Value{Type: codec.Text, Bytes: []byte("\xed\xa0\x80")}), codec.ErrInvalidUTF8),
		fail("utf8-sql", pipe("", execReq(codec.Stmt{SQL: "select '\xff'"})), codec.ErrInvalidUTF8),
		fail("utf8-sql-in-batch", pipe("", batchReq(codec.BatchStep{Stmt: codec.Stmt{SQL: "\xc0\x80"}})), codec.ErrInvalidUTF8),
		fail("utf8-sequence", pipe("", codec.StreamRequest{Type: codec.RequestSequence, SQL: "\xff"}), codec.ErrInvalidUTF8),
		fail("utf8-describe", pipe("", codec.StreamRequest{Type: codec.RequestDescribe, SQL: "\xff"}), codec.ErrInvalidUTF8),
		fail("utf8-store-sql", pipe("", codec.StreamRequest{Type: codec.RequestStoreSQL, SQL: "\xff"}), codec.ErrInvalidUTF8),
		fail("utf8-arg-name", pipe("", execReq(codec.Stmt{SQL: "s", NamedArgs: []codec.NamedArg{{Name: ":\xff", Value: vN()}}})), codec.ErrInvalidUTF8),
		fail("utf8-baton", pipe("\xff", codec.StreamRequest{Type: codec.RequestClose}), codec.ErrInvalidUTF8),
		failCur("utf8-cursor-baton", &codec.CursorRequest{Baton: "\xff"}, codec.ErrInvalidUTF8),
		fail("unknown-request-type", pipe("", codec.StreamRequest{Type: codec.RequestUnknown}), nil),
		fail("bad-request-type", pipe("", codec.StreamRequest{Type: 200}), nil),
		fail("unknown-value-type", inArgs(codec.Value{Type: 9}), nil),
		fail("unknown-cond-type", condStmt(&codec.BatchCond{Type: 0}), nil),
		fail("bad-cond-type", condStmt(&codec.BatchCond{Type: 99}), nil),
		fail("nested-bad-cond-type", condStmt(&codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{{Type: codec.CondOK}, {Type: 42}}}), nil),
		fail("not-without-cond", condStmt(&codec.BatchCond{Type: codec.CondNot}), nil),
	}
	return append(cases, socketEncodeCases()...)
}

// JSONDiff compares got with the JSON want: objects as sets of members
// (a repeated member name in either is a difference), arrays in order,
// strings exactly, numbers by float64 value (bit pattern, so -0 differs from
// 0). It returns "" when they are equal and a description of the first
// difference otherwise.
func JSONDiff(got, want []byte) string {
	g, err := parseJSON(got)
	if err != nil {
		return fmt.Sprintf("got is not valid JSON (%v): %s", err, got)
	}
	w, err := parseJSON(want)
	if err != nil {
		return fmt.Sprintf("want is not valid JSON (%v): %s", err, want)
	}
	if d := diffJSON("", g, w); d != "" {
		return d + "\n got: " + string(got) + "\nwant: " + string(want)
	}
	return ""
}

type jsonObject map[string]any

func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func parseJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := jsonObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("repeated member %q", k)
				}
				if obj[k], err = parseJSONValue(dec); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parseJSONValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
	}
	return tok, nil
}

func diffJSON(path string, g, w any) string {
	switch wv := w.(type) {
	case jsonObject:
		gv, ok := g.(jsonObject)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", path, g)
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			gm, gok := gv[k]
			wm, wok := wv[k]
			switch {
			case !gok:
				return fmt.Sprintf("%s/%s: missing", path, k)
			case !wok:
				return fmt.Sprintf("%s/%s: unexpected member", path, k)
			}
			if d := diffJSON(path+"/"+k, gm, wm); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an array", path, g)
		}
		if len(gv) != len(wv) {
			return fmt.Sprintf("%s: got %d elements, want %d", path, len(gv), len(wv))
		}
		for i := range wv {
			if d := diffJSON(path+"/"+strconv.Itoa(i), gv[i], wv[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		gv, ok := g.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: got %v (%T), want the number %v", path, g, g, wv)
		}
		gf, err1 := strconv.ParseFloat(string(gv), 64)
		wf, err2 := strconv.ParseFloat(string(wv), 64)
		if err1 != nil || err2 != nil || math.Float64bits(gf) != math.Float64bits(wf) {
			return fmt.Sprintf("%s: got the number %v, want %v", path, gv, wv)
		}
		return ""
	}
	if g != w {
		return fmt.Sprintf("%s: got %#v, want %#v", path, g, w)
	}
	return ""
}

// FloatToken returns the raw JSON text of the first float argument value
// of the first execute request of an encoded pipeline request, for checks
// of number spelling that JSONDiff ignores.
func FloatToken(encoded []byte) (string, error) {
	var doc struct {
		Requests []struct {
			Stmt struct {
				Args []struct {
					Type  string          `json:"type"`
					Value json.RawMessage `json:"value"`
				} `json:"args"`
			} `json:"stmt"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(encoded, &doc); err != nil {
		return "", err
	}
	for _, r := range doc.Requests {
		for _, a := range r.Stmt.Args {
			if a.Type == "float" {
				return string(a.Value), nil
			}
		}
	}
	return "", fmt.Errorf("no float argument")
}

// ArgsAsResponse turns the args of the first execute request of an encoded
// pipeline request into a pipeline response with one row holding them, so
// that a decoder can read back what an encoder wrote.
func ArgsAsResponse(encoded []byte) ([]byte, error) {
	var doc struct {
		Requests []struct {
			Type string `json:"type"`
			Stmt struct {
				Args []json.RawMessage `json:"args"`
			} `json:"stmt"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(encoded, &doc); err != nil {
		return nil, err
	}
	for _, r := range doc.Requests {
		if r.Type != "execute" {
			continue
		}
		var b bytes.Buffer
		b.WriteString(`{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[`)
		for i := range r.Stmt.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"c%d","decltype":null}`, i)
		}
		b.WriteString(`],"rows":[[`)
		b.Write(bytes.Join(asBytes(r.Stmt.Args), []byte(",")))
		b.WriteString(`]],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}}}]}`)
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("no execute request")
}

func asBytes(raws []json.RawMessage) [][]byte {
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}
