package codectest

import (
	"bytes"
	"embed"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// Fixture is one input for a decode method with the outcome every codec
// must give.
type Fixture struct {
	Name  string // unique, usable as a subtest and a file name
	Kind  Kind   // which decode method
	Input []byte
	Fail  bool   // decoding must fail with a *codec.DecodeError
	ErrIs error  // when Fail and not nil, the error must wrap it (errors.Is)
	Want  Result // when !Fail: the decoded payload (Want.Kind == Kind)
	Rule  string // the rule of docs/CODECS.md the fixture exercises, or how an open point is read
}

//go:embed testdata/sqld
var sqldFiles embed.FS

// SQLDFile returns a response body captured from sqld 0.24.32, stored under
// testdata/sqld.
func SQLDFile(name string) []byte {
	b, err := sqldFiles.ReadFile("testdata/sqld/" + name)
	if err != nil {
		panic("codectest: " + err.Error())
	}
	return b
}

// Rules quoted by the fixtures.
const (
	ruleSQLD     = "a real response of sqld 0.24.32"
	ruleObjects  = "objects: fields in any order, unknown fields skipped at any depth, last repeated key wins, null == absent"
	ruleLastWins = "for a repeated key the last one wins, as a whole (objects do not merge)"
	ruleNull     = "a null field is the same as an absent one"
	ruleUnknown  = "unknown fields are skipped at any depth (they must still be valid JSON); names match exactly, case-sensitively, after unescaping"
	ruleWS       = "whitespace is the four JSON whitespace bytes"
	ruleDepth    = "nesting deeper than MaxDepth is an error (the top-level value has depth 1)"
	ruleTrailing = "trailing non-whitespace after the top-level value is an error"
	ruleType     = "a known field with the wrong JSON type is an error"
	ruleUint     = "unsigned fields: an integer literal in range (no fraction, exponent or minus sign) or a string for strconv.ParseUint(s, 10, 64)"
	ruleInt64    = "last_insert_rowid: an int64 literal, or a string for strconv.ParseInt(s, 10, 64)"
	ruleDuration = "query_duration_ms: any JSON number (out of float64 range is an error, as for float values)"
	ruleValue    = "value objects: type required; integer value is a ParseInt string or an int64 literal; float value is a number or null (NaN); text value a string; blob base64 std alphabet, padded or not; null no payload"
	ruleIrrel    = "fields that do not belong to the object's type are ignored whatever their JSON type"
	ruleStrings  = "strings: every JSON escape, surrogate pairs combined, a lone surrogate becomes U+FFFD; raw control bytes are an error"
	ruleUTF8     = "input that is not valid UTF-8 anywhere is an error wrapping ErrInvalidUTF8"
	ruleRowLen   = "each row must have exactly len(cols) values"
	ruleResult   = `a StreamResult needs "type" (ok or error); ok needs "response" with a known "type"; error needs "error"`
	ruleBatch    = "batch: Steps has max(len(step_results), len(step_errors)) entries; a step with both a result and an error is an error"
	ruleEntry    = "cursor entries with an unknown (or absent) type decode as EntryUnknown"
	ruleSyntax   = "the input must be strict JSON (RFC 8259)"
	ruleTop      = "the top-level value must be an object"
	ruleOptional = "the result of an execute, batch or describe response is optional"
	ruleHTTPErr  = `DecodeError: {"message","code"} or {"error"}; "message" wins over "error"`
	ruleBase64   = `blob: if the string ends in "=" the padding must be exact; non-zero trailing bits and line breaks are rejected`
	ruleRepeat   = `every occurrence of a repeated key is decoded and checked as it is read, and the last one wins; a member whose meaning depends on the object's "type" (response, error, result, cursor entry members) is checked as it is read only if the type read so far uses it (response and error: only objects), and of the members the final type uses only the last occurrence counts; value objects use the last occurrence of each member only`
)

type builder struct {
	list  []Fixture
	names map[string]bool
}

func (b *builder) add(f Fixture) {
	if b.names[f.Name] {
		panic("codectest: duplicate fixture " + f.Name)
	}
	b.names[f.Name] = true
	f.Want.Kind = f.Kind
	b.list = append(b.list, f)
}

// ok adds a fixture of kind that must decode to want.
func (b *builder) ok(kind Kind, name, rule, input string, want Result) {
	b.add(Fixture{Name: kind.String() + "/" + name, Kind: kind, Input: []byte(input), Want: want, Rule: rule})
}

// fail adds a fixture of kind that must fail to decode.
func (b *builder) fail(kind Kind, name, rule, input string) {
	b.add(Fixture{Name: kind.String() + "/" + name, Kind: kind, Input: []byte(input), Fail: true, Rule: rule})
}

// The typed forms of ok, one per kind, say which member of Result want is.

func (b *builder) pipe(name, rule, input string, want codec.PipelineResponse) {
	b.ok(KindPipeline, name, rule, input, Result{Pipeline: want})
}

func (b *builder) header(name, rule, input string, want codec.CursorHeader) {
	b.ok(KindCursorHeader, name, rule, input, Result{Header: want})
}

func (b *builder) entry(name, rule, input string, want codec.CursorEntry) {
	b.ok(KindCursorEntry, name, rule, input, Result{Entry: want})
}

func (b *builder) httpErr(name, rule, input string, want codec.Error) {
	b.ok(KindError, name, rule, input, Result{Error: want})
}

// failUTF8 adds a fixture that must fail wrapping codec.ErrInvalidUTF8.
func (b *builder) failUTF8(kind Kind, name string, input []byte) {
	b.add(Fixture{Name: kind.String() + "/" + name, Kind: kind, Input: input, Fail: true, ErrIs: codec.ErrInvalidUTF8, Rule: ruleUTF8})
}

// --- expected values ---

// nullFloat is what {"type":"float","value":null} decodes to: NaN, as
// PROTOCOL.md §8.2 asks (serde writes both infinities as null, so the sign
// is lost and +Inf would be a wrong answer half the time).
var nullFloat = math.NaN()

func vI(n int64) codec.Value             { return codec.IntValue(n) }
func vF(f float64) codec.Value           { return codec.FloatValue(f) }
func vT(s string) codec.Value            { return codec.StringValue(s) }
func vB(b ...byte) codec.Value           { return codec.BlobValue(b) }
func vN() codec.Value                    { return codec.NullValue() }
func row(v ...codec.Value) []codec.Value { return v }

// cols makes columns from name, decltype pairs.
func cols(nameDecl ...string) []codec.Col {
	out := make([]codec.Col, 0, len(nameDecl)/2)
	for i := 0; i+1 < len(nameDecl); i += 2 {
		out = append(out, codec.Col{Name: nameDecl[i], Decltype: nameDecl[i+1]})
	}
	return out
}

func rows(c []codec.Col, rs ...[]codec.Value) codec.StmtResult {
	r := codec.StmtResult{Cols: c, NumRows: len(rs)}
	for _, x := range rs {
		r.Values = append(r.Values, x...)
	}
	return r
}

func resp(results ...codec.StreamResult) codec.PipelineResponse {
	return codec.PipelineResponse{Results: results}
}

func okType(t codec.RequestType) codec.StreamResult {
	return codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: t}}
}

func okExec(r codec.StmtResult) codec.StreamResult {
	sr := okType(codec.RequestExecute)
	sr.Response.Result = r
	return sr
}

func okBatch(b codec.BatchResult) codec.StreamResult {
	sr := okType(codec.RequestBatch)
	sr.Response.Batch = b
	return sr
}

func okDescribe(d codec.DescribeResult) codec.StreamResult {
	sr := okType(codec.RequestDescribe)
	sr.Response.Describe = d
	return sr
}

func okAutocommit(v bool) codec.StreamResult {
	sr := okType(codec.RequestGetAutocommit)
	sr.Response.IsAutocommit = v
	return sr
}

func errRes(msg, code string) codec.StreamResult {
	return codec.StreamResult{Error: codec.Error{Message: msg, Code: code}}
}

func stepOK(r codec.StmtResult) codec.StepOutcome {
	return codec.StepOutcome{Status: codec.StepOK, Result: r}
}

func stepErr(msg, code string) codec.StepOutcome {
	return codec.StepOutcome{Status: codec.StepFailed, Error: codec.Error{Message: msg, Code: code}}
}

var stepSkip = codec.StepOutcome{Status: codec.StepSkipped}

// --- inputs ---

func doc(results ...string) string {
	return `{"baton":null,"base_url":null,"results":[` + strings.Join(results, ",") + `]}`
}

func okResp(response string) string { return `{"type":"ok","response":` + response + `}` }

func execRes(result string) string {
	return okResp(`{"type":"execute","result":` + result + `}`)
}

// resultDoc is a pipeline with one execute result made of fields.
func resultDoc(fields string) string { return doc(execRes("{" + fields + "}")) }

const valueResultTail = `,"affected_row_count":0,"last_insert_rowid":null,"replication_index":null,"rows_read":0,"rows_written":0,"query_duration_ms":0.0`

// valueDoc is a pipeline with one execute result of one column and one row
// holding v.
func valueDoc(v string) string {
	return resultDoc(`"cols":[{"name":"v","decltype":null}],"rows":[[` + v + `]]` + valueResultTail)
}

