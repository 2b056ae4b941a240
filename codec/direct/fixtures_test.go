package direct

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtures decodes responses recorded from sqld 0.24.32 (see
// testdata/capture.sh) and checks every field.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // dumpPipeline, split at "; "
	}{
		{"pipeline_values.json", []string{
			`baton="" url=""`,
			`ok execute cols=[i,f,fi,nz,inf,ninf,maxi,mini,n,b,eb,t,et] rows=[[1,1.5,2,-0,NaN,NaN,9223372036854775807,-9223372036854775808,NULL,x'fbff',x'',"héllo \"q\" \\ / \t\n\x01\x7f 😀 \u2028",""]] ri=10/true ms=0.045`,
			`error "Arguments do not match SQL parameters: value for parameter :b not found"/"ARGS_INVALID"`,
			`ok execute cols=[1] rows=[] ri=10/true ms=0.005`,
			`ok close`,
		}},
		{"pipeline_batch.json", []string{
			`baton="" url=""`,
			`ok execute cols=[] rows=[] ri=10/true ms=0.005`,
			`ok sequence`,
			`ok store_sql`,
			`ok execute cols=[] rows=[] arc=1 lid=1/true ri=10/true rw=3 ms=0.017`,
			`ok batch steps=[ok{cols=[] rows=[] arc=1 lid=2/true rw=3 ms=0.007} failed{"SQLite error: UNIQUE constraint failed: zz_direct_fixture.b"/"SQLITE_CONSTRAINT"} skipped ok{cols=[n] rows=[[2]] rr=1 ms=0.012} skipped ok{cols=[a:INTEGER,b:TEXT,c:REAL,d:BLOB] rows=[[1,"one",1,x'000102ff'],[2,"two",NULL,NULL]] rr=2 ms=0.015}] ri=10/true`,
			`ok get_autocommit false`,
			`ok describe params=["",":name"] cols=[a:INTEGER,b:TEXT,e] explain=false readonly=true`,
			`error "SQLite error: no such table: nonexistent"/"SQLITE_UNKNOWN"`,
			"error \"SQL string could not be parsed: syntax error around L1:6: `selec`\"/\"SQL_PARSE_ERROR\"",
			`ok execute cols=[] rows=[] arc=1 lid=3/true ri=10/true rw=3 ms=0.01`,
			`ok close_sql`,
			`ok execute cols=[] rows=[] ri=10/true ms=0.027`,
			`ok close`,
		}},
	} {
		r, err := decodePipeline(t, readFixture(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got := strings.Split(dumpPipeline(r), "; ")
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d parts, want %d:\n%s", tc.file, len(got), len(tc.want), strings.Join(got, "\n"))
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s part %d:\n got %s\nwant %s", tc.file, i, got[i], tc.want[i])
			}
		}
	}

	r, err := decodePipeline(t, readFixture(t, "pipeline_1000rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := &r.Results[0].Response.Result
	if res.NumRows != 1000 || len(res.Values) != 4000 {
		t.Fatalf("got %d rows, %d values", res.NumRows, len(res.Values))
	}
	if got := dumpValues(res.Row(999)); got != `1000,"name-1000",1250,NULL` {
		t.Errorf("last row: %s", got)
	}

	lines := strings.Split(strings.TrimSuffix(readFixture(t, "cursor.ndjson"), "\n"), "\n")
	var h codec.CursorHeader
	if err := Codec.DecodeCursorHeader([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Baton) != 64 || h.BaseURL != "" {
		t.Errorf("header: %+v", h)
	}
	want := []string{
		`step_begin`,
		`step_end`,
		`step_begin step=1`,
		`step_end`,
		`step_begin step=2`,
		`step_end arc=2 lid=2/true`,
		`step_begin step=3 cols=[a:INTEGER,b,f,n]`,
		`row row=[1,"x\\n\n",1.5,NULL]`,
		`row row=[2,x'00ff',1.5,NULL]`,
		`step_end`,
		`step_error step=5 error="SQLite error: no such table: nonexistent"/"SQLITE_UNKNOWN"`,
		`step_begin step=6 cols=[?]`,
		`step_error step=6 error="Arguments do not match SQL parameters: too many parameters, expected 1 found 2"/"ARGS_INVALID"`,
		`step_begin step=7`,
		`step_end`,
		`replication_index ri=10/true`,
	}
	if len(lines)-1 != len(want) {
		t.Fatalf("%d entries, want %d", len(lines)-1, len(want))
	}
	var e codec.CursorEntry
	for i, l := range lines[1:] {
		if err := Codec.DecodeCursorEntry([]byte(l), &e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if got := dumpEntry(&e); got != want[i] {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
}
