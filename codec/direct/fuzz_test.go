package direct

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// fuzzSeeds are starting inputs for the decoding fuzz targets.
func fuzzSeeds(f *testing.F) {
	for _, name := range []string{"pipeline_values.json", "pipeline_batch.json"} {
		f.Add([]byte(readFixture(f, name)))
	}
	for _, l := range strings.Split(readFixture(f, "cursor.ndjson"), "\n") {
		f.Add([]byte(l))
	}
	for _, s := range []string{
		`{}`, `{"baton":"b","base_url":null,"results":[]}`,
		pipe(`{"type":"ok","response":{"type":"batch","result":{"step_results":[{"cols":[{"name":"a"}],"rows":[[{"type":"blob","base64":"qw=="}]]},null],"step_errors":[null,{"message":"m","code":"C"}],"replication_index":"4"}}}`),
		pipe(`{"response":{"result":{"params":[{"name":null}],"cols":[],"is_explain":true},"type":"describe"},"type":"ok"}`),
		pipe(exec(oneRow(`{"type":"text","value":"\ud83d\ude00\n\u0000"}`, `{"value":-1.5e-3,"type":"float"}`, `{"type":"integer","value":-12}`))),
		`{"message":"m","code":"C"}`, `{"error":"e"}`,
		`{"x":[[[[{"a":[1,-0.5e+3,true,false,null,"\u00e9"]}]]]]}`,
	} {
		f.Add([]byte(s))
	}
}

// checkOutcome holds the invariants every decode must keep.
func checkOutcome(t *testing.T, data []byte, err error) {
	t.Helper()
	if err == nil {
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		return
	}
	var de *codec.DecodeError
	if !errors.As(err, &de) || de.Codec != "direct" || de.Offset < 0 || de.Offset > len(data) {
		t.Fatalf("bad error %#v for %q", err, data)
	}
	if !utf8.Valid(data) && !errors.Is(err, codec.ErrInvalidUTF8) {
		t.Fatalf("invalid UTF-8 %q gave %v", data, err)
	}
}

// FuzzDecodePipeline checks that decoding never panics, accepts only valid
// JSON, reports errors in the documented form, and gives the same outcome
// into a fresh, a just-used and an unrelated used destination.
func FuzzDecodePipeline(f *testing.F) {
	fuzzSeeds(f)
	dirty := []byte(readFixture(f, "pipeline_batch.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r1 codec.PipelineResponse
		err1 := Codec.DecodePipelineResponse(data, &r1)
		checkOutcome(t, data, err1)
		if !utf8.Valid(data) {
			return
		}
		s1 := full(&r1)
		err2 := Codec.DecodePipelineResponse(data, &r1)
		var r3 codec.PipelineResponse
		if err := Codec.DecodePipelineResponse(dirty, &r3); err != nil {
			t.Fatal(err)
		}
		err3 := Codec.DecodePipelineResponse(data, &r3)
		if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
			t.Fatalf("outcomes differ: %v / %v / %v", err1, err2, err3)
		}
		if err1 == nil {
			if s2, s3 := full(&r1), full(&r3); s1 != s2 || s1 != s3 {
				t.Fatalf("results differ:\n%s\n%s\n%s", s1, s2, s3)
			}
		}
		// In valid JSON the bytes {"type":" only ever start an object
		// with a "type" string member, so a space after the brace changes
		// nothing; it makes value objects miss the fast path.
		if slow := bytes.ReplaceAll(data, []byte(`{"type":"`), []byte(`{ "type":"`)); len(slow) != len(data) {
			var r4 codec.PipelineResponse
			err4 := Codec.DecodePipelineResponse(slow, &r4)
			if (err1 == nil) != (err4 == nil) || err1 == nil && s1 != full(&r4) {
				t.Fatalf("fast and general paths differ: %v / %v", err1, err4)
			}
		}
	})
}

