package direct

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// pipe wraps stream results into a pipeline response body.
func pipe(results ...string) string {
	return `{"baton":null,"base_url":null,"results":[` + strings.Join(results, ",") + `]}`
}

// exec wraps a StmtResult object into an ok execute stream result.
func exec(result string) string {
	return `{"type":"ok","response":{"type":"execute","result":` + result + `}}`
}

// oneRow builds a StmtResult with one row holding the given value objects.
func oneRow(values ...string) string {
	cols := make([]string, len(values))
	for i := range cols {
		cols[i] = `{"name":"c","decltype":null}`
	}
	return `{"cols":[` + strings.Join(cols, ",") + `],"rows":[[` + strings.Join(values, ",") + `]]}`
}

func decodePipeline(t *testing.T, in string) (*codec.PipelineResponse, error) {
	t.Helper()
	var r codec.PipelineResponse
	err := Codec.DecodePipelineResponse([]byte(in), &r)
	if err != nil {
		checkDecodeError(t, in, err)
	}
	return &r, err
}

// checkDecodeError checks the form of a decoding error.
func checkDecodeError(t *testing.T, in string, err error) {
	t.Helper()
	var de *codec.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("%s: error %T %v is not a *codec.DecodeError", in, err, err)
	}
	if de.Codec != "direct" {
		t.Errorf("%s: Codec = %q", in, de.Codec)
	}
	if de.Offset < 0 || de.Offset > len(in) {
		t.Errorf("%s: Offset %d out of [0, %d]", in, de.Offset, len(in))
	}
	if de.Msg == "" {
		t.Errorf("%s: empty Msg", in)
	}
}

// checkDecodeFails checks that decode, which returns what it decoded (for
// the failure message) and its error, refuses in with an error of the
// documented form.
func checkDecodeFails(t *testing.T, in string, decode func(in []byte) (string, error)) {
	t.Helper()
	if got, err := decode([]byte(in)); err == nil {
		t.Errorf("%s: decoded to %s, want an error", in, got)
	} else {
		checkDecodeError(t, in, err)
	}
}

func TestDecodeValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // Value.String() and type; "" for an error
	}{
		{`{"type":"null"}`, "NULL null"},
		{`{"type":"null","value":{"x":[1,2,{"y":null}]},"base64":5}`, "NULL null"},
		{`{"type":"integer","value":"1"}`, "1 integer"},
		{`{"type":"integer","value":"-1"}`, "-1 integer"},
		{`{"type":"integer","value":"+5"}`, "5 integer"},
		{`{"type":"integer","value":"007"}`, "7 integer"},
		{`{"type":"integer","value":"-0"}`, "0 integer"},
		{`{"type":"integer","value":"9223372036854775807"}`, "9223372036854775807 integer"},
		{`{"type":"integer","value":"-9223372036854775808"}`, "-9223372036854775808 integer"},
		{`{"type":"integer","value":"\u0031\u0032"}`, "12 integer"},
		{`{"type":"integer","value":12}`, "12 integer"},
		{`{"type":"integer","value":-0}`, "0 integer"},
		{`{"type":"integer","value":-9223372036854775808}`, "-9223372036854775808 integer"},
		{`{"value":"3","type":"integer"}`, "3 integer"},
		{`{"type":"integer","value":"1","value":"2"}`, "2 integer"},
		{`{"type":"text","value":"1","type":"integer"}`, "1 integer"},
		{`{"type":"integer","value":"1","extra":[true,false,null,"s",-1.5e-3,{}]}`, "1 integer"},
		{`{"type":"integer","value":"9223372036854775808"}`, ""},
		{`{"type":"integer","value":"-9223372036854775809"}`, ""},
		{`{"type":"integer","value":9223372036854775808}`, ""},
		{`{"type":"integer","value":"1.0"}`, ""},
		{`{"type":"integer","value":1.0}`, ""},
		{`{"type":"integer","value":1e2}`, ""},
		{`{"type":"integer","value":""}`, ""},
		{`{"type":"integer","value":"+"}`, ""},
		{`{"type":"integer","value":"1_000"}`, ""},
		{`{"type":"integer","value":" 1"}`, ""},
		{`{"type":"integer","value":"0x10"}`, ""},
		{`{"type":"integer","value":true}`, ""},
		{`{"type":"integer","value":null}`, ""},
		{`{"type":"integer"}`, ""},
		{`{"type":"integer","value":"1","value":null}`, ""},
		{`{"type":"float","value":1.5}`, "1.5 float"},
		{`{"type":"float","value":1}`, "1 float"},
		{`{"type":"float","value":-0.0}`, "-0 float"},
		{`{"type":"float","value":-0}`, "-0 float"},
		{`{"type":"float","value":1E+2}`, "100 float"},
		{`{"type":"float","value":1e-400}`, "0 float"},
		{`{"type":"float","value":1.7976931348623157e308}`, "1.7976931348623157e+308 float"},
		{`{"type":"float","value":5e-324}`, "5e-324 float"},
		{`{"type":"float","value":null}`, "NaN float"},
		{`{"type":"float","value":1e400}`, ""},
		{`{"type":"float","value":-1e400}`, ""},
		{`{"type":"float","value":"1.5"}`, ""},
		{`{"type":"float","value":true}`, ""},
		{`{"type":"float"}`, ""},
		{`{"type":"float","value":01}`, ""},
		{`{"type":"float","value":.5}`, ""},
		{`{"type":"float","value":1.}`, ""},
		{`{"type":"float","value":+1}`, ""},
		{`{"type":"float","value":NaN}`, ""},
		{`{"type":"float","value":Infinity}`, ""},
		{`{"type":"float","value":-Infinity}`, ""},
		{`{"type":"text","value":""}`, `"" text`},
		{`{"type":"text","value":"héllo 😀"}`, `"héllo 😀" text`},
		{`{"type":"text","value":"a\"b\\c\/d\be\ff\ng\rh\ti\u0000j\u00e9\u20ac"}`, `"a\"b\\c/d\be\ff\ng\rh\ti\x00jé€" text`},
		{`{"type":"text","value":"\ud83d\ude00"}`, `"😀" text`},
		{`{"type":"text","value":"\uD83D\uDE00"}`, `"😀" text`},
		{`{"type":"text","value":"\ud800"}`, `"�" text`},
		{`{"type":"text","value":"\udc00"}`, `"�" text`},
		{`{"type":"text","value":"\ud800x"}`, `"�x" text`},
		{`{"type":"text","value":"\ud800\u0041"}`, `"�A" text`},
		{`{"type":"text","value":"\udc00\ud800"}`, `"��" text`},
		{`{"type":"text","value":"\ud800\ud800\udc00"}`, `"�𐀀" text`},
		{`{"type":"text","value":"\ud83d\\ude00"}`, `"�\\ude00" text`},
		{"{\"type\":\"text\",\"value\":\"\x7f\u2028\"}", `"\x7f\u2028" text`},
		{`{"type":"text","value":"a","value":"b"}`, `"b" text`},
		{`{"type":"text","value":null}`, ""},
		{`{"type":"text","value":5}`, ""},
		{`{"type":"text","value":["a"]}`, ""},
		{`{"type":"text"}`, ""},
		{`{"type":"text","base64":"qw"}`, ""},
		{"{\"type\":\"text\",\"value\":\"a\tb\"}", ""},
		{"{\"type\":\"text\",\"value\":\"a\nb\"}", ""},
		{"{\"type\":\"text\",\"value\":\"\x1f\"}", ""},
		{`{"type":"text","value":"\x"}`, ""},
		{`{"type":"text","value":"\u12"}`, ""},
		{`{"type":"text","value":"\u12G4"}`, ""},
		{`{"type":"text","value":"\U1234"}`, ""},
		{`{"type":"text","value":"\'"}`, ""},
		{`{"type":"text","value":"abc}`, ""},
		{`{"type":"blob","base64":""}`, "x'' blob"},
		{`{"type":"blob","base64":"qw"}`, "x'ab' blob"},
		{`{"type":"blob","base64":"qw=="}`, "x'ab' blob"},
		{`{"type":"blob","base64":"+/8"}`, "x'fbff' blob"},
		{`{"type":"blob","base64":"+/8="}`, "x'fbff' blob"},
		{`{"type":"blob","base64":"AAEC/w"}`, "x'000102ff' blob"},
		{`{"type":"blob","base64":"AAEC"}`, "x'000102' blob"},
		{`{"type":"blob","base64":"\u0071w"}`, "x'ab' blob"},
		{`{"type":"blob","base64":"+\/8"}`, "x'fbff' blob"},
		{`{"type":"blob","value":"x","base64":"qw"}`, "x'ab' blob"},
		{`{"type":"blob","base64":"qw="}`, ""},
		{`{"type":"blob","base64":"qw==="}`, ""},
		{`{"type":"blob","base64":"q==="}`, ""},
		{`{"type":"blob","base64":"===="}`, ""},
		{`{"type":"blob","base64":"="}`, ""},
		{`{"type":"blob","base64":"=="}`, ""},
		{`{"type":"blob","base64":"q"}`, ""},
		{`{"type":"blob","base64":"qx"}`, ""},
		{`{"type":"blob","base64":"qx=="}`, ""},
		{`{"type":"blob","base64":"-_8"}`, ""},
		{`{"type":"blob","base64":"qw\n"}`, ""},
		{`{"type":"blob","base64":"q\r\nw"}`, ""},
		{`{"type":"blob","base64":"q w"}`, ""},
		{`{"type":"blob","base64":"qw=a"}`, ""},
		{`{"type":"blob","base64":null}`, ""},
		{`{"type":"blob"}`, ""},
		{`{"type":"blob","value":"qw"}`, ""},
		{`{"type":"blob","base64":5}`, ""},
		{`{}`, ""},
		{`{"value":"1"}`, ""},
		{`{"type":null,"value":"1"}`, ""},
		{`{"type":"integer","value":"1","type":null}`, ""},
		{`{"type":5}`, ""},
		{`{"type":"Integer","value":"1"}`, ""},
		{`{"type":"bool","value":true}`, ""},
		{`{"type":""}`, ""},
		{`null`, ""},
		{`"x"`, ""},
		{`[1]`, ""},
		{`1`, ""},
		{`{"type":"null",}`, ""},
		{`{"type":"null" "x":1}`, ""},
		{`{"type" "null"}`, ""},
		{`{type:"null"}`, ""},
		{`{"type":"null","value":01}`, ""},
		{`{"type":"null","value":[1,]}`, ""},
		{`{"type":"null","value":tru}`, ""},
		{`{"type":"null","value":nul}`, ""},
		{`{"type":"null","value":"\q"}`, ""},
	} {
		in := pipe(exec(oneRow(tc.in)))
		r, err := decodePipeline(t, in)
		// The same object with a space after its brace misses the fast
		// path for the server's exact format; the outcome must not change.
		if strings.HasPrefix(tc.in, "{") {
			slow, errSlow := decodePipeline(t, pipe(exec(oneRow("{ "+tc.in[1:]))))
			if (err == nil) != (errSlow == nil) || err == nil && full(r) != full(slow) {
				t.Errorf("%s: fast and general paths differ: %v / %v", tc.in, err, errSlow)
			}
		}
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: decoded to %s, want an error", tc.in, dumpPipeline(r))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		v := r.Results[0].Response.Result.Values[0]
		if got := v.String() + " " + v.Type.String(); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
		if (v.Type == codec.Text || v.Type == codec.Blob) && v.Bytes == nil {
			t.Errorf("%s: nil Bytes", tc.in)
		}
		if (v.Type != codec.Text && v.Type != codec.Blob) && v.Bytes != nil {
			t.Errorf("%s: non-nil Bytes", tc.in)
		}
	}
}