func valueWant(v codec.Value) codec.PipelineResponse {
	return resp(okExec(rows(cols("v", ""), row(v))))
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func deepObj(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }

// valueCase is a Value object checked both in a pipeline row and in a
// cursor row entry.
type valueCase struct {
	name string
	json string
	want codec.Value
	fail bool
	rule string
}

func valueCases() []valueCase {
	ok := func(name, j string, v codec.Value) valueCase {
		return valueCase{name: name, json: j, want: v, rule: ruleValue}
	}
	okR := func(name, rule, j string, v codec.Value) valueCase {
		return valueCase{name: name, json: j, want: v, rule: rule}
	}
	bad := func(name, j string) valueCase { return valueCase{name: name, json: j, fail: true, rule: ruleValue} }
	badR := func(name, rule, j string) valueCase { return valueCase{name: name, json: j, fail: true, rule: rule} }
	return []valueCase{
		ok("null", `{"type":"null"}`, vN()),
		okR("null-ignores-payload", ruleIrrel, `{"type":"null","value":[1,{"a":null}],"base64":5}`, vN()),

		ok("int-zero", `{"type":"integer","value":"0"}`, vI(0)),
		ok("int-one", `{"type":"integer","value":"1"}`, vI(1)),
		ok("int-negative", `{"type":"integer","value":"-1"}`, vI(-1)),
		ok("int-max", `{"type":"integer","value":"9223372036854775807"}`, vI(math.MaxInt64)),
		ok("int-min", `{"type":"integer","value":"-9223372036854775808"}`, vI(math.MinInt64)),
		ok("int-plus-sign", `{"type":"integer","value":"+5"}`, vI(5)),
		ok("int-string-leading-zeros", `{"type":"integer","value":"007"}`, vI(7)),
		ok("int-string-minus-zero", `{"type":"integer","value":"-0"}`, vI(0)),
		okR("int-string-escaped", ruleStrings, `{"type":"integer","value":"\u0031\u0032"}`, vI(12)),
		ok("int-number", `{"type":"integer","value":42}`, vI(42)),
		ok("int-number-negative", `{"type":"integer","value":-42}`, vI(-42)),
		ok("int-number-max", `{"type":"integer","value":9223372036854775807}`, vI(math.MaxInt64)),
		ok("int-number-min", `{"type":"integer","value":-9223372036854775808}`, vI(math.MinInt64)),
		ok("int-number-minus-zero", `{"type":"integer","value":-0}`, vI(0)),
		okR("int-value-first", ruleObjects, `{"value":"5","type":"integer"}`, vI(5)),
		okR("int-repeated-value", ruleLastWins, `{"type":"integer","value":"1","value":"2"}`, vI(2)),
		okR("int-repeated-type", ruleLastWins, `{"type":"text","value":"3","type":"integer"}`, vI(3)),
		okR("int-unknown-fields", ruleUnknown, `{"type":"integer","x":{"y":[true,false,null,1.5e3,"\u0000"]},"value":"1","Value":"2","TYPE":"text"}`, vI(1)),
		okR("int-ignores-base64", ruleIrrel, `{"type":"integer","value":"1","base64":{}}`, vI(1)),
		okR("int-whitespace", ruleWS, "{ \"type\" :\t\"integer\"\r\n,\n\"value\" : \"1\" }", vI(1)),
		okR("int-escaped-key", ruleUnknown, `{"t\u0079pe":"integer","\u0076alue":"9"}`, vI(9)),

		ok("float", `{"type":"float","value":1.5}`, vF(1.5)),
		ok("float-zero", `{"type":"float","value":0.0}`, vF(0)),
		ok("float-minus-zero", `{"type":"float","value":-0.0}`, vF(math.Copysign(0, -1))),
		ok("float-minus-zero-int-literal", `{"type":"float","value":-0}`, vF(math.Copysign(0, -1))),
		ok("float-int-literal", `{"type":"float","value":1}`, vF(1)),
		ok("float-exponent", `{"type":"float","value":-1E+2}`, vF(-100)),
		ok("float-1e308", `{"type":"float","value":1e308}`, vF(1e308)),
		ok("float-max", `{"type":"float","value":1.7976931348623157e308}`, vF(math.MaxFloat64)),
		ok("float-smallest-denormal", `{"type":"float","value":5e-324}`, vF(5e-324)),
		ok("float-denormal-rounding", `{"type":"float","value":4.9e-324}`, vF(5e-324)),
		ok("float-smallest-normal", `{"type":"float","value":2.2250738585072014e-308}`, vF(2.2250738585072014e-308)),
		ok("float-underflow", `{"type":"float","value":1e-400}`, vF(0)),
		ok("float-underflow-negative", `{"type":"float","value":-1e-400}`, vF(math.Copysign(0, -1))),
		ok("float-tenth", `{"type":"float","value":0.1}`, vF(0.1)),
		ok("float-long-mantissa", `{"type":"float","value":3.14159265358979323846264338327950288419716939937510582097494459}`, vF(math.Pi)),
		ok("float-null-is-nan", `{"type":"float","value":null}`, vF(nullFloat)),
		okR("float-repeated-null-last", ruleLastWins, `{"type":"float","value":1,"value":null}`, vF(nullFloat)),
		okR("float-repeated-null-first", ruleLastWins, `{"type":"float","value":null,"value":2}`, vF(2)),

		ok("text-empty", `{"type":"text","value":""}`, vT("")),
		ok("text", `{"type":"text","value":"héllo"}`, vT("héllo")),
		okR("text-non-bmp-raw", ruleStrings, `{"type":"text","value":"😀𝄞"}`, vT("😀𝄞")),
		okR("text-surrogate-pair", ruleStrings, `{"type":"text","value":"\ud83d\ude00\uD834\uDD1E"}`, vT("😀𝄞")),
		okR("text-nul", ruleStrings, `{"type":"text","value":"a\u0000b"}`, vT("a\x00b")),
		okR("text-all-escapes", ruleStrings, `{"type":"text","value":"\"\\\/\b\f\n\r\t"}`, vT("\"\\/\b\f\n\r\t")),
		okR("text-unicode-escapes", ruleStrings, `{"type":"text","value":"\u00e9\u4E2D\u0001\u001f\u007f\u2028"}`, vT("é中\x01\x1f\x7f\u2028")),
		okR("text-raw-del-and-separators", ruleStrings, "{\"type\":\"text\",\"value\":\"\x7f\u2028\u2029\ufffd\"}", vT("\x7f\u2028\u2029\ufffd")),
		okR("text-lone-high-surrogate", ruleStrings, `{"type":"text","value":"\ud800"}`, vT("\ufffd")),
		okR("text-lone-low-surrogate", ruleStrings, `{"type":"text","value":"a\udc00b"}`, vT("a\ufffdb")),
		okR("text-high-surrogate-then-letter", ruleStrings, `{"type":"text","value":"\ud800A"}`, vT("\ufffdA")),
		okR("text-high-surrogate-then-escape", ruleStrings, `{"type":"text","value":"\ud800\u0041"}`, vT("\ufffdA")),
		okR("text-high-surrogate-then-newline", ruleStrings, `{"type":"text","value":"\ud800\n"}`, vT("\ufffd\n")),
		okR("text-high-high-low", ruleStrings, `{"type":"text","value":"\ud800\ud800\udc00"}`, vT("\ufffd\U00010000")),
		okR("text-low-high", ruleStrings, `{"type":"text","value":"\udc00\ud800"}`, vT("\ufffd\ufffd")),
		okR("text-high-at-end", ruleStrings, `{"type":"text","value":"x\udbff"}`, vT("x\ufffd")),
		okR("text-max-pair", ruleStrings, `{"type":"text","value":"\udbff\udfff"}`, vT("\U0010ffff")),
		okR("text-sqld-escapes", ruleSQLD, `{"type":"text","value":"\u0000a\"\\/\b\f\n\r\t\u0001\u001f"}`, vT("\x00a\"\\/\b\f\n\r\t\x01\x1f")),

		ok("blob-empty", `{"type":"blob","base64":""}`, vB()),
		ok("blob-unpadded", `{"type":"blob","base64":"qw"}`, vB(0xab)),
		ok("blob-padded", `{"type":"blob","base64":"qw=="}`, vB(0xab)),
		ok("blob-std-alphabet", `{"type":"blob","base64":"+/8"}`, vB(0xfb, 0xff)),
		ok("blob-std-alphabet-padded", `{"type":"blob","base64":"+/8="}`, vB(0xfb, 0xff)),
		ok("blob-three-bytes", `{"type":"blob","base64":"AAAA"}`, vB(0, 0, 0)),
		ok("blob-sqld", `{"type":"blob","base64":"AAECA//+/Q"}`, vB(0, 1, 2, 3, 0xff, 0xfe, 0xfd)),
		ok("blob-sqld-padded", `{"type":"blob","base64":"AAECA//+/Q=="}`, vB(0, 1, 2, 3, 0xff, 0xfe, 0xfd)),
		okR("blob-escaped", ruleStrings, `{"type":"blob","base64":"+\/8"}`, vB(0xfb, 0xff)),
		okR("blob-ignores-value", ruleIrrel, `{"type":"blob","value":{"x":1},"base64":"yv4"}`, vB(0xca, 0xfe)),

		bad("no-type", `{"value":"1"}`),
		bad("type-null", `{"type":null,"value":"1"}`),
		badR("type-number", ruleType, `{"type":1,"value":"1"}`),
		bad("type-unknown", `{"type":"bool","value":true}`),
		badR("type-wrong-case", ruleUnknown, `{"type":"Integer","value":"1"}`),
		badR("type-key-wrong-case", ruleUnknown, `{"Type":"integer","value":"1"}`),
		badR("type-repeated-null", ruleNull, `{"type":"integer","value":"1","type":null}`),
		badR("not-an-object-number", ruleType, `5`),
		badR("not-an-object-null", ruleType, `null`),
		badR("not-an-object-string", ruleType, `"integer"`),
		badR("not-an-object-array", ruleType, `[{"type":"null"}]`),

		bad("int-no-value", `{"type":"integer"}`),
		bad("int-value-null", `{"type":"integer","value":null}`),
		badR("int-repeated-null", ruleNull, `{"type":"integer","value":"1","value":null}`),
		bad("int-string-overflow", `{"type":"integer","value":"9223372036854775808"}`),
		bad("int-string-underflow", `{"type":"integer","value":"-9223372036854775809"}`),
		bad("int-number-overflow", `{"type":"integer","value":9223372036854775808}`),
		bad("int-number-underflow", `{"type":"integer","value":-9223372036854775809}`),
		bad("int-number-fraction", `{"type":"integer","value":1.0}`),
		bad("int-number-exponent", `{"type":"integer","value":1e3}`),
		bad("int-number-exponent-upper", `{"type":"integer","value":1E3}`),
		bad("int-number-minus-zero-fraction", `{"type":"integer","value":-0.0}`),
		bad("int-string-fraction", `{"type":"integer","value":"1.0"}`),
		bad("int-string-empty", `{"type":"integer","value":""}`),
		bad("int-string-space", `{"type":"integer","value":" 1"}`),
		bad("int-string-trailing-space", `{"type":"integer","value":"1 "}`),
		bad("int-string-hex", `{"type":"integer","value":"0x10"}`),
		bad("int-string-underscore", `{"type":"integer","value":"1_000"}`),
		bad("int-string-double-sign", `{"type":"integer","value":"++1"}`),
		bad("int-string-minus", `{"type":"integer","value":"-"}`),
		bad("int-bool", `{"type":"integer","value":true}`),
		bad("int-object", `{"type":"integer","value":{}}`),
		bad("int-array", `{"type":"integer","value":["1"]}`),

		bad("float-no-value", `{"type":"float"}`),
		bad("float-string", `{"type":"float","value":"1.5"}`),
		bad("float-overflow", `{"type":"float","value":1e400}`),
		bad("float-overflow-negative", `{"type":"float","value":-1e400}`),
		bad("float-just-over-max", `{"type":"float","value":1.8e308}`),
		bad("float-bool", `{"type":"float","value":false}`),
		bad("float-array", `{"type":"float","value":[]}`),

		bad("text-no-value", `{"type":"text"}`),
		bad("text-null", `{"type":"text","value":null}`),
		bad("text-number", `{"type":"text","value":5}`),
		bad("text-bool", `{"type":"text","value":true}`),
		bad("text-array", `{"type":"text","value":["a"]}`),
		badR("text-in-base64", ruleIrrel, `{"type":"text","base64":"qw"}`),

		bad("blob-no-base64", `{"type":"blob"}`),
		bad("blob-null", `{"type":"blob","base64":null}`),
		bad("blob-number", `{"type":"blob","base64":5}`),
		badR("blob-in-value", ruleIrrel, `{"type":"blob","value":"qw"}`),
		badR("blob-short-padding", ruleBase64, `{"type":"blob","base64":"qw="}`),
		badR("blob-long-padding", ruleBase64, `{"type":"blob","base64":"qw==="}`),
		badR("blob-padding-only", ruleBase64, `{"type":"blob","base64":"===="}`),
		badR("blob-three-pad", ruleBase64, `{"type":"blob","base64":"q==="}`),
		badR("blob-wrong-pad-count", ruleBase64, `{"type":"blob","base64":"AAECA//+/Q="}`),
		badR("blob-data-after-padding", ruleBase64, `{"type":"blob","base64":"qw==qw=="}`),
		badR("blob-one-char", ruleBase64, `{"type":"blob","base64":"q"}`),
		badR("blob-five-chars", ruleBase64, `{"type":"blob","base64":"AAAAq"}`),
		badR("blob-trailing-bits", ruleBase64, `{"type":"blob","base64":"qx"}`),
		badR("blob-trailing-bits-padded", ruleBase64, `{"type":"blob","base64":"qx=="}`),
		badR("blob-url-alphabet", ruleBase64, `{"type":"blob","base64":"-_8"}`),
		badR("blob-newline", ruleBase64, `{"type":"blob","base64":"qw\n"}`),
		badR("blob-newline-inside", ruleBase64, `{"type":"blob","base64":"AA\r\nAA"}`),
		badR("blob-space", ruleBase64, `{"type":"blob","base64":"q w"}`),
		badR("blob-nul", ruleBase64, `{"type":"blob","base64":"\u0000"}`),
	}
}

// Fixtures returns the decode fixtures, a new copy on every call.
func Fixtures() []Fixture {
	b := &builder{names: map[string]bool{}}
	addSQLD(b)
	addSQLDSocket(b)
	addValues(b)
	addPipeline(b)
	addSyntax(b)
	addCursor(b)
	addHTTPErrors(b)
	addRepeated(b)
	addSocket(b)
	return b.list
}

func addValues(b *builder) {
	for _, vc := range valueCases() {
		if vc.fail {
			b.fail(KindPipeline, "value/"+vc.name, vc.rule, valueDoc(vc.json))
			b.fail(KindCursorEntry, "row/"+vc.name, vc.rule, `{"type":"row","row":[`+vc.json+`]}`)
			continue
		}
		b.pipe("value/"+vc.name, vc.rule, valueDoc(vc.json), valueWant(vc.want))
		b.entry("row/"+vc.name, vc.rule, `{"type":"row","row":[`+vc.json+`]}`, codec.CursorEntry{Type: codec.EntryRow, Row: []codec.Value{vc.want}})
	}
}

func addSQLD(b *builder) {
	neg0 := math.Copysign(0, -1)
	values := rows(cols("i", "", "imin", "", "imax", "", "zero", "", "f", "", "negzero", "", "big", "", "tiny", "",
		"inf", "", "neginf", "", "two", "", "tenth", "", "empty", "", "nonbmp", "", "esc", "",
		"eblob", "", "b1", "", "b2", "", "b3", "", "n", ""),
		row(vI(1), vI(math.MinInt64), vI(math.MaxInt64), vI(0), vF(1.5), vF(neg0), vF(1e308), vF(5e-324),
			vF(nullFloat), vF(nullFloat), vF(2), vF(0.1), vT(""), vT("héllo 😀 𝄞"),
			vT("\x00a\"\\/\b\f\n\r\t\x01\x1f\x7f\u2028"),
			vB(), vB(0xab), vB(0xfb, 0xff), vB(0, 1, 2, 3, 0xff, 0xfe, 0xfd), vN()))
	values.ReplicationIndex, values.HasReplicationIndex = 10, true
	values.QueryDurationMS = 0.062
	b.pipe("sqld/values", ruleSQLD, string(SQLDFile("pipeline_values.json")), resp(okExec(values), okType(codec.RequestClose)))

	nulls := rows(cols("column1", "", "column2", "", "column3", "", "column4", ""),
		row(vI(1), vT("a"), vB(1), vF(1.5)),
		row(vN(), vN(), vN(), vN()),
		row(vI(2), vN(), vB(), vN()))
	nulls.ReplicationIndex, nulls.HasReplicationIndex = 10, true
	nulls.QueryDurationMS = 0.035
	b.pipe("sqld/nulls", ruleSQLD, string(SQLDFile("pipeline_nulls.json")), resp(okExec(nulls), okType(codec.RequestClose)))

	one := rows(cols("1", ""), row(vI(1)))
	one.ReplicationIndex, one.HasReplicationIndex = 16, true
	one.QueryDurationMS = 0.013
	want := resp(okExec(one))
	want.Baton = "FNplnhba5aJUFxg+zk1CRDTRmCA4pS+KTmmOPUdH2UDhIVP6Nr4SSrDYcb6cSels"
	b.pipe("sqld/baton", ruleSQLD, string(SQLDFile("pipeline_baton.json")), want)

	b.pipe("sqld/empty", ruleSQLD, string(SQLDFile("pipeline_empty.json")),
		codec.PipelineResponse{Baton: "yv4H/x7J4eiJtCG/EU1yosc6moS6Jqkw9SIsIsebiLy5oKzIqUWZTbJRui5DooMn"})

	st := func(arc uint64, lir int64, hasLIR bool, ri uint64, hasRI bool, rr, rw uint64, qd float64) codec.StmtResult {
		return codec.StmtResult{AffectedRowCount: arc, LastInsertRowID: lir, HasLastInsertRowID: hasLIR,
			ReplicationIndex: ri, HasReplicationIndex: hasRI, RowsRead: rr, RowsWritten: rw, QueryDurationMS: qd}
	}
	sel := rows(cols("id", "INTEGER", "v", "TEXT"), row(vI(1), vT("a")), row(vI(2), vT("b")), row(vI(3), vT("c")))
	sel.RowsRead, sel.QueryDurationMS = 3, 0.013
	r42 := rows(cols("42", ""), row(vI(42)))
	r42.ReplicationIndex, r42.HasReplicationIndex, r42.QueryDurationMS = 14, true, 0.009
	mixed := resp(
		okExec(st(0, 0, false, 12, true, 1, 2, 0.221)),
		okExec(st(2, 2, true, 13, true, 0, 2, 0.059)),
		okBatch(codec.BatchResult{Steps: []codec.StepOutcome{
			stepOK(st(0, 0, false, 0, false, 0, 0, 0.004)),
			stepOK(st(1, 3, true, 0, false, 0, 1, 0.02)),
			stepErr("SQLite error: no such table: nonexistent_codectest", "SQLITE_UNKNOWN"),
			stepSkip,
			stepOK(sel),
			stepOK(st(0, 0, false, 0, false, 0, 0, 0.049)),
		}, ReplicationIndex: 14, HasReplicationIndex: true}),
		okAutocommit(true),
		errRes("SQL string could not be parsed: syntax error around L1:6: `selec`", "SQL_PARSE_ERROR"),
		errRes("SQLite error: integer overflow", "SQLITE_UNKNOWN"),
		okDescribe(codec.DescribeResult{
			Params:     []codec.DescribeParam{{Name: ":a"}, {}, {Name: "@b"}, {Name: "$c"}, {}, {}, {Name: "?7"}},
			Cols:       cols("x", "INTEGER", "v", "TEXT", ":a", "", "?", "", "@b", "", "$c", "", "1", ""),
			IsReadonly: true,
		}),
		okType(codec.RequestStoreSQL),
		okExec(r42),
		okType(codec.RequestCloseSQL),
		okType(codec.RequestSequence),
		okExec(st(0, 0, false, 16, true, 3, 0, 0.182)),
		okType(codec.RequestClose),
	)
	mixedInput := string(SQLDFile("pipeline_mixed.json"))
	b.pipe("sqld/mixed", ruleSQLD, mixedInput, mixed)
	// The same document pretty-printed and with its keys reordered is
	// covered by the objects rules; truncations of it must fail.
	for _, n := range []int{0, 1, len(mixedInput) / 3, len(mixedInput) / 2, len(mixedInput) - 2, len(mixedInput) - 1} {
		b.fail(KindPipeline, "sqld/mixed-truncated-"+strconv.Itoa(n), ruleSyntax, mixedInput[:n])
	}
	valuesInput := SQLDFile("pipeline_values.json")
	for _, n := range []int{10, 100, 500, 1000, len(valuesInput) - 3} {
		b.fail(KindPipeline, "sqld/values-truncated-"+strconv.Itoa(n), ruleSyntax, string(valuesInput[:n]))
	}
	// Invalid UTF-8 spliced into the real document, inside and outside
	// strings.
	at := bytes.Index(valuesInput, []byte("héllo"))
	invalid := map[string]string{
		"invalid-utf8-ff":         "\xff",
		"invalid-utf8-overlong":   "\xc0\xaf",
		"invalid-utf8-surrogate":  "\xed\xa0\x80",
		"invalid-utf8-truncated":  "\xe2\x82",
		"invalid-utf8-above-max":  "\xf4\x90\x80\x80",
		"invalid-utf8-lone-cont":  "\x80",
		"invalid-utf8-five-bytes": "\xf8\x88\x80\x80\x80",
	}
	for _, name := range sortedKeys(invalid) {
		bad := invalid[name]
		in := append(append(clone(valuesInput[:at]), bad...), valuesInput[at:]...)
		b.failUTF8(KindPipeline, "sqld/values-"+name, in)
	}

	// Cursor lines.
	type line struct {
		kind  Kind
		entry codec.CursorEntry
		hdr   codec.CursorHeader
	}
	stepBegin := func(step uint32, c []codec.Col) line {
		return line{kind: KindCursorEntry, entry: codec.CursorEntry{Type: codec.EntryStepBegin, Step: step, Cols: c}}
	}
	stepEnd := func(arc uint64, lir int64, has bool) line {
		return line{kind: KindCursorEntry, entry: codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: arc, LastInsertRowID: lir, HasLastInsertRowID: has}}
	}
	rowE := func(v ...codec.Value) line {
		return line{kind: KindCursorEntry, entry: codec.CursorEntry{Type: codec.EntryRow, Row: v}}
	}
	stepError := func(step uint32, msg, code string) line {
		return line{kind: KindCursorEntry, entry: codec.CursorEntry{Type: codec.EntryStepError, Step: step, Error: codec.Error{Message: msg, Code: code}}}
	}
	repl := func(ri uint64) line {
		return line{kind: KindCursorEntry, entry: codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: ri, HasReplicationIndex: true}}
	}
	hdr := func(baton string) line { return line{kind: KindCursorHeader, hdr: codec.CursorHeader{Baton: baton}} }
	files := []struct {
		name  string
		lines []line
	}{
		{"cursor_batch.ndjson", []line{
			hdr("MnfNEvLqAXiOMrGNGlMLNKSd1vfKB8/2A+RxwJvqXecutdN8MsCY7FbDzD6vvUtu"),
			stepBegin(0, nil), stepEnd(0, 0, false),
			stepBegin(1, nil), stepEnd(2, 2, true),
			stepBegin(2, cols("id", "INTEGER", "v", "", "n", "")),
			rowE(vI(1), vF(1.5), vN()), rowE(vI(2), vB(0xca, 0xfe), vN()),
			stepEnd(0, 0, false),
			stepError(3, "SQLite error: no such table: nonexistent_codectest", "SQLITE_UNKNOWN"),
			stepBegin(5, cols("?", "")),
			stepError(5, "Arguments do not match SQL parameters: too many parameters, expected 1 found 2", "ARGS_INVALID"),
			stepBegin(6, nil), stepEnd(0, 0, false),
			repl(21),
		}},
		{"cursor_empty.ndjson", []line{hdr("QU/hpeXeUiGjsSTvkRSc8O74bKrZ+5paMQZ01HtHccoF9xSQUDfdveVItAW/s9DA"), repl(21)}},
		{"cursor_select1.ndjson", []line{
			hdr("P6p2Gizx5Pahk8qw1cTNBroH4fTI6XYsX2P7EKmcQxw9F3GIGFsL9Q+eAVKRG45h"),
			stepBegin(0, cols("1", "")), rowE(vI(1)), stepEnd(0, 0, false), repl(21),
		}},
	}
	for _, f := range files {
		text := strings.TrimSuffix(string(SQLDFile(f.name)), "\n")
		split := strings.Split(text, "\n")
		if len(split) != len(f.lines) {
			panic("codectest: " + f.name + " has " + strconv.Itoa(len(split)) + " lines")
		}
		base := "sqld/" + strings.TrimSuffix(f.name, ".ndjson") + "-" // e.g. sqld/cursor_batch-3
		for i, l := range f.lines {
			name := base + strconv.Itoa(i)
			switch l.kind {
			case KindCursorHeader:
				b.header(name, ruleSQLD, split[i], l.hdr)
				b.header(name+"-newline", ruleWS, split[i]+"\n", l.hdr)
				b.fail(KindCursorHeader, name+"-truncated", ruleSyntax, split[i][:len(split[i])-1])
			default:
				b.entry(name, ruleSQLD, split[i], l.entry)
				b.entry(name+"-newline", ruleWS, split[i]+"\r\n", l.entry)
				b.fail(KindCursorEntry, name+"-truncated", ruleSyntax, split[i][:len(split[i])-1])
			}
		}
	}
}

