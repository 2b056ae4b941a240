package direct

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

func execReq(s codec.Stmt) codec.StreamRequest {
	return codec.StreamRequest{Type: codec.RequestExecute, Stmt: s}
}

func TestEncodePipeline(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  codec.PipelineRequest
		want string
	}{
		{"empty", codec.PipelineRequest{}, `{"baton":null,"requests":[]}`},
		{"baton", codec.PipelineRequest{Baton: `a"b\c/+`}, `{"baton":"a\"b\\c/+","requests":[]}`},
		{"simple types", codec.PipelineRequest{Requests: []codec.StreamRequest{
			{Type: codec.RequestClose},
			{Type: codec.RequestGetAutocommit},
			{Type: codec.RequestSequence, SQL: "create table t(a); insert into t values (1)"},
			{Type: codec.RequestDescribe, SQL: "select ?"},
			{Type: codec.RequestStoreSQL, SQLID: 7, SQL: "select 1"},
			{Type: codec.RequestCloseSQL, SQLID: -2147483648},
		}}, `{"baton":null,"requests":[{"type":"close"},{"type":"get_autocommit"},{"type":"sequence","sql":"create table t(a); insert into t values (1)"},{"type":"describe","sql":"select ?"},{"type":"store_sql","sql_id":7,"sql":"select 1"},{"type":"close_sql","sql_id":-2147483648}]}`},
		{"stmt", codec.PipelineRequest{Baton: "b", Requests: []codec.StreamRequest{
			execReq(codec.Stmt{SQL: "select 1"}),
			execReq(codec.Stmt{SQL: "select 1", WantRows: true, Args: []codec.Value{}, NamedArgs: []codec.NamedArg{}}),
			execReq(codec.Stmt{SQL: "ignored", SQLID: 3, HasSQLID: true, WantRows: true}),
			execReq(codec.Stmt{SQL: "select ?, ?", Args: []codec.Value{codec.IntValue(1), codec.NullValue()}}),
			execReq(codec.Stmt{SQL: "select :a, $b", NamedArgs: []codec.NamedArg{{Name: ":a", Value: codec.StringValue("x")}, {Name: "$b", Value: codec.FloatValue(0.5)}}}),
		}}, `{"baton":"b","requests":[` +
			`{"type":"execute","stmt":{"sql":"select 1","want_rows":false}},` +
			`{"type":"execute","stmt":{"sql":"select 1","want_rows":true}},` +
			`{"type":"execute","stmt":{"sql_id":3,"want_rows":true}},` +
			`{"type":"execute","stmt":{"sql":"select ?, ?","args":[{"type":"integer","value":"1"},{"type":"null"}],"want_rows":false}},` +
			`{"type":"execute","stmt":{"sql":"select :a, $b","named_args":[{"name":":a","value":{"type":"text","value":"x"}},{"name":"$b","value":{"type":"float","value":0.5}}],"want_rows":false}}]}`},
		{"batch", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Stmt: codec.Stmt{SQL: "begin"}},
			{Condition: &codec.BatchCond{Type: codec.CondOK, Step: 0}, Stmt: codec.Stmt{SQL: "a"}},
			{Condition: &codec.BatchCond{Type: codec.CondError, Step: 4294967295}, Stmt: codec.Stmt{SQL: "b"}},
			{Condition: &codec.BatchCond{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondIsAutocommit}}, Stmt: codec.Stmt{SQL: "c"}},
			{Condition: &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{{Type: codec.CondOK, Step: 1}, {Type: codec.CondOr}}}, Stmt: codec.Stmt{SQL: "d"}},
			{Condition: &codec.BatchCond{Type: codec.CondOr, Conds: []codec.BatchCond{}}, Stmt: codec.Stmt{SQL: "e"}},
			{Condition: &codec.BatchCond{Type: codec.CondAnd}, Stmt: codec.Stmt{SQL: "f"}},
		}}}, {Type: codec.RequestBatch}}}, `{"baton":null,"requests":[{"type":"batch","batch":{"steps":[` +
			`{"stmt":{"sql":"begin","want_rows":false}},` +
			`{"condition":{"type":"ok","step":0},"stmt":{"sql":"a","want_rows":false}},` +
			`{"condition":{"type":"error","step":4294967295},"stmt":{"sql":"b","want_rows":false}},` +
			`{"condition":{"type":"not","cond":{"type":"is_autocommit"}},"stmt":{"sql":"c","want_rows":false}},` +
			`{"condition":{"type":"and","conds":[{"type":"ok","step":1},{"type":"or","conds":[]}]},"stmt":{"sql":"d","want_rows":false}},` +
			`{"condition":{"type":"or","conds":[]},"stmt":{"sql":"e","want_rows":false}},` +
			`{"condition":{"type":"and","conds":[]},"stmt":{"sql":"f","want_rows":false}}]}},` +
			`{"type":"batch","batch":{"steps":[]}}]}`},
	} {
		prefix := []byte("prefix")
		got, err := Codec.AppendPipelineRequest(prefix, &tc.req)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.HasPrefix(string(got), "prefix") {
			t.Errorf("%s: prefix lost", tc.name)
		}
		got = got[len("prefix"):]
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: invalid JSON", tc.name)
		}
	}
}