func TestDecodePipeline(t *testing.T) {
	const ok1 = `{"type":"ok","response":{"type":"close"}}`
	for _, tc := range []struct {
		in, want string
	}{
		{`{}`, `baton="" url=""`},
		{`{"results":[]}`, `baton="" url=""`},
		{`{"baton":"b1","base_url":"http://x/","results":null}`, `baton="b1" url="http://x/"`},
		{" \t\r\n{ \"baton\" : \"b\" ,\n\"results\" : [ { \"type\" : \"ok\" , \"response\" : { \"type\" : \"close\" } } ] } \r\n\t", `baton="b" url=""; ok close`},
		{`{"baton":"a","baton":"b"}`, `baton="b" url=""`},
		{`{"baton":"a","baton":null}`, `baton="" url=""`},
		{`{"\u0062aton":"\u00e9"}`, `baton="é" url=""`},
		{`{"results":[` + ok1 + `],"results":[]}`, `baton="" url=""`},
		{`{"zzz":{"a":[1,2,{"b":null}],"c":true,"d":"\u0000\ud800"},"results":[` + ok1 + `]}`, `baton="" url=""; ok close`},
		{`{"Baton":"x","BATON":5}`, `baton="" url=""`},
		// Stream results: any order, fields of the other variant ignored.
		{pipe(`{"response":{"type":"close"},"type":"ok"}`), `baton="" url=""; ok close`},
		{pipe(`{"type":"ok","response":{"type":"close"},"error":5}`), `baton="" url=""; ok close`},
		{pipe(`{"error":{"message":"m","code":"C"},"type":"error","response":[1]}`), `baton="" url=""; error "m"/"C"`},
		{pipe(`{"type":"error","error":{}}`), `baton="" url=""; error ""/""`},
		{pipe(`{"type":"error","error":{"message":null,"code":null,"x":1}}`), `baton="" url=""; error ""/""`},
		{pipe(`{"type":"ok","response":{"type":"close"},"type":"error","error":{"message":"m"}}`), `baton="" url=""; error "m"/""`},
		{pipe(`{"type":"error","error":{"message":"m"},"type":"ok","response":{"type":"close"}}`), `baton="" url=""; ok close`},
		{pipe(`{"type":"ok","response":{"type":"close"},"response":{"type":"sequence"}}`), `baton="" url=""; ok sequence`},
		// Responses of every type.
		{pipe(`{"type":"ok","response":{"type":"execute"}}`), `baton="" url=""; ok execute cols=[] rows=[]`},
		{pipe(`{"type":"ok","response":{"type":"execute","result":null}}`), `baton="" url=""; ok execute cols=[] rows=[]`},
		{pipe(`{"type":"ok","response":{"type":"sequence"}}`, `{"type":"ok","response":{"type":"store_sql"}}`, `{"type":"ok","response":{"type":"close_sql"}}`), `baton="" url=""; ok sequence; ok store_sql; ok close_sql`},
		{pipe(`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":true}}`), `baton="" url=""; ok get_autocommit true`},
		{pipe(`{"type":"ok","response":{"is_autocommit":true,"type":"get_autocommit"}}`), `baton="" url=""; ok get_autocommit true`},
		{pipe(`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":null}}`), `baton="" url=""; ok get_autocommit false`},
		{pipe(`{"type":"ok","response":{"type":"get_autocommit"}}`), `baton="" url=""; ok get_autocommit false`},
		{pipe(`{"type":"ok","response":{"type":"close","is_autocommit":"yes","result":7}}`), `baton="" url=""; ok close`},
		{pipe(`{"type":"ok","response":{"result":{"cols":[{"name":"a"}],"rows":[[{"type":"null"}]]},"type":"execute"}}`), `baton="" url=""; ok execute cols=[a] rows=[[NULL]]`},
		{pipe(`{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"a"}]},"type":"describe"}}`), `baton="" url=""; ok describe params=[] cols=[a] explain=false readonly=false`},
		{pipe(`{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"a"}]},"type":"close"}}`), `baton="" url=""; ok close`},
		{pipe(`{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"a"}]},"result":null}}`), `baton="" url=""; ok execute cols=[] rows=[]`},
		{pipe(`{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"a"}]},"result":{"cols":[{"name":"b"}]}}}`), `baton="" url=""; ok execute cols=[b] rows=[]`},
		{pipe(`{"type":"ok","response":{"type":"describe","result":{"params":[{"name":null},{"name":":a"},{}],"cols":[{"name":"x","decltype":"INT"}],"is_explain":true,"is_readonly":false}}}`), `baton="" url=""; ok describe params=["",":a",""] cols=[x:INT] explain=true readonly=false`},
		{pipe(`{"type":"ok","response":{"type":"describe","result":{"params":null,"cols":null,"is_explain":null}}}`), `baton="" url=""; ok describe params=[] cols=[] explain=false readonly=false`},
		// StmtResult fields.
		{pipe(exec(`{"cols":[{"name":"a","decltype":"INTEGER"},{"name":null,"decltype":null},{}],"rows":[],"affected_row_count":3,"last_insert_rowid":"7","replication_index":"9","rows_read":1,"rows_written":2,"query_duration_ms":0.5}`)),
			`baton="" url=""; ok execute cols=[a:INTEGER,,] rows=[] arc=3 lid=7/true ri=9/true rr=1 rw=2 ms=0.5`},
		{pipe(exec(`{"affected_row_count":"3","last_insert_rowid":-7,"replication_index":9,"rows_read":"01","rows_written":null,"query_duration_ms":null}`)),
			`baton="" url=""; ok execute cols=[] rows=[] arc=3 lid=-7/true ri=9/true rr=1`},
		{pipe(exec(`{"last_insert_rowid":"+7","replication_index":null}`)), `baton="" url=""; ok execute cols=[] rows=[] lid=7/true`},
		{pipe(exec(`{"last_insert_rowid":-0}`)), `baton="" url=""; ok execute cols=[] rows=[] lid=0/true`},
		{pipe(exec(`{"last_insert_rowid":"-9223372036854775808"}`)), `baton="" url=""; ok execute cols=[] rows=[] lid=-9223372036854775808/true`},
		{pipe(exec(`{"last_insert_rowid":"1","last_insert_rowid":null}`)), `baton="" url=""; ok execute cols=[] rows=[]`},
		{pipe(exec(`{"affected_row_count":18446744073709551615}`)), `baton="" url=""; ok execute cols=[] rows=[] arc=18446744073709551615`},
		{pipe(exec(`{"affected_row_count":"\u0035"}`)), `baton="" url=""; ok execute cols=[] rows=[] arc=5`},
		{pipe(exec(`{"query_duration_ms":1}`)), `baton="" url=""; ok execute cols=[] rows=[] ms=1`},
		{pipe(exec(`{"query_duration_ms":-1.5e-3}`)), `baton="" url=""; ok execute cols=[] rows=[] ms=-0.0015`},
		{pipe(exec(`{"rows":[[{"type":"integer","value":"1"},{"type":"null"}],[{"type":"text","value":"x"},{"type":"float","value":2}]],"cols":[{"name":"a"},{"name":"b"}]}`)),
			`baton="" url=""; ok execute cols=[a,b] rows=[[1,NULL],["x",2]]`},
		{pipe(exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"integer","value":"1"},{"type":"null"}]],"rows":[[{"type":"null"}]]}`)),
			`baton="" url=""; ok execute cols=[a] rows=[[NULL]]`},
		{pipe(exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"null"}]],"cols":[{"name":"b"}]}`)), `baton="" url=""; ok execute cols=[b] rows=[[NULL]]`},
		{pipe(exec(`{"cols":[{"name":"a"}],"rows":null}`)), `baton="" url=""; ok execute cols=[a] rows=[]`},
		{pipe(exec(`{"rows":[[],[]]}`)), `baton="" url=""; ok execute cols=[] rows=[[],[]]`},
		{pipe(exec(`{"cols":[{"name":"a","name":"b","decltype":"X","decltype":null}]}`)), `baton="" url=""; ok execute cols=[b] rows=[]`},
		// Batches.
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{"affected_row_count":1},null,null],"step_errors":[null,{"message":"m","code":"C"},null],"replication_index":"4"}}}`),
			`baton="" url=""; ok batch steps=[ok{cols=[] rows=[] arc=1} failed{"m"/"C"} skipped] ri=4/true`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_errors":[null,null,{"message":"m"}],"step_results":[{}]}}}`),
			`baton="" url=""; ok batch steps=[ok{cols=[] rows=[]} skipped failed{"m"/""}]`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{},{}],"step_results":[{}]}}}`),
			`baton="" url=""; ok batch steps=[ok{cols=[] rows=[]}]`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{}],"step_errors":[{"message":"m"}],"step_results":[null]}}}`),
			`baton="" url=""; ok batch steps=[failed{"m"/""}]`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{}],"step_errors":[{"message":"m"}],"step_errors":null}}}`),
			`baton="" url=""; ok batch steps=[ok{cols=[] rows=[]}]`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":null,"step_errors":[]}}}`), `baton="" url=""; ok batch steps=[]`},
		{pipe(`{"type":"ok","response":{"type":"batch","result":{}}}`), `baton="" url=""; ok batch steps=[]`},
		// Depth: the top-level object is depth 1, 64 levels are allowed.
		{`{"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, `baton="" url=""`},
	} {
		r, err := decodePipeline(t, tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := dumpPipeline(r); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestDecodePipelineInvalid(t *testing.T) {
	for _, in := range []string{
		``, ` `, `null`, `[]`, `"x"`, `1`, `true`, `{`, `}`, `{"baton"`, `{"baton":`, `{"baton":"x"`, `{"baton":"x",}`,
		`{,}`, `{"baton":"x"}}`, `{"baton":"x"} x`, `{}{}`, `{} []`, `{"a":1 "b":2}`, `{"a" 1}`, `{'a':1}`,
		`{"baton":1}`, `{"baton":true}`, `{"baton":{}}`, `{"base_url":[]}`, `{"results":{}}`, `{"results":"x"}`, `{"results":1}`,
		`{"results":[null]}`, `{"results":[1]}`, `{"results":[[]]}`, `{"results":[{}]}`, `{"results":[{"type":null}]}`,
		`{"results":[{"type":"ok"}]}`, `{"results":[{"type":"ok","response":null}]}`, `{"results":[{"type":"ok","response":"close"}]}`,
		`{"results":[{"type":"ok","response":{}}]}`, `{"results":[{"type":"ok","response":{"type":null}}]}`,
		`{"results":[{"type":"ok","response":{"type":"open_stream"}}]}`, `{"results":[{"type":"ok","response":{"type":5}}]}`,
		`{"results":[{"type":"error"}]}`, `{"results":[{"type":"error","error":null}]}`, `{"results":[{"type":"error","error":"m"}]}`,
		`{"results":[{"type":"error","error":{"message":5}}]}`, `{"results":[{"type":"error","error":{"code":[]}}]}`,
		`{"results":[{"type":"warning","response":{"type":"close"}}]}`, `{"results":[{"type":"OK","response":{"type":"close"}}]}`,
		`{"results":[{"type":1}]}`, `{"results":[` + exec(`{}`) + `,]}`, `{"results":[,` + exec(`{}`) + `]}`,
		pipe(`{"type":"ok","response":{"type":"execute","result":5}}`),
		pipe(`{"type":"ok","response":{"type":"execute","result":[]}}`),
		pipe(`{"type":"ok","response":{"result":"x","type":"execute"}}`),
		pipe(`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":"true"}}`),
		pipe(`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":1}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{}],"step_errors":[{}]}}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[1]}}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":{}}}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_errors":["x"]}}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{"rows":[[{"type":"null"}]]}]}}}`),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"replication_index":"x"}}}`),
		pipe(`{"type":"ok","response":{"type":"describe","result":{"params":[null]}}}`),
		pipe(`{"type":"ok","response":{"type":"describe","result":{"params":[{"name":1}]}}}`),
		pipe(`{"type":"ok","response":{"type":"describe","result":{"params":{}}}}`),
		pipe(`{"type":"ok","response":{"type":"describe","result":{"is_explain":"false"}}}`),
		pipe(`{"type":"ok","response":{"type":"describe","result":{"cols":[null]}}}`),
		pipe(exec(`{"cols":{}}`)), pipe(exec(`{"cols":[null]}`)), pipe(exec(`{"cols":["a"]}`)), pipe(exec(`{"cols":[{"name":1}]}`)),
		pipe(exec(`{"cols":[{"decltype":false}]}`)), pipe(exec(`{"rows":{}}`)), pipe(exec(`{"rows":[null]}`)), pipe(exec(`{"rows":[{}]}`)),
		pipe(exec(`{"rows":[[null]],"cols":[{}]}`)), pipe(exec(`{"rows":[[1]],"cols":[{}]}`)),
		pipe(exec(`{"cols":[{"name":"a"}],"rows":[[]]}`)),
		pipe(exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"null"},{"type":"null"}]]}`)),
		pipe(exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"null"}],[]]}`)),
		pipe(exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"null"}],[{"type":"null"},{"type":"null"}],[{"type":"null"}]]}`)),
		pipe(exec(`{"rows":[[{"type":"null"}]]}`)),
		pipe(exec(`{"rows":[[{"type":"null"}]],"cols":[{"name":"a"}],"cols":[]}`)),
		pipe(exec(`{"affected_row_count":-1}`)), pipe(exec(`{"affected_row_count":-0}`)), pipe(exec(`{"affected_row_count":1.0}`)),
		pipe(exec(`{"affected_row_count":1e2}`)), pipe(exec(`{"affected_row_count":"+1"}`)), pipe(exec(`{"affected_row_count":"-1"}`)),
		pipe(exec(`{"affected_row_count":""}`)), pipe(exec(`{"affected_row_count":"1.0"}`)), pipe(exec(`{"affected_row_count":true}`)),
		pipe(exec(`{"affected_row_count":18446744073709551616}`)), pipe(exec(`{"affected_row_count":"18446744073709551616"}`)),
		pipe(exec(`{"affected_row_count":[]}`)), pipe(exec(`{"rows_read":{}}`)), pipe(exec(`{"rows_written":"x"}`)),
		pipe(exec(`{"replication_index":-5}`)), pipe(exec(`{"last_insert_rowid":1.5}`)), pipe(exec(`{"last_insert_rowid":"1.5"}`)),
		pipe(exec(`{"last_insert_rowid":9223372036854775808}`)), pipe(exec(`{"last_insert_rowid":"-9223372036854775809"}`)),
		pipe(exec(`{"last_insert_rowid":false}`)), pipe(exec(`{"query_duration_ms":"1"}`)), pipe(exec(`{"query_duration_ms":1e999}`)),
		pipe(exec(`{"query_duration_ms":true}`)), pipe(exec(`{"query_duration_ms":-}`)),
		// Invalid JSON inside unknown fields.
		`{"x":01}`, `{"x":-01}`, `{"x":+1}`, `{"x":.5}`, `{"x":1.}`, `{"x":1.e5}`, `{"x":-}`, `{"x":1e}`, `{"x":1e+}`, `{"x":1E-}`,
		`{"x":0x10}`, `{"x":NaN}`, `{"x":Infinity}`, `{"x":-Infinity}`, `{"x":1.5.5}`, `{"x":--1}`, `{"x":1-1}`, `{"x":00}`,
		`{"x":tru}`, `{"x":True}`, `{"x":nul}`, `{"x":nulll}`, `{"x":falsee}`, `{"x":undefined}`, `{"x":'a'}`,
		`{"x":[1,]}`, `{"x":[,1]}`, `{"x":[1 2]}`, `{"x":{"a"}}`, `{"x":{"a":}}`, `{"x":{1:2}}`, `{"x":[}`, `{"x":{]}`,
		"{\"x\":\"a\x00b\"}", "{\"x\":\"\x1f\"}", `{"x":"\a"}`, `{"x":"\u00"}`, `{"x":"\u00g0"}`, `{"x":"abc`, `{"x":"abc\"}`,
		"{\"x\":1,\"y\":2\x00}", "{\"x\":1}\x00", "\x00{}", "{\"x\":\v1}", "{\"x\":\f1}", "\u00a0{}",
		// Too deep.
		`{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
		`{"x":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat("}", 64) + `}`,
		strings.Repeat("[", 100000),
	} {
		r, err := decodePipeline(t, in)
		if err == nil {
			t.Errorf("%q: decoded to %s, want an error", in, dumpPipeline(r))
		}
	}
}

