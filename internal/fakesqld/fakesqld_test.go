package fakesqld

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recT records the failures a Server reports instead of failing the test,
// and runs the Server's cleanup when told to.
type recT struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func newRecT(t *testing.T) *recT {
	r := &recT{TB: t}
	t.Cleanup(func() { r.finish() })
	return r
}

func (r *recT) Helper() {}

func (r *recT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recT) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// finish runs the cleanups (closing the server) and returns the failures.
func (r *recT) finish() []string {
	for len(r.cleanups) > 0 {
		f := r.cleanups[len(r.cleanups)-1]
		r.cleanups = r.cleanups[:len(r.cleanups)-1]
		f()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func post(t *testing.T, url, body string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func TestPipelineMatchesSemantically(t *testing.T) {
	t.Parallel()
	rt := newRecT(t)
	b1 := Baton(1)
	s := New(rt,
		Pipeline("", Execute(SQL("INSERT INTO t VALUES (?, ?)", Int(1), Blob([]byte{0xab}))), Close()).
			Respond("", ExecuteOK(Inserted(1, 1)), CloseOK()),
		Pipeline(b1, Batch(Step(SQL("BEGIN")), Step(SQL("SELECT 1")).If(OK(0)))).
			Respond(b1, BatchOK(StepOK(Empty()), StepSkipped())),
	)
	// Another field order, spacing, explicit defaults, padded base64 and a
	// float literal for an integer-valued step index.
	code, body, h := post(t, s.URL+"/v3/pipeline", `{ "requests": [
		{"stmt": {"want_rows": true, "named_args": [], "sql": "INSERT INTO t VALUES (?, ?)",
		          "args": [{"value": "1", "type": "integer"}, {"type": "blob", "base64": "qw=="}]}, "type": "execute"},
		{"type": "close"}], "baton": null}`)
	if code != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("got HTTP %d %q", code, h.Get("Content-Type"))
	}
	want := `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":1,"last_insert_rowid":"1","replication_index":null,"rows_read":0,"rows_written":1,"query_duration_ms":0.042}}},{"type":"ok","response":{"type":"close"}}]}`
	if body != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
	code, _, _ = post(t, s.URL+"/v3/pipeline", `{"baton":"`+b1+`","requests":[{"type":"batch","batch":{"steps":[
		{"stmt":{"sql":"BEGIN","want_rows":false},"condition":null},
		{"condition":{"type":"ok","step":0.0},"stmt":{"sql":"SELECT 1"}}]}}]}`)
	if code != 200 {
		t.Fatalf("got HTTP %d", code)
	}
	if errs := rt.finish(); len(errs) != 0 {
		t.Fatalf("unexpected failures: %q", errs)
	}
	if s.Count() != 2 || s.CountPath("/v3/pipeline") != 2 || s.CountPath("/v3/cursor") != 0 {
		t.Errorf("counts: %d, %d", s.Count(), s.CountPath("/v3/pipeline"))
	}
	if r := s.Requests(); len(r) != 2 || r[1].N != 2 || r[1].Exchange != 1 || r[1].Mismatch != "" || !strings.Contains(string(r[1].Body), b1) {
		t.Errorf("records: %+v", r)
	}
}

func TestMismatchFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ex       Exchange
		method   string
		path     string
		body     string
		wantErrs []string
	}{
		{"sql", Pipeline("", Execute(SQL("COMMIT"))), "POST", "/v3/pipeline",
			`{"baton":null,"requests":[{"type":"execute","stmt":{"sql":"ROLLBACK"}}]}`,
			[]string{`$.requests[0].stmt.sql: received "ROLLBACK", expected "COMMIT"`, "exchange #0", `"ROLLBACK"`}},
		{"baton", Pipeline("b1", Close()), "POST", "/v3/pipeline", `{"baton":null,"requests":[{"type":"close"}]}`,
			[]string{`$.baton: missing, expected "b1"`}},
		{"extra request", Pipeline("", Close()), "POST", "/v3/pipeline",
			`{"baton":null,"requests":[{"type":"close"},{"type":"close"}]}`,
			[]string{"$.requests: received 2 elements, expected 1"}},
		{"want_rows asked", Pipeline("", Execute(SQL("SELECT 1").WantRows(false))), "POST", "/v3/pipeline",
			`{"requests":[{"type":"execute","stmt":{"sql":"SELECT 1"}}]}`,
			[]string{"$.requests[0].stmt.want_rows: missing, expected false"}},
		{"unexpected field", Pipeline("", Execute(SQL("SELECT 1"))), "POST", "/v3/pipeline",
			`{"requests":[{"type":"execute","stmt":{"sql":"SELECT 1","args":[{"type":"null"}]}}]}`,
			[]string{`$.requests[0].stmt.args: unexpected field with [{"type":"null"}]`}},
		{"condition", Cursor("", Step(SQL("BEGIN")), Step(SQL("X")).If(OK(0))), "POST", "/v3/cursor",
			`{"batch":{"steps":[{"stmt":{"sql":"BEGIN"}},{"stmt":{"sql":"X"},"condition":{"type":"ok","step":1}}]}}`,
			[]string{"$.batch.steps[1].condition.step: received 1, expected 0"}},
		{"path", Pipeline("", Close()), "POST", "/v2/pipeline", `{"requests":[{"type":"close"}]}`,
			[]string{"received POST /v2/pipeline, expected POST /v3/pipeline"}},
		{"not json", Pipeline("", Close()), "POST", "/v3/pipeline", `{"requests":`,
			[]string{"the body is not JSON"}},
		{"method", Expect("GET", "/health"), "POST", "/health", `x`, []string{"received POST /health, expected GET /health"}},
		{"header", Expect("POST", "/x").WithHeader("Authorization", "Bearer t"), "POST", "/x", ``,
			[]string{`header Authorization is "", expected "Bearer t"`}},
		{"raw body", Expect("POST", "/x").WithBody(`{"a":[1,2]}`), "POST", "/x", `{"a":[1,3]}`,
			[]string{"$.a[1]: received 3, expected 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			s := New(rt, tt.ex.Reply(PlainText(200, "ok")))
			req, _ := http.NewRequest(tt.method, s.URL+tt.path, strings.NewReader(tt.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 500 || !strings.HasPrefix(string(b), "fakesqld: unexpected request") {
				t.Errorf("the client got HTTP %d %q, want 500 fakesqld: ...", resp.StatusCode, b)
			}
			errs := rt.finish()
			if len(errs) != 1 {
				t.Fatalf("got %d failures, want 1: %q", len(errs), errs)
			}
			for _, w := range tt.wantErrs {
				if !strings.Contains(errs[0], w) {
					t.Errorf("failure does not mention %q:\n%s", w, errs[0])
				}
			}
			if r := s.Requests(); len(r) != 1 || r[0].Mismatch == "" {
				t.Errorf("the request was not recorded as a mismatch: %+v", r)
			}
		})
	}
}

// The server holds the client to PROTOCOL.md whatever the script: an empty
// pipeline (§5.1), and a request on a stream whose earlier request is in
// flight (§4.4: the stream known from the batons its answers issued), fail
// the test; a request after the earlier one ended, or was cut off by the
// client, does not.
func TestProtocolRules(t *testing.T) {
	t.Parallel()
	t.Run("5.1 empty pipeline", func(t *testing.T) {
		t.Parallel()
		rt := newRecT(t)
		s := New(rt, Pipeline("zz").Respond(""))
		post(t, s.URL+"/v3/pipeline", `{"baton":"zz","requests":[]}`)
		if errs := rt.finish(); len(errs) != 1 || !strings.Contains(errs[0], "§5.1") {
			t.Errorf("failures %q", errs)
		}
	})
	for _, wait := range []bool{false, true} {
		t.Run(fmt.Sprintf("4.4 in flight, waited %v", wait), func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			c1 := Baton(1)
			s := New(rt, Cursor("", Step(SQL("SELECT 1"))).Stream(c1, StepBegin(0), Pause(500*time.Millisecond), StepEnd(), ReplicationIndex(1)),
				Pipeline(c1, Close()).Respond("", CloseOK()))
			done := make(chan struct{})
			go func() {
				defer close(done)
				post(t, s.URL+"/v3/cursor", `{"baton":null,"batch":{"steps":[{"stmt":{"sql":"SELECT 1"}}]}}`)
			}()
			time.Sleep(100 * time.Millisecond) // the cursor's first line, with c1, is out
			if wait {
				<-done
			}
			post(t, s.URL+"/v3/pipeline", `{"baton":"`+c1+`","requests":[{"type":"close"}]}`)
			<-done
			errs := rt.finish()
			if broke := len(errs) == 1 && strings.Contains(errs[0], "§4.4"); broke == wait || !wait && len(errs) != 1 {
				t.Errorf("failures %q", errs)
			}
		})
	}
}

func TestUnexpectedAndUnmet(t *testing.T) {
	t.Parallel()
	t.Run("unexpected", func(t *testing.T) {
		t.Parallel()
		rt := newRecT(t)
		s := New(rt)
		code, _, _ := post(t, s.URL+"/v3/pipeline", `{"baton":"zz","requests":[{"type":"close"}]}`)
		errs := rt.finish()
		if code != 500 || len(errs) != 1 || !strings.Contains(errs[0], "unexpected request #1") ||
			!strings.Contains(errs[0], `"baton": "zz"`) || !strings.Contains(errs[0], "used up") {
			t.Errorf("HTTP %d, failures %q", code, errs)
		}
	})
	t.Run("unmet", func(t *testing.T) {
		t.Parallel()
		rt := newRecT(t)
		s := New(rt, Expect("GET", "/health").Reply(PlainText(200, "ok")))
		s.Add(Pipeline("", Execute(SQL("COMMIT")), Close()).Respond("", ExecuteOK(Empty()), CloseOK()))
		if s.Remaining() != 2 {
			t.Errorf("Remaining = %d", s.Remaining())
		}
		resp, err := http.Get(s.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("answer %q %q", b, resp.Header.Get("Content-Type"))
		}
		errs := rt.finish()
		if len(errs) != 1 || !strings.Contains(errs[0], "1 expected request(s) never arrived") ||
			!strings.Contains(errs[0], `exchange #1: POST /v3/pipeline baton=null [execute "COMMIT", close]`) ||
			!strings.Contains(errs[0], "#1 GET /health") {
			t.Errorf("failures %q", errs)
		}
	})
	t.Run("no reply", func(t *testing.T) {
		t.Parallel()
		rt := newRecT(t)
		s := New(rt, Pipeline("", Close()))
		code, _, _ := post(t, s.URL+"/v3/pipeline", `{"requests":[{"type":"close"}]}`)
		if errs := rt.finish(); code != 500 || len(errs) != 1 || !strings.Contains(errs[0], "has no reply") {
			t.Errorf("HTTP %d, failures %q", code, errs)
		}
	})
}

func TestCursorStreamsLineByLine(t *testing.T) {
	t.Parallel()
	rt := newRecT(t)
	c1 := Baton(7)
	s := New(rt, Cursor("", Step(SQL("SELECT x FROM t"))).Stream(c1,
		StepBegin(0, Col{Name: "x", Decltype: "INTEGER"}),
		Row(Int(1)),
		Pause(300*time.Millisecond),
		Row(Float(2)),
		StepEnd(),
		ReplicationIndex(3),
	))
	start := time.Now()
	resp, err := http.Post(s.URL+"/v3/cursor", "application/json",
		strings.NewReader(`{"baton":null,"batch":{"steps":[{"stmt":{"sql":"SELECT x FROM t","want_rows":true}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	var lines []string
	for {
		l, err := br.ReadString('\n')
		if err == io.EOF && l == "" {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 2 && time.Since(start) > 250*time.Millisecond {
			t.Errorf("the line before the pause came late (%v): lines are not flushed", time.Since(start))
		}
		lines = append(lines, strings.TrimSuffix(l, "\n"))
	}
	want := []string{
		`{"baton":"` + c1 + `","base_url":null}`,
		`{"type":"step_begin","step":0,"cols":[{"name":"x","decltype":"INTEGER"}]}`,
		`{"type":"row","row":[{"type":"integer","value":"1"}]}`,
		`{"type":"row","row":[{"type":"float","value":2.0}]}`,
		`{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`,
		`{"type":"replication_index","replication_index":3}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the pause did not happen: %v", d)
	}
	if errs := rt.finish(); len(errs) != 0 {
		t.Errorf("failures %q", errs)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   Reply
		timeout time.Duration
		check   func(t *testing.T, resp *http.Response, err error, took time.Duration)
	}{
		{"drop", Drop(), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			if err == nil {
				t.Errorf("a dropped connection answered HTTP %d", resp.StatusCode)
			}
		}},
		{"hang", Hang(), 200 * time.Millisecond, func(t *testing.T, resp *http.Response, err error, took time.Duration) {
			if !errors.Is(err, context.DeadlineExceeded) || took < 200*time.Millisecond {
				t.Errorf("err %v after %v", err, took)
			}
		}},
		{"delay", Delay(150*time.Millisecond, StreamExpired()), 0, func(t *testing.T, resp *http.Response, err error, took time.Duration) {
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if took < 150*time.Millisecond || resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" ||
				string(b) != `{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}` {
				t.Errorf("after %v: HTTP %d %q", took, resp.StatusCode, b)
			}
		}},
		{"cut", CursorReply("b", StepBegin(0), Cut()), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(string(b), `{"baton":"b","base_url":null}`+"\n") {
				t.Errorf("read %q, %v; want the lines so far and an unexpected EOF", b, err)
			}
		}},
		{"truncated", CursorReply("b", StepBegin(0)), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil || strings.Count(string(b), "\n") != 2 {
				t.Errorf("read %q, %v; want two lines and a clean end", b, err)
			}
		}},
		{"protocol error", ProtocolError("Received an invalid baton"), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(b) != "Received an invalid baton" {
				t.Errorf("HTTP %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
		}},
		{"http error", HTTPError(401, "Unauthorized: `The JWT is invalid`"), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 401 || string(b) != `{"error":"Unauthorized: `+"`The JWT is invalid`"+`"}` {
				t.Errorf("HTTP %d %q", resp.StatusCode, b)
			}
		}},
		{"not found", NotFound(), 0, func(t *testing.T, resp *http.Response, err error, _ time.Duration) {
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 404 || len(b) != 0 {
				t.Errorf("HTTP %d %q", resp.StatusCode, b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			s := New(rt, Expect("POST", "/v3/pipeline").Reply(tt.reply))
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v3/pipeline", strings.NewReader(`{}`))
			start := time.Now()
			resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
			tt.check(t, resp, err, time.Since(start))
			if resp != nil {
				resp.Body.Close()
			}
			if errs := rt.finish(); len(errs) != 0 {
				t.Errorf("failures %q", errs)
			}
		})
	}
}

// A hang is released when the server closes, even if the client waits on.
func TestCloseReleasesHang(t *testing.T) {
	t.Parallel()
	rt := newRecT(t)
	s := New(rt, Expect("POST", "/x").Reply(Hang()))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/x", "text/plain", nil)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	if !s.Await(5 * time.Second) {
		t.Fatal("the request never arrived")
	}
	done := make(chan struct{})
	go func() { rt.finish(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := <-errc; err == nil {
		t.Error("the hung request got an answer")
	}
}

func TestAwait(t *testing.T) {
	t.Parallel()
	rt := newRecT(t)
	s := New(rt, Expect("GET", "/a").Reply(PlainText(200, "")), Expect("GET", "/b").Reply(PlainText(200, "")))
	if s.Await(10 * time.Millisecond) {
		t.Error("Await reported a script used up before any request")
	}
	go func() {
		for _, p := range []string{"/a", "/b"} {
			if resp, err := http.Get(s.URL + p); err == nil {
				resp.Body.Close()
			}
		}
	}()
	if !s.Await(5 * time.Second) {
		t.Error("Await did not see the requests")
	}
	if errs := rt.finish(); len(errs) != 0 {
		t.Errorf("failures %q", errs)
	}
}

func TestValuesAsSQLDWritesThem(t *testing.T) {
	t.Parallel()
	got := string(PipelineBody(Baton(2), ExecuteOK(Query(
		[]Col{{Name: "a", Decltype: "INTEGER"}, {Name: "b"}},
		Vals(Int(-9223372036854775808), Float(1), Float(0.5), Float(math.Inf(-1)), Text("é\"\n"), Blob([]byte{0xfb, 0xff}), Null()),
	)), Fail("SQL_PARSE_ERROR", "SQL string could not be parsed: syntax error around L1:6: `selec`"),
		BatchOK(StepOK(Updated(2)), StepFailed("SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.a"), StepSkipped()),
		DescribeOK(true), SequenceOK(), GetAutocommitOK(false), StoreSQLOK(), CloseSQLOK()))
	want := `{"baton":"` + Baton(2) + `","base_url":null,"results":[` +
		`{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"a","decltype":"INTEGER"},{"name":"b","decltype":null}],` +
		`"rows":[[{"type":"integer","value":"-9223372036854775808"},{"type":"float","value":1.0},{"type":"float","value":0.5},{"type":"float","value":null},{"type":"text","value":"é\"\n"},{"type":"blob","base64":"+/8"},{"type":"null"}]],` +
		`"affected_row_count":0,"last_insert_rowid":null,"replication_index":null,"rows_read":1,"rows_written":0,"query_duration_ms":0.042}}},` +
		`{"type":"error","error":{"message":"SQL string could not be parsed: syntax error around L1:6: ` + "`selec`" + `","code":"SQL_PARSE_ERROR"}},` +
		`{"type":"ok","response":{"type":"batch","result":{"step_results":[{"cols":[],"rows":[],"affected_row_count":2,"last_insert_rowid":null,"replication_index":null,"rows_read":0,"rows_written":2,"query_duration_ms":0.042},null,null],` +
		`"step_errors":[null,{"message":"SQLite error: UNIQUE constraint failed: t.a","code":"SQLITE_CONSTRAINT"},null],"replication_index":null}}},` +
		`{"type":"ok","response":{"type":"describe","result":{"params":[],"cols":[],"is_explain":false,"is_readonly":true}}},` +
		`{"type":"ok","response":{"type":"sequence"}},` +
		`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":false}},` +
		`{"type":"ok","response":{"type":"store_sql"}},{"type":"ok","response":{"type":"close_sql"}}]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("not valid JSON")
	}
	for _, l := range []Line{StepEndInsert(2, 5), StepError(1, "ARGS_INVALID", "x"), BatchError("TRANSACTION_TIMEOUT", "Transaction timed out"), RawLine(`{"type":"future"}`)} {
		if !json.Valid([]byte(l.text)) {
			t.Errorf("invalid line %s", l.text)
		}
	}
	if l := StepEndInsert(2, 5).text; l != `{"type":"step_end","affected_row_count":2,"last_insert_rowid":5}` {
		t.Errorf("step_end %s", l)
	}
}

func TestRequestTrees(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  Req
		body string // as a driver might send it
		ok   bool
	}{
		{"named", Execute(SQL("SELECT :a").Named(":a", Text("x"))),
			`{"type":"execute","stmt":{"sql":"SELECT :a","named_args":[{"name":":a","value":{"type":"text","value":"x"}}],"want_rows":false}}`, true},
		{"float arg", Execute(SQL("SELECT ?", Float(1))),
			`{"type":"execute","stmt":{"sql":"SELECT ?","args":[{"type":"float","value":1.0}]}}`, true},
		{"null arg", Execute(SQL("SELECT ?", Null())),
			`{"type":"execute","stmt":{"sql":"SELECT ?","args":[{"type":"null"}]}}`, true},
		{"int as number", Execute(SQL("SELECT ?", Int(1))),
			`{"type":"execute","stmt":{"sql":"SELECT ?","args":[{"type":"integer","value":1}]}}`, false},
		{"sequence", Sequence("A; B"), `{"type":"sequence","sql":"A; B"}`, true},
		{"describe", Describe("X"), `{"sql":"X","type":"describe"}`, true},
		{"autocommit", GetAutocommit(), `{"type":"get_autocommit"}`, true},
		{"store", StoreSQL(3, "S"), `{"type":"store_sql","sql_id":3,"sql":"S"}`, true},
		{"close sql", CloseSQL(3), `{"type":"close_sql","sql_id":3}`, true},
		{"conds", Batch(Step(SQL("A")), Step(SQL("B")).If(And(Not(Failed(0)), Or(IsAutocommit(), OK(0))))),
			`{"type":"batch","batch":{"steps":[{"stmt":{"sql":"A"}},{"stmt":{"sql":"B"},"condition":{"type":"and","conds":[` +
				`{"type":"not","cond":{"type":"error","step":0}},{"type":"or","conds":[{"type":"is_autocommit"},{"type":"ok","step":0}]}]}}]}}`, true},
		{"wrong cond", Batch(Step(SQL("A")).If(IsAutocommit())), `{"type":"batch","batch":{"steps":[{"stmt":{"sql":"A"}}]}}`, false},
	}
	for _, tt := range tests {
		var got any
		if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
			t.Fatal(err)
		}
		d := diff(normalize(tt.req.m), normalize(got), "$")
		if (d == "") != tt.ok {
			t.Errorf("%s: diff %q, want match %v", tt.name, d, tt.ok)
		}
	}
}

func TestAnyInHandBuiltTree(t *testing.T) {
	t.Parallel()
	want := map[string]any{"baton": Any, "requests": []any{}}
	for _, body := range []string{`{"requests":[]}`, `{"baton":"x","requests":[]}`} {
		var got any
		_ = json.Unmarshal([]byte(body), &got)
		if d := diff(normalize(want), normalize(got), "$"); d != "" {
			t.Errorf("%s: %s", body, d)
		}
	}
	if s := showTree(want, false); !strings.Contains(s, `"<any>"`) {
		t.Errorf("showTree: %s", s)
	}
}

func TestBaton(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := range 50 {
		b := Baton(i)
		raw, err := base64.RawStdEncoding.DecodeString(b)
		if len(b) != 64 || err != nil || len(raw) != 48 || seen[b] {
			t.Fatalf("Baton(%d) = %q (%v)", i, b, err)
		}
		seen[b] = true
	}
}

func TestRefusedURL(t *testing.T) {
	t.Parallel()
	u := RefusedURL(t)
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("RefusedURL = %q", u)
	}
	if resp, err := http.Get(u + "/v3"); err == nil {
		resp.Body.Close()
		t.Fatal("a refused URL answered")
	}
}