func addPipeline(b *builder) {
	empty := codec.PipelineResponse{}
	one := valueWant(vI(1))
	v1 := `{"type":"integer","value":"1"}`
	c1 := `"cols":[{"name":"v","decltype":null}]`

	// Top level.
	b.pipe("top-empty-object", ruleNull, `{}`, empty)
	b.pipe("top-results-null", ruleNull, `{"baton":null,"base_url":null,"results":null}`, empty)
	b.pipe("top-results-empty", ruleObjects, `{"results":[]}`, empty)
	b.pipe("top-baton", ruleObjects, `{"baton":"b+/=","base_url":"http://x/y?z","results":[]}`,
		codec.PipelineResponse{Baton: "b+/=", BaseURL: "http://x/y?z"})
	b.pipe("top-baton-escaped", ruleStrings, `{"baton":"\u0062\ud83d\ude00\/","results":[]}`, codec.PipelineResponse{Baton: "b😀/"})
	b.pipe("top-field-order", ruleObjects, `{"results":[`+okResp(`{"type":"close"}`)+`],"base_url":"u","baton":"b"}`,
		codec.PipelineResponse{Baton: "b", BaseURL: "u", Results: []codec.StreamResult{okType(codec.RequestClose)}})
	b.pipe("top-unknown-fields", ruleUnknown, `{"x":{"results":[1,2,{"type":"nope"}]},"results":[],"y":[null,true,false,-0.5e-3,"s",{}],"z":""}`, empty)
	b.pipe("top-unknown-case", ruleUnknown, `{"Results":[{"type":"nope"}],"BATON":5,"results":[]}`, empty)
	b.pipe("top-escaped-key", ruleUnknown, `{"r\u0065sults":[`+okResp(`{"type":"close"}`)+`],"bato\u006e":"b"}`,
		codec.PipelineResponse{Baton: "b", Results: []codec.StreamResult{okType(codec.RequestClose)}})
	b.pipe("top-repeated-results", ruleLastWins, `{"results":[`+okResp(`{"type":"sequence"}`)+`,`+okResp(`{"type":"close"}`)+`],"results":[`+okResp(`{"type":"close"}`)+`]}`,
		resp(okType(codec.RequestClose)))
	b.fail(KindPipeline, "top-repeated-results-bad-type", ruleType+" (in every occurrence of a repeated key)", `{"results":[1],"results":[]}`)
	b.pipe("top-repeated-baton-null", ruleNull, `{"baton":"a","baton":null,"results":[]}`, empty)
	b.pipe("top-repeated-results-null", ruleNull, `{"results":[`+okResp(`{"type":"close"}`)+`],"results":null}`, empty)
	b.pipe("top-whitespace", ruleWS, " \t\r\n{ \"results\" : [ ] } \t\r\n", empty)
	b.fail(KindPipeline, "top-null", ruleTop, `null`)
	b.fail(KindPipeline, "top-array", ruleTop, `[]`)
	b.fail(KindPipeline, "top-string", ruleTop, `"results"`)
	b.fail(KindPipeline, "top-number", ruleTop, `1`)
	b.fail(KindPipeline, "top-true", ruleTop, `true`)
	b.fail(KindPipeline, "top-empty-input", ruleSyntax, ``)
	b.fail(KindPipeline, "top-whitespace-only", ruleSyntax, " \n\t\r")
	b.fail(KindPipeline, "top-baton-number", ruleType, `{"baton":5,"results":[]}`)
	b.fail(KindPipeline, "top-baton-object", ruleType, `{"baton":{},"results":[]}`)
	b.fail(KindPipeline, "top-base-url-bool", ruleType, `{"base_url":true,"results":[]}`)
	b.fail(KindPipeline, "top-results-object", ruleType, `{"results":{}}`)
	b.fail(KindPipeline, "top-results-string", ruleType, `{"results":"[]"}`)
	b.fail(KindPipeline, "top-results-number", ruleType, `{"results":0}`)

	// Stream results.
	b.pipe("result-close", ruleResult, doc(okResp(`{"type":"close"}`)), resp(okType(codec.RequestClose)))
	b.pipe("result-sequence", ruleResult, doc(okResp(`{"type":"sequence"}`)), resp(okType(codec.RequestSequence)))
	b.pipe("result-store-sql", ruleResult, doc(okResp(`{"type":"store_sql"}`)), resp(okType(codec.RequestStoreSQL)))
	b.pipe("result-close-sql", ruleResult, doc(okResp(`{"type":"close_sql"}`)), resp(okType(codec.RequestCloseSQL)))
	b.pipe("result-autocommit-true", ruleResult, doc(okResp(`{"type":"get_autocommit","is_autocommit":true}`)), resp(okAutocommit(true)))
	b.pipe("result-autocommit-false", ruleResult, doc(okResp(`{"type":"get_autocommit","is_autocommit":false}`)), resp(okAutocommit(false)))
	b.pipe("result-autocommit-null", ruleNull, doc(okResp(`{"type":"get_autocommit","is_autocommit":null}`)), resp(okAutocommit(false)))
	b.pipe("result-autocommit-absent", ruleNull, doc(okResp(`{"type":"get_autocommit"}`)), resp(okAutocommit(false)))
	b.pipe("result-autocommit-repeated", ruleLastWins, doc(okResp(`{"is_autocommit":false,"type":"get_autocommit","is_autocommit":true}`)), resp(okAutocommit(true)))
	b.fail(KindPipeline, "result-autocommit-string", ruleType, doc(okResp(`{"type":"get_autocommit","is_autocommit":"true"}`)))
	b.fail(KindPipeline, "result-autocommit-number", ruleType, doc(okResp(`{"type":"get_autocommit","is_autocommit":1}`)))
	b.pipe("result-close-ignores-result", ruleIrrel, doc(okResp(`{"type":"close","result":5,"is_autocommit":"x"}`)), resp(okType(codec.RequestClose)))
	b.pipe("result-execute-ignores-autocommit", ruleIrrel, doc(okResp(`{"type":"execute","is_autocommit":"x","result":{}}`)), resp(okExec(codec.StmtResult{})))
	b.pipe("result-response-first", ruleObjects, doc(`{"response":{"result":{},"type":"execute"},"type":"ok"}`), resp(okExec(codec.StmtResult{})))
	b.pipe("result-ok-ignores-error", ruleIrrel, doc(`{"type":"ok","error":5,"response":{"type":"close"}}`), resp(okType(codec.RequestClose)))
	b.pipe("result-error-ignores-response", ruleIrrel, doc(`{"type":"error","response":[],"error":{"message":"m","code":"c"}}`), resp(errRes("m", "c")))
	b.pipe("result-error", ruleResult, doc(`{"type":"error","error":{"message":"m","code":"c"}}`), resp(errRes("m", "c")))
	b.pipe("result-error-empty", ruleNull, doc(`{"type":"error","error":{}}`), resp(errRes("", "")))
	b.pipe("result-error-nulls", ruleNull, doc(`{"type":"error","error":{"message":null,"code":null}}`), resp(errRes("", "")))
	b.pipe("result-error-unknown-fields", ruleUnknown, doc(`{"type":"error","error":{"Message":"x","message":"m","extra":[{}]}}`), resp(errRes("m", "")))
	b.pipe("result-repeated-response", ruleLastWins,
		doc(`{"type":"ok","response":{"type":"execute","result":{`+c1+`,"rows":[[`+v1+`]]}},"response":{"type":"close"}}`),
		resp(okType(codec.RequestClose)))
	b.pipe("result-repeated-type", ruleLastWins, doc(`{"type":"error","response":{"type":"close"},"type":"ok"}`), resp(okType(codec.RequestClose)))
	b.pipe("result-execute-no-result", ruleOptional, doc(okResp(`{"type":"execute"}`)), resp(okExec(codec.StmtResult{})))
	b.pipe("result-execute-null-result", ruleOptional, doc(okResp(`{"type":"execute","result":null}`)), resp(okExec(codec.StmtResult{})))
	b.pipe("result-batch-no-result", ruleOptional, doc(okResp(`{"type":"batch"}`)), resp(okBatch(codec.BatchResult{})))
	b.pipe("result-describe-no-result", ruleOptional, doc(okResp(`{"type":"describe"}`)), resp(okDescribe(codec.DescribeResult{})))
	b.fail(KindPipeline, "result-null", ruleResult, doc(`null`))
	b.fail(KindPipeline, "result-number", ruleType, doc(`1`))
	b.fail(KindPipeline, "result-array", ruleType, doc(`[]`))
	b.fail(KindPipeline, "result-no-type", ruleResult, doc(`{"response":{"type":"close"}}`))
	b.fail(KindPipeline, "result-type-null", ruleResult, doc(`{"type":null,"response":{"type":"close"}}`))
	b.fail(KindPipeline, "result-type-unknown", ruleResult, doc(`{"type":"OK","response":{"type":"close"}}`))
	b.fail(KindPipeline, "result-type-number", ruleType, doc(`{"type":1,"response":{"type":"close"}}`))
	b.fail(KindPipeline, "result-ok-no-response", ruleResult, doc(`{"type":"ok"}`))
	b.fail(KindPipeline, "result-ok-null-response", ruleResult, doc(`{"type":"ok","response":null}`))
	b.fail(KindPipeline, "result-ok-response-repeated-null", ruleNull, doc(`{"type":"ok","response":{"type":"close"},"response":null}`))
	b.fail(KindPipeline, "result-ok-response-string", ruleType, doc(`{"type":"ok","response":"close"}`))
	b.fail(KindPipeline, "result-ok-response-array", ruleType, doc(`{"type":"ok","response":[{"type":"close"}]}`))
	b.fail(KindPipeline, "result-response-no-type", ruleResult, doc(okResp(`{}`)))
	b.fail(KindPipeline, "result-response-type-null", ruleResult, doc(okResp(`{"type":null}`)))
	b.fail(KindPipeline, "result-response-type-unknown", ruleResult, doc(okResp(`{"type":"open_stream"}`)))
	b.fail(KindPipeline, "result-response-type-empty", ruleResult, doc(okResp(`{"type":""}`)))
	b.fail(KindPipeline, "result-response-type-case", ruleResult, doc(okResp(`{"type":"Close"}`)))
	b.fail(KindPipeline, "result-response-type-number", ruleType, doc(okResp(`{"type":2}`)))
	b.fail(KindPipeline, "result-error-no-error", ruleResult, doc(`{"type":"error"}`))
	b.fail(KindPipeline, "result-error-null-error", ruleResult, doc(`{"type":"error","error":null}`))
	b.fail(KindPipeline, "result-error-string", ruleType, doc(`{"type":"error","error":"boom"}`))
	b.fail(KindPipeline, "result-error-message-number", ruleType, doc(`{"type":"error","error":{"message":1}}`))
	b.fail(KindPipeline, "result-error-code-array", ruleType, doc(`{"type":"error","error":{"code":[]}}`))
	b.fail(KindPipeline, "result-execute-result-array", ruleType, doc(okResp(`{"type":"execute","result":[]}`)))
	b.fail(KindPipeline, "result-execute-result-string", ruleType, doc(okResp(`{"type":"execute","result":"x"}`)))
	b.fail(KindPipeline, "result-batch-result-number", ruleType, doc(okResp(`{"type":"batch","result":1}`)))
	b.fail(KindPipeline, "result-describe-result-bool", ruleType, doc(okResp(`{"type":"describe","result":true}`)))

	// Statement results.
	b.pipe("stmt-minimal", ruleNull, resultDoc(``), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-all-null", ruleNull, resultDoc(`"cols":null,"rows":null,"affected_row_count":null,"last_insert_rowid":null,"replication_index":null,"rows_read":null,"rows_written":null,"query_duration_ms":null`), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-no-extensions", ruleNull, resultDoc(`"cols":[],"rows":[],"affected_row_count":0,"last_insert_rowid":null`), resp(okExec(codec.StmtResult{})))
	full := codec.StmtResult{
		Cols: cols("a", "INTEGER", "b", ""), NumRows: 2,
		Values:           []codec.Value{vI(1), vN(), vI(2), vT("x")},
		AffectedRowCount: 3, LastInsertRowID: -4, HasLastInsertRowID: true,
		ReplicationIndex: 5, HasReplicationIndex: true, RowsRead: 6, RowsWritten: 7, QueryDurationMS: 8.5,
	}
	fullFields := `"cols":[{"name":"a","decltype":"INTEGER"},{"name":"b","decltype":null}],"rows":[[` + v1 + `,{"type":"null"}],[{"type":"integer","value":"2"},{"type":"text","value":"x"}]],"affected_row_count":3,"last_insert_rowid":"-4","replication_index":"5","rows_read":6,"rows_written":7,"query_duration_ms":8.5`
	b.pipe("stmt-full", ruleObjects, resultDoc(fullFields), resp(okExec(full)))
	b.pipe("stmt-full-reordered", ruleObjects, resultDoc(`"query_duration_ms":8.5,"rows_written":7,"rows_read":6,"replication_index":"5","last_insert_rowid":"-4","affected_row_count":3,"rows":[[`+v1+`,{"type":"null"}],[{"type":"integer","value":"2"},{"type":"text","value":"x"}]],"cols":[{"decltype":"INTEGER","name":"a"},{"name":"b"}]`), resp(okExec(full)))
	b.pipe("stmt-numbers-as-strings", ruleUint, resultDoc(`"affected_row_count":"3","last_insert_rowid":-4,"replication_index":5,"rows_read":"6","rows_written":"7","query_duration_ms":8.5`),
		resp(okExec(codec.StmtResult{AffectedRowCount: 3, LastInsertRowID: -4, HasLastInsertRowID: true, ReplicationIndex: 5, HasReplicationIndex: true, RowsRead: 6, RowsWritten: 7, QueryDurationMS: 8.5})))
	b.pipe("stmt-uint-max", ruleUint, resultDoc(`"affected_row_count":18446744073709551615,"rows_read":"18446744073709551615"`),
		resp(okExec(codec.StmtResult{AffectedRowCount: math.MaxUint64, RowsRead: math.MaxUint64})))
	b.pipe("stmt-uint-string-leading-zeros", ruleUint, resultDoc(`"affected_row_count":"007"`), resp(okExec(codec.StmtResult{AffectedRowCount: 7})))
	b.pipe("stmt-uint-string-escaped", ruleStrings, resultDoc(`"replication_index":"\u0039"`), resp(okExec(codec.StmtResult{ReplicationIndex: 9, HasReplicationIndex: true})))
	b.pipe("stmt-replication-index-zero", ruleUint, resultDoc(`"replication_index":"0"`), resp(okExec(codec.StmtResult{HasReplicationIndex: true})))
	b.pipe("stmt-last-insert-rowid-zero", ruleInt64, resultDoc(`"last_insert_rowid":0`), resp(okExec(codec.StmtResult{HasLastInsertRowID: true})))
	b.pipe("stmt-last-insert-rowid-min", ruleInt64, resultDoc(`"last_insert_rowid":"-9223372036854775808"`), resp(okExec(codec.StmtResult{LastInsertRowID: math.MinInt64, HasLastInsertRowID: true})))
	b.pipe("stmt-last-insert-rowid-max-number", ruleInt64, resultDoc(`"last_insert_rowid":9223372036854775807`), resp(okExec(codec.StmtResult{LastInsertRowID: math.MaxInt64, HasLastInsertRowID: true})))
	b.pipe("stmt-last-insert-rowid-plus", ruleInt64, resultDoc(`"last_insert_rowid":"+3"`), resp(okExec(codec.StmtResult{LastInsertRowID: 3, HasLastInsertRowID: true})))
	b.pipe("stmt-last-insert-rowid-minus-zero", ruleInt64, resultDoc(`"last_insert_rowid":-0`), resp(okExec(codec.StmtResult{HasLastInsertRowID: true})))
	b.pipe("stmt-last-insert-rowid-repeated-null", ruleNull, resultDoc(`"last_insert_rowid":"5","last_insert_rowid":null`), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-replication-index-repeated-null", ruleNull, resultDoc(`"replication_index":5,"replication_index":null`), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-affected-repeated", ruleLastWins, resultDoc(`"affected_row_count":5,"affected_row_count":"6"`), resp(okExec(codec.StmtResult{AffectedRowCount: 6})))
	b.pipe("stmt-affected-repeated-null", ruleNull, resultDoc(`"affected_row_count":5,"affected_row_count":null`), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-duration-int", ruleDuration, resultDoc(`"query_duration_ms":7`), resp(okExec(codec.StmtResult{QueryDurationMS: 7})))
	b.pipe("stmt-duration-exponent", ruleDuration, resultDoc(`"query_duration_ms":1.5E-3`), resp(okExec(codec.StmtResult{QueryDurationMS: 0.0015})))
	b.pipe("stmt-duration-negative", ruleDuration, resultDoc(`"query_duration_ms":-1`), resp(okExec(codec.StmtResult{QueryDurationMS: -1})))
	b.pipe("stmt-duration-minus-zero", ruleDuration, resultDoc(`"query_duration_ms":-0.0`), resp(okExec(codec.StmtResult{QueryDurationMS: math.Copysign(0, -1)})))
	b.pipe("stmt-duration-underflow", ruleDuration, resultDoc(`"query_duration_ms":1e-400`), resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-zero-cols-rows", ruleRowLen, resultDoc(`"cols":[],"rows":[[],[],[]]`), resp(okExec(codec.StmtResult{NumRows: 3})))
	b.pipe("stmt-cols-nulls", ruleNull, resultDoc(`"cols":[{"name":null,"decltype":null},{}],"rows":[]`), resp(okExec(codec.StmtResult{Cols: cols("", "", "", "")})))
	b.pipe("stmt-cols-unknown-fields", ruleUnknown, resultDoc(`"cols":[{"Name":"A","name":"a","type":"x","decltype":"T"}]`), resp(okExec(codec.StmtResult{Cols: cols("a", "T")})))
	b.pipe("stmt-cols-after-rows", ruleObjects, resultDoc(`"rows":[[`+v1+`]],`+c1), one)
	b.pipe("stmt-repeated-result", ruleLastWins,
		doc(okResp(`{"type":"execute","result":{`+c1+`,"rows":[[`+v1+`]],"affected_row_count":9},"result":{"rows":[]}}`)),
		resp(okExec(codec.StmtResult{})))
	b.pipe("stmt-repeated-rows", ruleLastWins, resultDoc(c1+`,"rows":[[`+v1+`],[`+v1+`]],"rows":[[`+v1+`]]`), one)
	b.pipe("stmt-repeated-cols", ruleLastWins, resultDoc(`"cols":[],`+c1+`,"rows":[[`+v1+`]]`), one)
	b.pipe("stmt-repeated-cols-null", ruleNull, resultDoc(c1+`,"cols":null,"rows":[[]]`), resp(okExec(codec.StmtResult{NumRows: 1})))
	b.pipe("stmt-unicode-names", ruleStrings, resultDoc(`"cols":[{"name":"é\u00e9\ud83d\ude00","decltype":"\u0000"}]`), resp(okExec(codec.StmtResult{Cols: cols("éé😀", "\x00")})))
	b.pipe("stmt-many-rows", ruleRowLen, resultDoc(`"cols":[{"name":"a"},{"name":"b"}],"rows":[`+strings.Repeat(`[`+v1+`,{"type":"null"}],`, 99)+`[`+v1+`,{"type":"null"}]]`),
		resp(okExec(manyRows(100))))

	b.fail(KindPipeline, "stmt-row-too-short", ruleRowLen, resultDoc(`"cols":[{"name":"a"},{"name":"b"}],"rows":[[`+v1+`]]`))
	b.fail(KindPipeline, "stmt-row-too-long", ruleRowLen, resultDoc(c1+`,"rows":[[`+v1+`,`+v1+`]]`))
	b.fail(KindPipeline, "stmt-second-row-short", ruleRowLen, resultDoc(c1+`,"rows":[[`+v1+`],[]]`))
	b.fail(KindPipeline, "stmt-rows-without-cols", ruleRowLen, resultDoc(`"rows":[[`+v1+`]]`))
	b.fail(KindPipeline, "stmt-rows-cols-repeated-null", ruleRowLen, resultDoc(c1+`,"rows":[[`+v1+`]],"cols":null`))
	b.fail(KindPipeline, "stmt-row-null", ruleType, resultDoc(c1+`,"rows":[null]`))
	b.fail(KindPipeline, "stmt-row-null-no-cols", ruleType, resultDoc(`"rows":[null]`))
	b.fail(KindPipeline, "stmt-row-object", ruleType, resultDoc(c1+`,"rows":[{"0":`+v1+`}]`))
	b.fail(KindPipeline, "stmt-rows-object", ruleType, resultDoc(`"rows":{}`))
	b.fail(KindPipeline, "stmt-rows-flat", ruleType, resultDoc(c1+`,"rows":[`+v1+`]`))
	b.fail(KindPipeline, "stmt-value-null", ruleValue, resultDoc(c1+`,"rows":[[null]]`))
	b.fail(KindPipeline, "stmt-cols-object", ruleType, resultDoc(`"cols":{}`))
	b.fail(KindPipeline, "stmt-col-null", ruleType, resultDoc(`"cols":[null]`))
	b.fail(KindPipeline, "stmt-col-string", ruleType, resultDoc(`"cols":["a"]`))
	b.fail(KindPipeline, "stmt-col-name-number", ruleType, resultDoc(`"cols":[{"name":1}]`))
	b.fail(KindPipeline, "stmt-col-decltype-array", ruleType, resultDoc(`"cols":[{"name":"a","decltype":[]}]`))
	badFields := map[string][]string{
		"affected_row_count": {`-1`, `"-1"`, `1.0`, `1e2`, `"1e2"`, `"+1"`, `"1.0"`, `""`, `" 1"`, `-0`, `"-0"`, `18446744073709551616`, `"18446744073709551616"`, `true`, `[]`, `{}`, `"0x1"`},
		"rows_read":          {`-1`, `1.5`, `"abc"`, `false`},
		"rows_written":       {`2.0`, `"2.0"`, `[1]`},
		"replication_index":  {`-5`, `"-5"`, `5.5`, `"5.5"`, `{}`, `18446744073709551616`},
		"last_insert_rowid":  {`1.5`, `"1.5"`, `1e3`, `"9223372036854775808"`, `9223372036854775808`, `-9223372036854775809`, `""`, `"a"`, `true`, `{}`, `[]`, `" 1"`},
		"query_duration_ms":  {`"1.5"`, `true`, `[]`, `{}`, `1e400`, `-1e400`},
	}
	for _, field := range sortedKeys(badFields) {
		bads := badFields[field]
		for i, v := range bads {
			rule := ruleUint
			switch field {
			case "last_insert_rowid":
				rule = ruleInt64
			case "query_duration_ms":
				rule = ruleDuration
			}
			b.fail(KindPipeline, "stmt-"+strings.ReplaceAll(field, "_", "-")+"-bad-"+strconv.Itoa(i), rule, resultDoc(`"`+field+`":`+v))
		}
	}

	// Batch results.
	batchDoc := func(result string) string { return doc(okResp(`{"type":"batch","result":` + result + `}`)) }
	sr := `{"cols":[],"rows":[],"affected_row_count":1,"last_insert_rowid":"2","replication_index":null,"rows_read":0,"rows_written":1,"query_duration_ms":0.5}`
	srWant := codec.StmtResult{AffectedRowCount: 1, LastInsertRowID: 2, HasLastInsertRowID: true, RowsWritten: 1, QueryDurationMS: 0.5}
	e := `{"message":"boom","code":"SQLITE_CONSTRAINT"}`
	b.pipe("batch-empty", ruleBatch, batchDoc(`{"step_results":[],"step_errors":[],"replication_index":null}`), resp(okBatch(codec.BatchResult{})))
	b.pipe("batch-minimal", ruleNull, batchDoc(`{}`), resp(okBatch(codec.BatchResult{})))
	b.pipe("batch-mixed", ruleBatch, batchDoc(`{"step_results":[`+sr+`,null,null,`+sr+`],"step_errors":[null,`+e+`,null,null],"replication_index":"77"}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(srWant), stepErr("boom", "SQLITE_CONSTRAINT"), stepSkip, stepOK(srWant)}, ReplicationIndex: 77, HasReplicationIndex: true})))
	b.pipe("batch-errors-longer", ruleBatch, batchDoc(`{"step_results":[`+sr+`],"step_errors":[null,null,`+e+`]}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(srWant), stepSkip, stepErr("boom", "SQLITE_CONSTRAINT")}})))
	b.pipe("batch-results-longer", ruleBatch, batchDoc(`{"step_errors":[`+e+`],"step_results":[null,null,`+sr+`,null]}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepErr("boom", "SQLITE_CONSTRAINT"), stepSkip, stepOK(srWant), stepSkip}})))
	b.pipe("batch-only-nulls", ruleBatch, batchDoc(`{"step_results":[null,null],"step_errors":null}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepSkip, stepSkip}})))
	b.pipe("batch-replication-index-number", ruleUint, batchDoc(`{"replication_index":3}`), resp(okBatch(codec.BatchResult{ReplicationIndex: 3, HasReplicationIndex: true})))
	b.pipe("batch-rows", ruleBatch, batchDoc(`{"step_results":[{`+c1+`,"rows":[[`+v1+`]]}],"step_errors":[null]}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(rows(cols("v", ""), row(vI(1))))}})))
	b.pipe("batch-repeated-step-results", ruleLastWins, batchDoc(`{"step_results":[`+sr+`,`+sr+`],"step_errors":[null,`+e+`],"step_results":[`+sr+`]}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(srWant), stepErr("boom", "SQLITE_CONSTRAINT")}})))
	b.pipe("batch-empty-error", ruleBatch, batchDoc(`{"step_results":[null],"step_errors":[{}]}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepErr("", "")}})))
	b.fail(KindPipeline, "batch-both", ruleBatch, batchDoc(`{"step_results":[`+sr+`],"step_errors":[`+e+`]}`))
	b.fail(KindPipeline, "batch-both-empty", ruleBatch, batchDoc(`{"step_results":[{}],"step_errors":[{}]}`))
	b.fail(KindPipeline, "batch-both-late", ruleBatch, batchDoc(`{"step_results":[null,null,`+sr+`],"step_errors":[null,null,`+e+`,null]}`))
	b.fail(KindPipeline, "batch-step-results-object", ruleType, batchDoc(`{"step_results":{}}`))
	b.fail(KindPipeline, "batch-step-result-number", ruleType, batchDoc(`{"step_results":[1]}`))
	b.fail(KindPipeline, "batch-step-error-string", ruleType, batchDoc(`{"step_errors":["boom"]}`))
	b.fail(KindPipeline, "batch-step-row-mismatch", ruleRowLen, batchDoc(`{"step_results":[{"rows":[[`+v1+`]]}]}`))
	b.fail(KindPipeline, "batch-step-bad-value", ruleValue, batchDoc(`{"step_results":[{`+c1+`,"rows":[[{"type":"integer"}]]}]}`))
	b.fail(KindPipeline, "batch-replication-index-bad", ruleUint, batchDoc(`{"replication_index":"x"}`))

	// Describe.
	descDoc := func(result string) string { return doc(okResp(`{"type":"describe","result":` + result + `}`)) }
	b.pipe("describe-full", ruleObjects, descDoc(`{"params":[{"name":":a"},{"name":null},{}],"cols":[{"name":"x","decltype":"INTEGER"}],"is_explain":true,"is_readonly":false}`),
		resp(okDescribe(codec.DescribeResult{Params: []codec.DescribeParam{{Name: ":a"}, {}, {}}, Cols: cols("x", "INTEGER"), IsExplain: true})))
	b.pipe("describe-nulls", ruleNull, descDoc(`{"params":null,"cols":null,"is_explain":null,"is_readonly":null}`), resp(okDescribe(codec.DescribeResult{})))
	b.pipe("describe-repeated", ruleLastWins, descDoc(`{"is_readonly":true,"params":[{"name":"a"}],"params":[],"is_readonly":false}`), resp(okDescribe(codec.DescribeResult{})))
	b.fail(KindPipeline, "describe-param-null", ruleType, descDoc(`{"params":[null]}`))
	b.fail(KindPipeline, "describe-param-string", ruleType, descDoc(`{"params":["a"]}`))
	b.fail(KindPipeline, "describe-param-name-number", ruleType, descDoc(`{"params":[{"name":1}]}`))
	b.fail(KindPipeline, "describe-is-explain-string", ruleType, descDoc(`{"is_explain":"true"}`))
	b.fail(KindPipeline, "describe-is-readonly-number", ruleType, descDoc(`{"is_readonly":0}`))
	b.fail(KindPipeline, "describe-cols-object", ruleType, descDoc(`{"cols":{}}`))

	// Depth.
	b.pipe("depth-64", ruleDepth, `{"x":`+deep(codec.MaxDepth-1)+`,"results":[]}`, empty)
	b.fail(KindPipeline, "depth-65", ruleDepth, `{"x":`+deep(codec.MaxDepth)+`,"results":[]}`)
	b.pipe("depth-64-objects", ruleDepth, `{"x":`+deepObj(codec.MaxDepth-1)+`}`, empty)
	b.fail(KindPipeline, "depth-65-objects", ruleDepth, `{"x":`+deepObj(codec.MaxDepth)+`}`)
	// The value object of a row is at depth 8: document, results, result,
	// response, result, rows, row, value.
	b.pipe("depth-64-in-value", ruleDepth, valueDoc(`{"type":"null","x":`+deep(codec.MaxDepth-8)+`}`), valueWant(vN()))
	b.fail(KindPipeline, "depth-65-in-value", ruleDepth, valueDoc(`{"type":"null","x":`+deep(codec.MaxDepth-7)+`}`))
	b.pipe("depth-brackets-in-strings", ruleDepth, `{"x":"`+strings.Repeat("[{", 100)+`","y":["\"[[[["],"results":[]}`, empty)
	b.fail(KindPipeline, "depth-100000", ruleDepth, `{"x":`+deep(100000)+`}`)
	b.fail(KindPipeline, "depth-100000-unclosed", ruleDepth, `{"x":`+strings.Repeat("[", 100000))
}

func manyRows(n int) codec.StmtResult {
	r := codec.StmtResult{Cols: cols("a", "", "b", ""), NumRows: n}
	for i := 0; i < n; i++ {
		r.Values = append(r.Values, vI(1), vN())
	}
	return r
}

// addSyntax adds inputs that are not strict JSON, or not UTF-8, in known and
// unknown places of each kind of message.
func addSyntax(b *builder) {
	type place struct {
		kind Kind
		wrap func(string) string // puts a JSON fragment in a value position
	}
	places := map[string]place{
		"unknown": {KindPipeline, func(s string) string { return `{"x":` + s + `,"results":[]}` }},
		"value":   {KindPipeline, func(s string) string { return valueDoc(`{"type":"text","value":` + s + `}`) }},
		"baton":   {KindPipeline, func(s string) string { return `{"baton":` + s + `}` }},
		"header":  {KindCursorHeader, func(s string) string { return `{"baton":` + s + `,"base_url":null}` }},
		"entry":   {KindCursorEntry, func(s string) string { return `{"type":"step_begin","step":0,"cols":[{"name":` + s + `}]}` }},
		"error":   {KindError, func(s string) string { return `{"message":` + s + `,"code":"C"}` }},
	}
	bad := map[string]string{
		"bad-escape-x":            `"\x41"`,
		"bad-escape-U":            `"\U0041"`,
		"bad-escape-short-u":      `"\u12"`,
		"bad-escape-hex":          `"\u12g4"`,
		"bad-escape-single-quote": `"\'"`,
		"bad-escape-end":          `"\"`,
		"raw-nul":                 "\"a\x00b\"",
		"raw-newline":             "\"a\nb\"",
		"raw-tab":                 "\"a\tb\"",
		"raw-0x1f":                "\"\x1f\"",
		"unterminated-string":     `"abc`,
		"single-quotes":           `'abc'`,
		"leading-zero":            `01`,
		"leading-zeros-negative":  `-01`,
		"leading-zero-fraction":   `00.5`,
		"plus-sign":               `+1`,
		"bare-minus":              `-`,
		"dot-first":               `.5`,
		"dot-last":                `1.`,
		"exponent-empty":          `1e`,
		"exponent-sign-only":      `1e+`,
		"hex-number":              `0x10`,
		"nan":                     `NaN`,
		"infinity":                `Infinity`,
		"true-truncated":          `tru`,
		"null-truncated":          `nul`,
		"null-uppercase":          `NULL`,
		"false-extended":          `falsey`,
		"trailing-comma-array":    `[1,]`,
		"trailing-comma-object":   `{"a":1,}`,
		"missing-colon":           `{"a" 1}`,
		"missing-comma":           `[1 2]`,
		"unquoted-key":            `{a:1}`,
		"array-unclosed":          `[1`,
		"object-unclosed":         `{"a":1`,
		"mismatched-brackets":     `[}`,
		"comment":                 `/*x*/1`,
		"vertical-tab":            "\v1",
		"form-feed":               "\f1",
		"nbsp":                    "\u00a01",
		"empty":                   ``,
	}
	for _, pname := range sortedKeys(places) {
		p := places[pname]
		for _, bname := range sortedKeys(bad) {
			frag := bad[bname]
			b.add(Fixture{Name: p.kind.String() + "/syntax-" + pname + "-" + bname, Kind: p.kind, Input: []byte(p.wrap(frag)), Fail: true, Rule: ruleSyntax})
		}
		// Invalid UTF-8 inside a string in that place.
		utf8Frags := map[string]string{
			"ff": "\xff", "overlong-slash": "\xc0\xaf", "overlong-nul": "\xc0\x80", "surrogate": "\xed\xb0\x80",
			"truncated-3": "\xe2\x82", "truncated-4": "\xf0\x9f\x98", "above-max": "\xf4\x90\x80\x80", "continuation": "\xbf",
		}
		for _, bname := range sortedKeys(utf8Frags) {
			frag := utf8Frags[bname]
			b.failUTF8(p.kind, "utf8-"+pname+"-"+bname, []byte(p.wrap(`"a`+frag+`b"`)))
		}
		// Trailing garbage.
		tails := map[string]string{
			"letter": " x", "second-object": "{}", "comma": ",", "nul": "\x00", "bracket": "]", "brace": "}", "number": " 1",
		}
		for _, tname := range sortedKeys(tails) {
			tail := tails[tname]
			b.add(Fixture{Name: p.kind.String() + "/trailing-" + pname + "-" + tname, Kind: p.kind, Input: []byte(p.wrap(`"s"`) + tail), Fail: true, Rule: ruleTrailing})
		}
	}
	b.failUTF8(KindPipeline, "utf8-in-key", []byte("{\"res\xffults\":[]}"))
	b.failUTF8(KindPipeline, "utf8-outside-string", []byte("{\"results\":[]}\xff"))
	b.failUTF8(KindPipeline, "utf8-in-whitespace", []byte("{\xa0\"results\":[]}"))
	b.fail(KindPipeline, "bom", ruleSyntax, "\ufeff{}")
	b.fail(KindPipeline, "repeated-colon", ruleSyntax, `{"results"::[]}`)
	b.fail(KindPipeline, "object-as-key", ruleSyntax, `{{}:1}`)
}

func addCursor(b *builder) {
	// Headers.
	b.header("nulls", ruleNull, `{"baton":null,"base_url":null}`, codec.CursorHeader{})
	b.header("empty", ruleNull, `{}`, codec.CursorHeader{})
	b.header("values", ruleObjects, `{"base_url":"https://h/p","baton":"b"}`, codec.CursorHeader{Baton: "b", BaseURL: "https://h/p"})
	b.header("unknown-fields", ruleUnknown, `{"baton":"b","Baton":"c","steps":[{}],"base_url":null}`, codec.CursorHeader{Baton: "b"})
	b.header("repeated", ruleLastWins, `{"baton":"a","baton":"b","base_url":"u","base_url":null}`, codec.CursorHeader{Baton: "b"})
	b.fail(KindCursorHeader, "baton-number", ruleType, `{"baton":1}`)
	b.fail(KindCursorHeader, "base-url-array", ruleType, `{"base_url":["u"]}`)
	b.fail(KindCursorHeader, "array", ruleTop, `[]`)
	b.fail(KindCursorHeader, "null", ruleTop, `null`)
	b.fail(KindCursorHeader, "empty-input", ruleSyntax, ``)
	b.fail(KindCursorHeader, "two-lines", ruleTrailing, "{\"baton\":null}\n{\"type\":\"replication_index\"}")
	b.fail(KindCursorHeader, "depth-65", ruleDepth, `{"x":`+deep(codec.MaxDepth)+`}`)
	b.header("depth-64", ruleDepth, `{"x":`+deep(codec.MaxDepth-1)+`}`, codec.CursorHeader{})

	// Entries.
	e := func(name, rule, input string, want codec.CursorEntry) { b.entry(name, rule, input, want) }
	ef := func(name, rule, input string) { b.fail(KindCursorEntry, name, rule, input) }
	e("step-begin", ruleObjects, `{"type":"step_begin","step":3,"cols":[{"name":"a","decltype":"TEXT"},{"name":"b","decltype":null}]}`,
		codec.CursorEntry{Type: codec.EntryStepBegin, Step: 3, Cols: cols("a", "TEXT", "b", "")})
	e("step-begin-reordered", ruleObjects, `{"cols":[],"step":1,"type":"step_begin"}`, codec.CursorEntry{Type: codec.EntryStepBegin, Step: 1})
	e("step-begin-minimal", ruleNull, `{"type":"step_begin"}`, codec.CursorEntry{Type: codec.EntryStepBegin})
	e("step-begin-nulls", ruleNull, `{"type":"step_begin","step":null,"cols":null}`, codec.CursorEntry{Type: codec.EntryStepBegin})
	e("step-begin-step-string", ruleUint, `{"type":"step_begin","step":"7"}`, codec.CursorEntry{Type: codec.EntryStepBegin, Step: 7})
	e("step-begin-step-max", ruleUint, `{"type":"step_begin","step":4294967295}`, codec.CursorEntry{Type: codec.EntryStepBegin, Step: math.MaxUint32})
	e("step-begin-ignores-row", ruleIrrel, `{"type":"step_begin","step":0,"row":"x","error":5,"affected_row_count":"y","replication_index":[]}`, codec.CursorEntry{Type: codec.EntryStepBegin})
	e("step-begin-repeated-cols", ruleLastWins, `{"type":"step_begin","cols":[{"name":"a"}],"cols":[{"name":"b"}]}`, codec.CursorEntry{Type: codec.EntryStepBegin, Cols: cols("b", "")})
	e("step-begin-col-nulls", ruleNull, `{"type":"step_begin","cols":[{}, {"name":null,"decltype":null}]}`, codec.CursorEntry{Type: codec.EntryStepBegin, Cols: cols("", "", "", "")})
	ef("step-begin-step-too-big", ruleUint, `{"type":"step_begin","step":4294967296}`)
	ef("step-begin-step-negative", ruleUint, `{"type":"step_begin","step":-1}`)
	ef("step-begin-step-fraction", ruleUint, `{"type":"step_begin","step":1.5}`)
	ef("step-begin-step-bool", ruleType, `{"type":"step_begin","step":true}`)
	ef("step-begin-step-bad-string", ruleUint, `{"type":"step_begin","step":"one"}`)
	ef("step-begin-cols-object", ruleType, `{"type":"step_begin","cols":{}}`)
	ef("step-begin-col-null", ruleType, `{"type":"step_begin","cols":[null]}`)
	ef("step-begin-col-name-number", ruleType, `{"type":"step_begin","cols":[{"name":5}]}`)

	e("row", ruleValue, `{"type":"row","row":[{"type":"integer","value":"1"},{"type":"null"},{"type":"text","value":"t"},{"type":"blob","base64":"qw"},{"type":"float","value":null}]}`,
		codec.CursorEntry{Type: codec.EntryRow, Row: row(vI(1), vN(), vT("t"), vB(0xab), vF(nullFloat))})
	e("row-empty", ruleObjects, `{"type":"row","row":[]}`, codec.CursorEntry{Type: codec.EntryRow})
	e("row-null", ruleNull, `{"type":"row","row":null}`, codec.CursorEntry{Type: codec.EntryRow})
	e("row-absent", ruleNull, `{"type":"row"}`, codec.CursorEntry{Type: codec.EntryRow})
	e("row-first", ruleObjects, `{"row":[{"type":"null"}],"type":"row"}`, codec.CursorEntry{Type: codec.EntryRow, Row: row(vN())})
	e("row-repeated", ruleLastWins, `{"type":"row","row":[{"type":"null"},{"type":"null"}],"row":[{"type":"integer","value":5}]}`, codec.CursorEntry{Type: codec.EntryRow, Row: row(vI(5))})
	e("row-ignores-cols", ruleIrrel, `{"type":"row","cols":5,"step":"x","row":[]}`, codec.CursorEntry{Type: codec.EntryRow})
	ef("row-value-null", ruleValue, `{"type":"row","row":[null]}`)
	ef("row-object", ruleType, `{"type":"row","row":{}}`)
	ef("row-nested", ruleType, `{"type":"row","row":[[{"type":"null"}]]}`)
	ef("row-string", ruleType, `{"type":"row","row":"[]"}`)

	e("step-end", ruleObjects, `{"type":"step_end","affected_row_count":2,"last_insert_rowid":2}`,
		codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: 2, LastInsertRowID: 2, HasLastInsertRowID: true})
	e("step-end-rowid-string", ruleInt64, `{"type":"step_end","affected_row_count":"2","last_insert_rowid":"-2"}`,
		codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: 2, LastInsertRowID: -2, HasLastInsertRowID: true})
	e("step-end-nulls", ruleNull, `{"type":"step_end","affected_row_count":null,"last_insert_rowid":null}`, codec.CursorEntry{Type: codec.EntryStepEnd})
	e("step-end-minimal", ruleNull, `{"type":"step_end"}`, codec.CursorEntry{Type: codec.EntryStepEnd})
	e("step-end-extensions", ruleUnknown, `{"type":"step_end","affected_row_count":0,"last_insert_rowid":0,"rows_read":"x","rows_written":[],"query_duration_ms":{}}`,
		codec.CursorEntry{Type: codec.EntryStepEnd, HasLastInsertRowID: true})
	e("step-end-ignores-step", ruleIrrel, `{"type":"step_end","step":"x","cols":1,"row":2,"error":3}`, codec.CursorEntry{Type: codec.EntryStepEnd})
	e("step-end-rowid-min", ruleInt64, `{"type":"step_end","last_insert_rowid":-9223372036854775808}`,
		codec.CursorEntry{Type: codec.EntryStepEnd, LastInsertRowID: math.MinInt64, HasLastInsertRowID: true})
	e("step-end-repeated-null", ruleNull, `{"type":"step_end","last_insert_rowid":1,"last_insert_rowid":null}`, codec.CursorEntry{Type: codec.EntryStepEnd})
	ef("step-end-rowid-fraction", ruleInt64, `{"type":"step_end","last_insert_rowid":2.0}`)
	ef("step-end-rowid-overflow", ruleInt64, `{"type":"step_end","last_insert_rowid":9223372036854775808}`)
	ef("step-end-rowid-bool", ruleType, `{"type":"step_end","last_insert_rowid":false}`)
	ef("step-end-affected-negative", ruleUint, `{"type":"step_end","affected_row_count":-1}`)
	ef("step-end-affected-overflow", ruleUint, `{"type":"step_end","affected_row_count":18446744073709551616}`)
	ef("step-end-affected-object", ruleType, `{"type":"step_end","affected_row_count":{}}`)

	e("step-error", ruleObjects, `{"type":"step_error","step":4,"error":{"message":"m","code":"c"}}`,
		codec.CursorEntry{Type: codec.EntryStepError, Step: 4, Error: codec.Error{Message: "m", Code: "c"}})
	e("step-error-minimal", ruleNull, `{"type":"step_error"}`, codec.CursorEntry{Type: codec.EntryStepError})
	e("step-error-null-error", ruleNull, `{"type":"step_error","step":1,"error":null}`, codec.CursorEntry{Type: codec.EntryStepError, Step: 1})
	e("step-error-repeated-error", ruleLastWins, `{"type":"step_error","error":{"message":"a","code":"b"},"error":{"message":"c"}}`,
		codec.CursorEntry{Type: codec.EntryStepError, Error: codec.Error{Message: "c"}})
	ef("step-error-error-string", ruleType, `{"type":"step_error","error":"m"}`)
	ef("step-error-step-string", ruleUint, `{"type":"step_error","step":"x","error":{}}`)
	ef("step-error-message-number", ruleType, `{"type":"step_error","error":{"message":5}}`)

	e("error", ruleObjects, `{"type":"error","error":{"message":"Transaction timed out","code":"TRANSACTION_TIMEOUT"}}`,
		codec.CursorEntry{Type: codec.EntryError, Error: codec.Error{Message: "Transaction timed out", Code: "TRANSACTION_TIMEOUT"}})
	e("error-absent", ruleNull, `{"type":"error"}`, codec.CursorEntry{Type: codec.EntryError})
	e("error-ignores-step", ruleIrrel, `{"type":"error","step":"x","error":{}}`, codec.CursorEntry{Type: codec.EntryError})
	ef("error-error-array", ruleType, `{"type":"error","error":[]}`)

	e("replication-index", ruleUint, `{"type":"replication_index","replication_index":21}`,
		codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: 21, HasReplicationIndex: true})
	e("replication-index-string", ruleUint, `{"type":"replication_index","replication_index":"21"}`,
		codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: 21, HasReplicationIndex: true})
	e("replication-index-null", ruleNull, `{"type":"replication_index","replication_index":null}`, codec.CursorEntry{Type: codec.EntryReplicationIndex})
	e("replication-index-absent", ruleNull, `{"type":"replication_index"}`, codec.CursorEntry{Type: codec.EntryReplicationIndex})
	e("replication-index-max", ruleUint, `{"type":"replication_index","replication_index":18446744073709551615}`,
		codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: math.MaxUint64, HasReplicationIndex: true})
	ef("replication-index-negative", ruleUint, `{"type":"replication_index","replication_index":-1}`)
	ef("replication-index-fraction", ruleUint, `{"type":"replication_index","replication_index":21.0}`)
	ef("replication-index-bool", ruleType, `{"type":"replication_index","replication_index":true}`)

	e("unknown-type", ruleEntry, `{"type":"progress","step":"x","row":5,"cols":"y","error":[],"replication_index":{}}`, codec.CursorEntry{})
	e("unknown-type-case", ruleEntry, `{"type":"ROW","row":[{"type":"integer","value":"1"}]}`, codec.CursorEntry{})
	e("unknown-type-empty", ruleEntry, `{"type":""}`, codec.CursorEntry{})
	e("no-type", ruleEntry, `{"step":0,"cols":[]}`, codec.CursorEntry{})
	e("type-null", ruleEntry, `{"type":null,"row":[]}`, codec.CursorEntry{})
	e("empty-object", ruleEntry, `{}`, codec.CursorEntry{})
	e("type-repeated", ruleLastWins, `{"type":"row","row":[],"type":"step_end","affected_row_count":1}`, codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: 1})
	e("type-repeated-null", ruleNull, `{"type":"row","type":null}`, codec.CursorEntry{})
	e("type-key-case", ruleUnknown, `{"Type":"row","row":[]}`, codec.CursorEntry{})
	e("type-escaped", ruleStrings, `{"type":"\u0072ow","row":[]}`, codec.CursorEntry{Type: codec.EntryRow})
	e("depth-64", ruleDepth, `{"type":"row","row":[{"type":"null","x":`+deep(codec.MaxDepth-3)+`}]}`, codec.CursorEntry{Type: codec.EntryRow, Row: row(vN())})
	ef("depth-65", ruleDepth, `{"type":"row","row":[{"type":"null","x":`+deep(codec.MaxDepth-2)+`}]}`)
	ef("depth-65-unknown-type", ruleDepth, `{"type":"nope","x":`+deep(codec.MaxDepth)+`}`)
	ef("type-number", ruleType, `{"type":1}`)
	ef("type-array", ruleType, `{"type":["row"]}`)
	ef("unknown-type-invalid-json", ruleUnknown, `{"type":"nope","x":[1,]}`)
	ef("array", ruleTop, `[{"type":"row"}]`)
	ef("null", ruleTop, `null`)
	ef("empty-input", ruleSyntax, ``)
	ef("two-entries", ruleTrailing, `{"type":"row","row":[]}{"type":"row","row":[]}`)
	ef("two-lines", ruleTrailing, "{\"type\":\"row\",\"row\":[]}\n{\"type\":\"row\",\"row\":[]}")
}