// FuzzDecodeOther does the same for cursor headers, cursor entries and error
// bodies.
func FuzzDecodeOther(f *testing.F) {
	fuzzSeeds(f)
	dirty := []byte(`{"type":"row","row":[{"type":"text","value":"x\n"},{"type":"blob","base64":"AAEC"}],"cols":[{"name":"a"}],"step":3}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		var e1, e2 codec.CursorEntry
		err1 := Codec.DecodeCursorEntry(data, &e1)
		checkOutcome(t, data, err1)
		if err := Codec.DecodeCursorEntry(dirty, &e2); err != nil {
			t.Fatal(err)
		}
		err2 := Codec.DecodeCursorEntry(data, &e2)
		if (err1 == nil) != (err2 == nil) || err1 == nil && full(&e1) != full(&e2) {
			t.Fatalf("entry outcomes differ: %v %v\n%s\n%s", err1, err2, full(&e1), full(&e2))
		}

		h := codec.CursorHeader{Baton: "old"}
		checkOutcome(t, data, Codec.DecodeCursorHeader(data, &h))
		er := codec.Error{Message: "old", Code: "old"}
		checkOutcome(t, data, Codec.DecodeError(data, &er))
	})
}

// valuesFromFuzz turns fuzz bytes into values of every type, including
// ones the encoder must refuse (NaN, infinities, invalid UTF-8).
func valuesFromFuzz(b []byte) []codec.Value {
	var vs []codec.Value
	for len(b) > 0 {
		t := b[0] % 5
		b = b[1:]
		switch t {
		case 0:
			vs = append(vs, codec.NullValue())
		case 1, 2:
			var buf [8]byte
			n := copy(buf[:], b)
			b = b[n:]
			u := binary.LittleEndian.Uint64(buf[:])
			if t == 1 {
				vs = append(vs, codec.IntValue(int64(u)))
			} else {
				vs = append(vs, codec.FloatValue(math.Float64frombits(u)))
			}
		default:
			n := 0
			if len(b) > 0 {
				n = int(b[0]) % 32
				b = b[1:]
			}
			n = min(n, len(b))
			p := append([]byte{}, b[:n]...)
			b = b[n:]
			if t == 3 {
				vs = append(vs, codec.TextValue(p))
			} else {
				vs = append(vs, codec.BlobValue(p))
			}
		}
	}
	return vs
}

// encodable reports whether JSON can carry v.
func encodable(v codec.Value) bool {
	switch v.Type {
	case codec.Float:
		return !math.IsNaN(v.Float) && !math.IsInf(v.Float, 0)
	case codec.Text:
		return utf8.Valid(v.Bytes)
	}
	return true
}

// FuzzEncodeRoundTrip encodes values as statement arguments, checks the
// output with encoding/json, and decodes the encoded value objects back
// with this codec's decoder (a value object has the same shape in requests
// and responses).
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 3, 3, 'a', 'b', 'c', 4, 2, 0xff, 0})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f})                   // NaN
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0x80})                      // -0
	f.Add([]byte{3, 4, 0xed, 0xa0, 0x80, 'x'})                       // encoded surrogate
	f.Add([]byte{3, 6, '"', '\\', '\n', 0, 0x1f, 0x7f})              // escapes
	f.Add([]byte{2, 0x9c, 0x75, 0x88, 0x3c, 0xe4, 0x86, 0x0b, 0x44}) // a large integral float
	f.Fuzz(func(t *testing.T, data []byte) {
		vs := valuesFromFuzz(data)
		ok := true
		for _, v := range vs {
			ok = ok && encodable(v)
		}
		sql := string(data)
		req := codec.PipelineRequest{Requests: []codec.StreamRequest{
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "select 1", Args: vs}},
			{Type: codec.RequestSequence, SQL: sql},
		}}
		out, err := Codec.AppendPipelineRequest(nil, &req)
		if ok && utf8.ValidString(sql) {
			if err != nil {
				t.Fatalf("encoding failed: %v", err)
			}
			if !json.Valid(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			var back struct {
				Requests []struct {
					Stmt struct{ Args []json.RawMessage }
					SQL  string
				}
			}
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			if len(back.Requests[0].Stmt.Args) != len(vs) || back.Requests[1].SQL != sql {
				t.Fatalf("structure lost: %s", out)
			}
		} else {
			var ee *codec.EncodeError
			if !errors.As(err, &ee) {
				t.Fatalf("encoded unencodable input: %v", err)
			}
			if len(out) != 0 {
				t.Fatalf("dst not restored")
			}
		}
		if !ok {
			return
		}
		// Decode the value objects back.
		var buf []byte
		cols := make([]string, len(vs))
		for i := range vs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf, err = appendValue(buf, &vs[i])
			if err != nil {
				t.Fatal(err)
			}
			cols[i] = `{"name":"c"}`
		}
		body := pipe(exec(`{"cols":[` + strings.Join(cols, ",") + `],"rows":[[` + string(buf) + `]]}`))
		var r codec.PipelineResponse
		if err := Codec.DecodePipelineResponse([]byte(body), &r); err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		got := r.Results[0].Response.Result.Values
		for i := range vs {
			if !got[i].Equal(vs[i]) {
				t.Fatalf("value %d: sent %v, got back %v", i, vs[i], got[i])
			}
		}
	})
}