func TestDecodeInvalidUTF8(t *testing.T) {
	for _, in := range []string{
		"{\"baton\":\"\xff\"}",
		"{\"results\":[" + exec(oneRow("{\"type\":\"text\",\"value\":\"a\xc3\"}")) + "]}",
		"{\"x\":\"\xed\xa0\x80\"}", // an encoded surrogate
		"{\"x\":\"\xc0\xaf\"}",     // overlong
		"{\"x\":1}\xff",
		"\xef\xbb\xbf{}"[1:], // broken BOM
		"{\"x\xff\":1}",
	} {
		_, err := decodePipeline(t, in)
		if !errors.Is(err, codec.ErrInvalidUTF8) {
			t.Errorf("%q: %v, want an error wrapping ErrInvalidUTF8", in, err)
		}
	}
	var e codec.CursorEntry
	if err := Codec.DecodeCursorEntry([]byte("{\"type\":\"\xff\"}"), &e); !errors.Is(err, codec.ErrInvalidUTF8) {
		t.Errorf("entry: %v", err)
	}
	var h codec.CursorHeader
	if err := Codec.DecodeCursorHeader([]byte("{\"baton\":\"\x80\"}"), &h); !errors.Is(err, codec.ErrInvalidUTF8) {
		t.Errorf("header: %v", err)
	}
	var er codec.Error
	if err := Codec.DecodeError([]byte("{\"error\":\"\xfe\"}"), &er); !errors.Is(err, codec.ErrInvalidUTF8) {
		t.Errorf("error: %v", err)
	}
	// A valid BOM is still not JSON.
	if _, err := decodePipeline(t, "\xef\xbb\xbf{}"); err == nil || errors.Is(err, codec.ErrInvalidUTF8) {
		t.Errorf("BOM: %v", err)
	}
}