func TestEncodeCursor(t *testing.T) {
	req := codec.CursorRequest{Baton: "b", Batch: codec.Batch{Steps: []codec.BatchStep{
		{Stmt: codec.Stmt{SQL: "select 1", WantRows: true}},
		{Condition: &codec.BatchCond{Type: codec.CondOK}, Stmt: codec.Stmt{SQLID: 1, HasSQLID: true}},
	}}}
	got, err := Codec.AppendCursorRequest(nil, &req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"baton":"b","batch":{"steps":[{"stmt":{"sql":"select 1","want_rows":true}},{"condition":{"type":"ok","step":0},"stmt":{"sql_id":1,"want_rows":false}}]}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got, err = Codec.AppendCursorRequest(nil, &codec.CursorRequest{})
	if err != nil || string(got) != `{"baton":null,"batch":{"steps":[]}}` {
		t.Errorf("empty: %s %v", got, err)
	}
}

func TestEncodeValues(t *testing.T) {
	for _, tc := range []struct {
		v    codec.Value
		want string
	}{
		{codec.NullValue(), `{"type":"null"}`},
		{codec.IntValue(0), `{"type":"integer","value":"0"}`},
		{codec.IntValue(math.MaxInt64), `{"type":"integer","value":"9223372036854775807"}`},
		{codec.IntValue(math.MinInt64), `{"type":"integer","value":"-9223372036854775808"}`},
		{codec.FloatValue(1.5), `{"type":"float","value":1.5}`},
		{codec.FloatValue(1), `{"type":"float","value":1.0}`},
		{codec.FloatValue(0), `{"type":"float","value":0.0}`},
		{codec.FloatValue(math.Copysign(0, -1)), `{"type":"float","value":-0.0}`},
		{codec.FloatValue(-2), `{"type":"float","value":-2.0}`},
		{codec.FloatValue(123456), `{"type":"float","value":123456.0}`},
		{codec.FloatValue(1234567), `{"type":"float","value":1.234567e+06}`},
		{codec.FloatValue(1e21), `{"type":"float","value":1e+21}`},
		{codec.FloatValue(1e-7), `{"type":"float","value":1e-07}`},
		{codec.FloatValue(0.1), `{"type":"float","value":0.1}`},
		{codec.FloatValue(1.0 / 3), `{"type":"float","value":0.3333333333333333}`},
		{codec.FloatValue(math.MaxFloat64), `{"type":"float","value":1.7976931348623157e+308}`},
		{codec.FloatValue(math.SmallestNonzeroFloat64), `{"type":"float","value":5e-324}`},
		{codec.StringValue(""), `{"type":"text","value":""}`},
		{codec.TextValue(nil), `{"type":"text","value":""}`},
		{codec.StringValue("héllo 😀 \u2028\u2029 <>&'"), `{"type":"text","value":"héllo 😀 ` + "\u2028\u2029" + ` <>&'"}`},
		{codec.StringValue("\"\\/\b\f\n\r\t\x00\x01\x1f\x7f"), `{"type":"text","value":"\"\\/\b\f\n\r\t\u0000\u0001\u001f` + "\x7f" + `"}`},
		{codec.BlobValue(nil), `{"type":"blob","base64":""}`},
		{codec.BlobValue([]byte{0xab}), `{"type":"blob","base64":"qw"}`},
		{codec.BlobValue([]byte{0xfb, 0xff}), `{"type":"blob","base64":"+/8"}`},
		{codec.BlobValue([]byte{0, 1, 2}), `{"type":"blob","base64":"AAEC"}`},
	} {
		got, err := appendValue(nil, &tc.v)
		if err != nil {
			t.Errorf("%v: %v", tc.v, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.v, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("%v: invalid JSON %s", tc.v, got)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	loop := &codec.BatchCond{Type: codec.CondNot}
	loop.Cond = loop
	for _, tc := range []struct {
		name string
		req  codec.PipelineRequest
		msg  string // expected start of EncodeError.Msg
		utf8 bool   // wraps ErrInvalidUTF8
	}{
		{"NaN", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestClose}, execReq(codec.Stmt{Args: []codec.Value{codec.IntValue(1), codec.FloatValue(math.NaN())}})}},
			"requests[1].stmt.args[1]: float NaN", false},
		{"+Inf", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{Args: []codec.Value{codec.FloatValue(math.Inf(1))}})}}, "requests[0].stmt.args[0]: float +Inf", false},
		{"-Inf", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{NamedArgs: []codec.NamedArg{{Name: ":a", Value: codec.FloatValue(math.Inf(-1))}}})}}, "requests[0].stmt.named_args[0].value: float -Inf", false},
		{"text", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{Args: []codec.Value{codec.TextValue([]byte("a\xffb"))}})}}, "requests[0].stmt.args[0]: text value is not valid UTF-8", true},
		{"surrogate", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{Args: []codec.Value{codec.TextValue([]byte("\xed\xa0\x80"))}})}}, "requests[0].stmt.args[0]: text", true},
		{"sql", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{SQL: "select '\xc3'"})}}, "requests[0].stmt: sql is not valid UTF-8", true},
		{"sequence", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestSequence, SQL: "\x80"}}}, "requests[0]: sql", true},
		{"describe", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestDescribe, SQL: "\x80"}}}, "requests[0]: sql", true},
		{"store_sql", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestStoreSQL, SQL: "\x80"}}}, "requests[0]: sql", true},
		{"name", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{NamedArgs: []codec.NamedArg{{Name: ":\xff"}}})}}, "requests[0].stmt.named_args[0]: name", true},
		{"baton", codec.PipelineRequest{Baton: "\xff"}, "baton is not valid UTF-8", true},
		{"value type", codec.PipelineRequest{Requests: []codec.StreamRequest{execReq(codec.Stmt{Args: []codec.Value{{Type: 9}}})}}, "requests[0].stmt.args[0]: unknown value type 9", false},
		{"request type", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestUnknown}}}, "requests[0]: unknown stream request type 0", false},
		{"request type 99", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: 99}}}, "requests[0]: unknown stream request type 99", false},
		{"cond type", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{}, {Condition: &codec.BatchCond{}}}}}}}, "requests[0].batch.steps[1].condition: unknown batch condition type 0", false},
		{"not nil", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{Condition: &codec.BatchCond{Type: codec.CondNot}}}}}}}, "requests[0].batch.steps[0].condition: \"not\" condition without an operand", false},
		{"cycle", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{Condition: loop}}}}}}, "requests[0].batch.steps[0].condition: batch condition nested too deeply", false},
		{"step stmt", codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{Args: []codec.Value{codec.FloatValue(math.NaN())}}}}}}}}, "requests[0].batch.steps[0].stmt.args[0]: float NaN", false},
	} {
		dst := []byte("keep")
		out, err := Codec.AppendPipelineRequest(dst, &tc.req)
		var ee *codec.EncodeError
		if !errors.As(err, &ee) {
			t.Errorf("%s: error %v is not an *codec.EncodeError", tc.name, err)
			continue
		}
		if ee.Codec != "direct" || !strings.HasPrefix(ee.Msg, tc.msg) {
			t.Errorf("%s: got %q (codec %q), want message starting with %q", tc.name, ee.Msg, ee.Codec, tc.msg)
		}
		if errors.Is(err, codec.ErrInvalidUTF8) != tc.utf8 {
			t.Errorf("%s: errors.Is(ErrInvalidUTF8) = %v", tc.name, !tc.utf8)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst not restored: %q", tc.name, out)
		}
	}

	_, err := Codec.AppendCursorRequest(nil, &codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{Args: []codec.Value{codec.FloatValue(math.NaN())}}}}}})
	var ee *codec.EncodeError
	if !errors.As(err, &ee) || ee.Msg != "batch.steps[0].stmt.args[0]: float NaN cannot be sent as JSON" {
		t.Errorf("cursor: %v", err)
	}
	if _, err := Codec.AppendCursorRequest(nil, &codec.CursorRequest{Baton: "\xff"}); !errors.Is(err, codec.ErrInvalidUTF8) {
		t.Errorf("cursor baton: %v", err)
	}
	if _, err := Codec.AppendPipelineRequest(nil, nil); !errors.As(err, &ee) {
		t.Errorf("nil pipeline request: %v", err)
	}
	if _, err := Codec.AppendCursorRequest(nil, nil); !errors.As(err, &ee) {
		t.Errorf("nil cursor request: %v", err)
	}
}