func addHTTPErrors(b *builder) {
	b.httpErr("sqld-stream-expired", ruleSQLD, string(SQLDFile("http_error_expired.json")),
		codec.Error{Message: "The stream has expired due to inactivity", Code: "STREAM_EXPIRED"})
	b.httpErr("sqld-internal", ruleSQLD, string(SQLDFile("http_error_utf8.json")),
		codec.Error{Message: "invalid utf-8 sequence of 1 bytes from index 0"})
	b.httpErr("hrana", ruleHTTPErr, `{"message":"m","code":"C"}`, codec.Error{Message: "m", Code: "C"})
	b.httpErr("hrana-no-code", ruleHTTPErr, `{"message":"m"}`, codec.Error{Message: "m"})
	b.httpErr("hrana-null-code", ruleNull, `{"message":"m","code":null}`, codec.Error{Message: "m"})
	b.httpErr("sqld", ruleHTTPErr, `{"error":"Unauthorized: `+"`The JWT is invalid`"+`"}`, codec.Error{Message: "Unauthorized: `The JWT is invalid`"})
	b.httpErr("both-message-first", ruleHTTPErr, `{"message":"m","error":"e"}`, codec.Error{Message: "m"})
	b.httpErr("both-error-first", ruleHTTPErr, `{"error":"e","message":"m","code":"C"}`, codec.Error{Message: "m", Code: "C"})
	b.httpErr("message-null", ruleHTTPErr, `{"message":null,"error":"e"}`, codec.Error{Message: "e"})
	b.httpErr("message-repeated-null", ruleHTTPErr, `{"error":"e","message":"m","message":null}`, codec.Error{Message: "e"})
	b.httpErr("message-empty", ruleHTTPErr, `{"message":"","error":"e"}`, codec.Error{})
	b.httpErr("sqld-with-code", ruleHTTPErr, `{"error":"e","code":"C"}`, codec.Error{Message: "e", Code: "C"})
	b.httpErr("empty", ruleNull, `{}`, codec.Error{})
	b.httpErr("nulls", ruleNull, `{"message":null,"code":null,"error":null}`, codec.Error{})
	b.httpErr("unknown-fields", ruleUnknown, `{"Message":"x","ERROR":"y","status":500,"message":"m","details":{"a":[1]}}`, codec.Error{Message: "m"})
	b.httpErr("escapes", ruleStrings, `{"message":"a\nb\u00e9\ud800"}`, codec.Error{Message: "a\nbé\ufffd"})
	b.httpErr("whitespace", ruleWS, "\n { \"message\" : \"m\" } \n", codec.Error{Message: "m"})
	b.fail(KindError, "text-plain", ruleTop, "Received an invalid baton")
	b.fail(KindError, "empty-input", ruleSyntax, "")
	b.fail(KindError, "message-number", ruleType, `{"message":1}`)
	b.fail(KindError, "code-number", ruleType, `{"message":"m","code":1}`)
	b.fail(KindError, "error-object", ruleType, `{"error":{"message":"m"}}`)
	b.fail(KindError, "error-object-with-message", ruleType, `{"message":"m","error":{"message":"m"}}`)
	b.fail(KindError, "array", ruleTop, `[{"message":"m"}]`)
	b.fail(KindError, "string", ruleTop, `"m"`)
	b.fail(KindError, "null", ruleTop, `null`)
	b.fail(KindError, "depth-65", ruleDepth, `{"message":"m","x":`+deep(codec.MaxDepth)+`}`)
	b.httpErr("depth-64", ruleDepth, `{"message":"m","x":`+deep(codec.MaxDepth-1)+`}`, codec.Error{Message: "m"})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addRepeated pins down repeated keys whose earlier occurrences are invalid.
func addRepeated(b *builder) {
	res := func(fields string) string { return resultDoc(fields) }
	resp1 := func(response string) string { return doc(okResp(response)) }
	b.fail(KindPipeline, "repeat-results-null-first", ruleRepeat, `{"results":[null],"results":[]}`)
	b.fail(KindPipeline, "repeat-results-unknown-type-first", ruleRepeat, `{"results":[{"type":"nope"}],"results":[]}`)
	b.fail(KindPipeline, "repeat-baton-number-first", ruleRepeat, `{"baton":1,"baton":"b"}`)
	b.fail(KindPipeline, "repeat-cols-null-first", ruleRepeat, res(`"cols":[null],"cols":[]`))
	b.fail(KindPipeline, "repeat-rows-null-first", ruleRepeat, res(`"rows":[null],"rows":[]`))
	b.fail(KindPipeline, "repeat-rows-unknown-value-first", ruleRepeat, res(`"rows":[[{"type":"x"}]],"rows":[]`))
	b.fail(KindPipeline, "repeat-rows-bad-integer-first", ruleRepeat, res(`"rows":[[{"type":"integer","value":"x"}]],"rows":[]`))
	b.fail(KindPipeline, "repeat-rowid-bad-first", ruleRepeat, res(`"last_insert_rowid":"x","last_insert_rowid":1`))
	b.fail(KindPipeline, "repeat-params-null-first", ruleRepeat, doc(okResp(`{"type":"describe","result":{"params":[null],"params":[]}}`)))
	b.pipe("repeat-value-bad-payload-first", ruleRepeat, valueDoc(`{"type":"integer","value":"x","value":"1"}`), valueWant(vI(1)))
	b.pipe("repeat-value-payload-before-type", ruleRepeat, valueDoc(`{"value":[],"base64":5,"value":"2","type":"integer"}`), valueWant(vI(2)))

	b.fail(KindPipeline, "repeat-response-after-type-bad-first", ruleRepeat, doc(`{"type":"ok","response":{"type":"nope"},"response":{"type":"close"}}`))
	b.pipe("repeat-response-before-type-bad-first", ruleRepeat, doc(`{"response":{"type":"nope"},"type":"ok","response":{"type":"close"}}`), resp(okType(codec.RequestClose)))
	b.pipe("repeat-response-not-object-first", ruleRepeat, doc(`{"type":"ok","response":5,"response":{"type":"close"}}`), resp(okType(codec.RequestClose)))
	b.pipe("repeat-response-under-error-type", ruleRepeat, doc(`{"type":"error","response":{"type":"nope"},"type":"ok","response":{"type":"close"}}`), resp(okType(codec.RequestClose)))
	b.fail(KindPipeline, "repeat-error-checked-then-ok", ruleRepeat, doc(`{"type":"error","error":{"message":5},"type":"ok","response":{"type":"close"}}`))
	b.pipe("repeat-error-not-object-first", ruleRepeat, doc(`{"type":"error","error":5,"error":{}}`), resp(errRes("", "")))
	b.fail(KindPipeline, "repeat-result-checked-as-execute", ruleRepeat, resp1(`{"type":"execute","result":{"rows":[[{"type":"null"}]]},"type":"close"}`))
	b.pipe("repeat-result-before-type-unused", ruleRepeat, resp1(`{"result":{"rows":[[{"type":"null"}]]},"type":"close"}`), resp(okType(codec.RequestClose)))
	b.fail(KindPipeline, "repeat-result-batch-both-first", ruleRepeat, resp1(`{"type":"batch","result":{"step_results":[{}],"step_errors":[{}]},"result":{}}`))
	b.pipe("repeat-result-not-object-first", ruleRepeat, resp1(`{"type":"execute","result":5,"result":{}}`), resp(okExec(codec.StmtResult{})))
	b.pipe("repeat-result-retyped", ruleRepeat, resp1(`{"type":"execute","result":{"cols":[{"name":"a"}]},"type":"describe"}`),
		resp(okDescribe(codec.DescribeResult{Cols: cols("a", "")})))
	b.pipe("repeat-result-null-last", ruleNull, resp1(`{"type":"execute","result":{"cols":[{"name":"a"}]},"result":null}`), resp(okExec(codec.StmtResult{})))
	b.pipe("repeat-result-null-last-retyped", ruleNull, resp1(`{"type":"execute","result":{"cols":[{"name":"a"}]},"type":"batch","result":null,"type":"execute"}`),
		resp(okExec(codec.StmtResult{})))
	b.pipe("repeat-autocommit-bad-first", ruleRepeat, resp1(`{"type":"get_autocommit","is_autocommit":"x","is_autocommit":true}`), resp(okAutocommit(true)))
	b.pipe("repeat-batch-both-fixed-later", ruleRepeat, resp1(`{"type":"batch","result":{"step_results":[{}],"step_errors":[{}],"step_errors":[]}}`),
		resp(okBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(codec.StmtResult{})}})))

	b.fail(KindCursorEntry, "repeat-step-after-type-bad-first", ruleRepeat, `{"type":"step_begin","step":-1,"step":1}`)
	b.entry("repeat-step-before-type-bad-first", ruleRepeat, `{"step":-1,"type":"step_begin","step":1}`, codec.CursorEntry{Type: codec.EntryStepBegin, Step: 1})
	b.entry("repeat-step-before-type", ruleRepeat, `{"step":-1,"step":2,"type":"step_begin"}`, codec.CursorEntry{Type: codec.EntryStepBegin, Step: 2})
	b.fail(KindCursorEntry, "repeat-row-null-value-first", ruleRepeat, `{"type":"row","row":[null],"row":[]}`)
	b.fail(KindCursorEntry, "repeat-row-not-array-first", ruleRepeat, `{"type":"row","row":5,"row":[]}`)
	b.fail(KindCursorEntry, "repeat-cols-null-first", ruleRepeat, `{"type":"step_begin","cols":[null],"cols":[]}`)
	b.fail(KindCursorEntry, "repeat-error-not-object-first", ruleRepeat, `{"type":"step_error","error":5,"error":{}}`)
	b.fail(KindCursorEntry, "repeat-row-checked-then-retyped", ruleRepeat, `{"type":"row","row":5,"type":"step_begin","cols":[]}`)
	b.entry("repeat-row-dropped-when-retyped", ruleRepeat, `{"type":"row","row":[{"type":"null"}],"type":"step_begin","cols":[]}`, codec.CursorEntry{Type: codec.EntryStepBegin})
	b.entry("repeat-unused-member-unchecked", ruleRepeat, `{"row":5,"type":"step_begin"}`, codec.CursorEntry{Type: codec.EntryStepBegin})
}