func TestDecodeErrorOffsets(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int
	}{
		{`{"baton":1}`, 9},
		{`{"x":01}`, 6},
		{`{"x":"a\qb"}`, 7},
		{"{\"baton\":\"ab\xff\"}", 12},
		{`{} x`, 3},
		{`{"x":1.}`, 5},
	} {
		_, err := decodePipeline(t, tc.in)
		var de *codec.DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if de.Offset != tc.off {
			t.Errorf("%s: offset %d, want %d (%v)", tc.in, de.Offset, tc.off, err)
		}
	}
}

func TestDecodeCursor(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"type":"step_begin","step":1,"cols":[{"name":"a","decltype":"INTEGER"},{"name":"b","decltype":null}]}`, `step_begin step=1 cols=[a:INTEGER,b]`},
		{`{"cols":[{"name":"a"}],"step":"2","type":"step_begin"}`, `step_begin step=2 cols=[a]`},
		{`{"type":"step_begin","step":4294967295}`, `step_begin step=4294967295`},
		{`{"type":"step_end","affected_row_count":2,"last_insert_rowid":2}`, `step_end arc=2 lid=2/true`},
		{`{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`, `step_end`},
		{`{"type":"step_end","last_insert_rowid":"-3"}`, `step_end lid=-3/true`},
		{`{"type":"step_error","step":5,"error":{"message":"m","code":"C"}}`, `step_error step=5 error="m"/"C"`},
		{`{"type":"step_error","step":5,"error":null}`, `step_error step=5`},
		{`{"type":"row","row":[{"type":"integer","value":"1"},{"type":"text","value":"x\\n\n"},{"type":"blob","base64":"AP8"},{"type":"float","value":null}]}`, `row row=[1,"x\\n\n",x'00ff',NaN]`},
		{`{"type":"row","row":[]}`, `row`},
		{`{"type":"row","row":null}`, `row`},
		{`{"type":"row"}`, `row`},
		{`{"type":"error","error":{"message":"m","code":"C"}}`, `error error="m"/"C"`},
		{`{"type":"replication_index","replication_index":11}`, `replication_index ri=11/true`},
		{`{"type":"replication_index","replication_index":"11"}`, `replication_index ri=11/true`},
		{`{"type":"replication_index","replication_index":null}`, `replication_index`},
		{`{"type":"future","step":"x","row":5,"error":[],"whatever":{"a":[]}}`, `unknown`},
		{`{"step":1}`, `unknown`},
		{`{"type":null,"step":1}`, `unknown`},
		{`{}`, `unknown`},
		// Members of other entry types are ignored whatever their JSON type.
		{`{"type":"row","row":[],"step":"x","cols":5,"affected_row_count":[],"last_insert_rowid":{},"error":1,"replication_index":true}`, `row`},
		{`{"type":"step_end","step":3,"affected_row_count":1}`, `step_end arc=1`},
		// A member decoded for one type is dropped when a later "type" wins.
		{`{"type":"step_begin","step":3,"cols":[{"name":"a"}],"type":"row","row":[{"type":"null"}]}`, `row row=[NULL]`},
		{`{"type":"row","step":3,"type":"step_error"}`, `step_error step=3`},
		{`{"type":"step_error","step":3,"step":null}`, `step_error`},
		{"\n\t{\"type\" :\"step_end\"}\r\n", `step_end`},
		{`{"type":"row","row":[],"type":"step_end","row":[1]}`, `step_end`},
	} {
		var e codec.CursorEntry
		err := Codec.DecodeCursorEntry([]byte(tc.in), &e)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := dumpEntry(&e); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{
		``, `null`, `[]`, `{"type":5}`, `{"type":"step_begin","step":4294967296}`, `{"type":"step_begin","step":-1}`,
		`{"type":"step_begin","step":1.5}`, `{"type":"step_begin","cols":{}}`, `{"type":"step_begin","cols":[null]}`,
		`{"type":"step_end","affected_row_count":"x"}`, `{"type":"step_end","last_insert_rowid":1e3}`,
		`{"type":"step_error","error":"m"}`, `{"type":"step_error","error":{"message":1}}`, `{"type":"row","row":{}}`,
		`{"type":"row","row":[null]}`, `{"type":"row","row":[{"type":"integer","value":"x"}]}`,
		`{"type":"error","error":[]}`, `{"type":"replication_index","replication_index":-1}`,
		`{"type":"replication_index","replication_index":1.5}`, `{"type":"row"} {}`, `{"type":"future","x":01}`,
		`{"type":"row","row":[]`,
	} {
		checkDecodeFails(t, in, func(in []byte) (string, error) {
			var e codec.CursorEntry
			err := Codec.DecodeCursorEntry(in, &e)
			return dumpEntry(&e), err
		})
	}
}

func TestDecodeCursorHeader(t *testing.T) {
	for _, tc := range []struct {
		in, baton, url string
	}{
		{`{"baton":"b","base_url":null}`, "b", ""},
		{`{"base_url":"http://h/","baton":null,"extra":[1]}`, "", "http://h/"},
		{`{}`, "", ""},
		{"{\"baton\":\"b\"}\n", "b", ""},
	} {
		h := codec.CursorHeader{Baton: "old", BaseURL: "old"}
		if err := Codec.DecodeCursorHeader([]byte(tc.in), &h); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if h.Baton != tc.baton || h.BaseURL != tc.url {
			t.Errorf("%s: got %+v", tc.in, h)
		}
	}
	for _, in := range []string{``, `[]`, `{"baton":5}`, `{"base_url":{}}`, `{"baton":"b"`, `{"baton":"b"}x`} {
		checkDecodeFails(t, in, func(in []byte) (string, error) {
			var h codec.CursorHeader
			err := Codec.DecodeCursorHeader(in, &h)
			return fmt.Sprintf("%+v", h), err
		})
	}
}

func TestDecodeErrorBody(t *testing.T) {
	for _, tc := range []struct {
		in        string
		msg, code string
	}{
		{`{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}`, "The stream has expired due to inactivity", "STREAM_EXPIRED"},
		{`{"error":"Unauthorized: x"}`, "Unauthorized: x", ""},
		{`{"message":"m"}`, "m", ""},
		{`{"message":"m","error":"e"}`, "m", ""},
		{`{"error":"e","message":"m","code":"C"}`, "m", "C"},
		{`{"message":null,"error":"e"}`, "e", ""},
		{`{"error":"e","code":"C"}`, "e", "C"},
		{`{"message":"","error":"e"}`, "", ""},
		{`{}`, "", ""},
		{`{"other":1}`, "", ""},
		{`{"error":"a\nb \u00e9"}`, "a\nb é", ""},
	} {
		e := codec.Error{Message: "old", Code: "old"}
		if err := Codec.DecodeError([]byte(tc.in), &e); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if e.Message != tc.msg || e.Code != tc.code {
			t.Errorf("%s: got %q/%q", tc.in, e.Message, e.Code)
		}
	}
	for _, in := range []string{``, `null`, `"x"`, `Unauthorized`, `{"error":5}`, `{"message":{}}`, `{"code":1}`, `{"error":"x"`} {
		checkDecodeFails(t, in, func(in []byte) (string, error) {
			var e codec.Error
			err := Codec.DecodeError(in, &e)
			return fmt.Sprintf("%+v", e), err
		})
	}
}

func TestDecodeNilDestination(t *testing.T) {
	if err := Codec.DecodePipelineResponse([]byte(`{}`), nil); err == nil {
		t.Error("pipeline: no error")
	}
	if err := Codec.DecodeCursorHeader([]byte(`{}`), nil); err == nil {
		t.Error("header: no error")
	}
	if err := Codec.DecodeCursorEntry([]byte(`{}`), nil); err == nil {
		t.Error("entry: no error")
	}
	if err := Codec.DecodeError([]byte(`{}`), nil); err == nil {
		t.Error("error: no error")
	}
}

// TestDecodeReuse decodes inputs one after the other into one destination
// and checks each outcome against a decode into a fresh one.
func TestDecodeReuse(t *testing.T) {
	inputs := []string{
		readFixture(t, "pipeline_batch.json"),
		readFixture(t, "pipeline_values.json"),
		readFixture(t, "pipeline_batch.json"),
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[null,{"cols":[{"name":"z"}]}],"step_errors":[{"message":"m"}]}}}`),
		readFixture(t, "pipeline_1000rows.json"),
		pipe(`{"type":"error","error":{"message":"m"}}`, exec(`{"cols":[{"name":"a"}],"rows":[[{"type":"text","value":"\n"}]]}`)),
		readFixture(t, "pipeline_batch.json"),
		`{"baton":"x"}`,
		readFixture(t, "pipeline_values.json"),
	}
	var reused codec.PipelineResponse
	for i, in := range inputs {
		if err := Codec.DecodePipelineResponse([]byte(in), &reused); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		var fresh codec.PipelineResponse
		if err := Codec.DecodePipelineResponse([]byte(in), &fresh); err != nil {
			t.Fatal(err)
		}
		if a, b := full(&reused), full(&fresh); a != b {
			t.Errorf("input %d: reused destination differs:\n%s\n%s", i, a, b)
		}
	}

	lines := strings.Split(strings.TrimSpace(readFixture(t, "cursor.ndjson")), "\n")[1:]
	lines = append(lines, lines...)
	var e codec.CursorEntry
	for _, l := range lines {
		if err := Codec.DecodeCursorEntry([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		var fresh codec.CursorEntry
		_ = Codec.DecodeCursorEntry([]byte(l), &fresh)
		if a, b := full(&e), full(&fresh); a != b {
			t.Errorf("%s: reused entry differs:\n%s\n%s", l, a, b)
		}
	}
}

// TestDecodeMemory checks where Value.Bytes point: unescaped text into the
// input, with its capacity clipped; everything else elsewhere; and that
// later decodes never overwrite earlier results.
func TestDecodeMemory(t *testing.T) {
	in := []byte(pipe(exec(oneRow(
		`{"type":"text","value":"plain"}`,
		`{"type":"text","value":"esc\"aped"}`,
		`{"type":"blob","base64":"AAEC"}`,
	))))
	var r codec.PipelineResponse
	if err := Codec.DecodePipelineResponse(in, &r); err != nil {
		t.Fatal(err)
	}
	vals := r.Results[0].Response.Result.Values
	inside := func(b []byte) bool {
		if len(b) == 0 {
			return false
		}
		for i := range in {
			if &in[i] == &b[0] {
				return true
			}
		}
		return false
	}
	if !inside(vals[0].Bytes) || cap(vals[0].Bytes) != len(vals[0].Bytes) {
		t.Errorf("plain text not a clipped view of the input (cap %d)", cap(vals[0].Bytes))
	}
	if inside(vals[1].Bytes) || cap(vals[1].Bytes) != len(vals[1].Bytes) {
		t.Error("escaped text in the input or not clipped")
	}
	if inside(vals[2].Bytes) || cap(vals[2].Bytes) != len(vals[2].Bytes) {
		t.Error("blob in the input or not clipped")
	}

	// Many decodes with escaped text and blobs of growing size, each into
	// its own destination, while earlier results must stay intact.
	type kept struct {
		r    *codec.PipelineResponse
		want string
	}
	var all []kept
	for i := 0; i < 200; i++ {
		n := 1 + i*37%3000
		text := strings.Repeat("\\n\\u00e9", n)
		blob := strings.Repeat("AAEC", n)
		body := pipe(exec(oneRow(`{"type":"text","value":"`+text+`"}`, `{"type":"blob","base64":"`+blob+`"}`)))
		var r codec.PipelineResponse
		if err := Codec.DecodePipelineResponse([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		all = append(all, kept{&r, full(&r)})
		if i%10 == 0 {
			for j, k := range all {
				if got := full(k.r); got != k.want {
					t.Fatalf("result %d changed after decode %d", j, i)
				}
			}
		}
	}
	for j, k := range all {
		if got := full(k.r); got != k.want {
			t.Fatalf("result %d changed", j)
		}
	}

	// Go strings are copies: scribbling over the input changes nothing.
	data := []byte(readFixture(t, "pipeline_batch.json"))
	var p codec.PipelineResponse
	if err := Codec.DecodePipelineResponse(data, &p); err != nil {
		t.Fatal(err)
	}
	before := dumpErr(&p.Results[4].Response.Batch.Steps[1].Error) + dumpCols(p.Results[4].Response.Batch.Steps[5].Result.Cols)
	for i := range data {
		data[i] = '#'
	}
	after := dumpErr(&p.Results[4].Response.Batch.Steps[1].Error) + dumpCols(p.Results[4].Response.Batch.Steps[5].Result.Cols)
	if before != after {
		t.Errorf("strings changed with the input: %s -> %s", before, after)
	}
}

func TestDecodeFloatNullIsNaN(t *testing.T) {
	r, err := decodePipeline(t, pipe(exec(oneRow(`{"type":"float","value":null}`))))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Results[0].Response.Result.Values[0]; !math.IsNaN(v.Float) {
		t.Errorf("got %v", v)
	}
}