// TestEncodeStringsRoundTrip checks with encoding/json that strings of
// every kind come back unchanged.
func TestEncodeStringsRoundTrip(t *testing.T) {
	var all []byte
	for c := 0; c < 0x80; c++ {
		all = append(all, byte(c))
	}
	all = append(all, "é€😀\u2028\u2029\ufffd\U0010ffff"...)
	for _, s := range []string{"", string(all), `\u0041`, `"\"`, "a\x00b"} {
		req := codec.PipelineRequest{Baton: s, Requests: []codec.StreamRequest{
			execReq(codec.Stmt{SQL: s, Args: []codec.Value{codec.StringValue(s)}, NamedArgs: []codec.NamedArg{{Name: s, Value: codec.StringValue(s)}}}),
		}}
		out, err := Codec.AppendPipelineRequest(nil, &req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Baton    *string
			Requests []struct {
				Stmt struct {
					SQL       string
					Args      []struct{ Value string }
					NamedArgs []struct {
						Name  string
						Value struct{ Value string }
					} `json:"named_args"`
				}
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q: %v\n%s", s, err, out)
		}
		st := got.Requests[0].Stmt
		wantBaton := s
		if got.Baton == nil {
			if s != "" {
				t.Errorf("%q: baton null", s)
			}
		} else if *got.Baton != wantBaton {
			t.Errorf("%q: baton %q", s, *got.Baton)
		}
		if st.SQL != s || st.Args[0].Value != s || st.NamedArgs[0].Name != s || st.NamedArgs[0].Value.Value != s {
			t.Errorf("%q: got %+v", s, st)
		}
	}
}
