package http

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/loopback"
	"github.com/gohrana/libsql/transport"
)

// recorder is a fake sqld that answers pipelines from a function and
// records every request body by path.
type recorder struct {
	mu     sync.Mutex
	bodies []string // "path body"
}

func (rec *recorder) add(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, r.URL.Path+" "+string(body))
	rec.mu.Unlock()
	return string(body)
}

func (rec *recorder) all() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.bodies...)
}

const (
	okExecute   = `{"baton":"B2","base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":1,"last_insert_rowid":"7","replication_index":null}}}]}`
	okExecClose = `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":1,"last_insert_rowid":"7","replication_index":null}}},{"type":"ok","response":{"type":"close"}}]}`
)

func execReq(sql string) []codec.StreamRequest {
	return []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql}}}
}

// begin sends BEGIN on s, keeping the stream, and returns the response it
// was read into, for the test's next request; a failure fails the test.
func begin(t *testing.T, s transport.Stream) *transport.Response {
	t.Helper()
	res := new(transport.Response)
	if err := s.Send(context.Background(), execReq("BEGIN"), false, res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSendEnd: without end the baton is kept for the next request; with
// end, a connection's stream asks get_autocommit and is kept if the server
// says no transaction is open, closed otherwise (a COMMIT that failed),
// while a stream that does not keep (Isolated) has a close ride along.
func TestSendEnd(t *testing.T) {
	const (
		execOK = `{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":1,"last_insert_rowid":"7","replication_index":null}}}`
		closed = `{"type":"ok","response":{"type":"close"}}`
	)
	autocommit := func(b bool) string {
		return `{"type":"ok","response":{"type":"get_autocommit","is_autocommit":` + map[bool]string{true: "true", false: "false"}[b] + `}}`
	}
	for _, tc := range []struct {
		name       string
		isolated   bool
		autocommit bool   // the server's answer to get_autocommit
		wantLast   string // the last request of the ending send
		wantOpen   bool   // after the ending send
		wantCloses int    // requests that are a close of their own
	}{
		{name: "kept", autocommit: true, wantLast: `{"type":"get_autocommit"}]`, wantOpen: true},
		{name: "transaction left open", autocommit: false, wantLast: `{"type":"get_autocommit"}]`, wantCloses: 1},
		{name: "isolated", isolated: true, wantLast: `{"type":"close"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
				body := rec.add(r)
				w.Header().Set("Content-Type", "application/json")
				switch {
				case strings.Contains(body, `"requests":[{"type":"close"}]`):
					_, _ = io.WriteString(w, `{"baton":null,"base_url":null,"results":[`+closed+`]}`)
				case strings.Contains(body, `"close"`):
					_, _ = io.WriteString(w, `{"baton":null,"base_url":null,"results":[`+execOK+`,`+closed+`]}`)
				case strings.Contains(body, `"get_autocommit"`):
					_, _ = io.WriteString(w, `{"baton":"B3","base_url":null,"results":[`+execOK+`,`+autocommit(tc.autocommit)+`]}`)
				default:
					_, _ = io.WriteString(w, okExecute)
				}
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
			s := c.NewStream()
			if tc.isolated {
				s = s.Isolated()
			}
			res := new(transport.Response)
			if err := s.Send(context.Background(), execReq("BEGIN"), false, res); err != nil || !s.Open() {
				t.Fatalf("held send: %v, open %v", err, s.Open())
			}
			if err := s.Send(context.Background(), execReq("COMMIT"), true, res); err != nil || s.Open() != tc.wantOpen {
				t.Fatalf("ending send: %v, open %v", err, s.Open())
			}
			got := rec.all()
			if len(got) != 2+tc.wantCloses || !strings.Contains(got[0], `"baton":null`) ||
				!strings.Contains(got[1], `"baton":"B2"`) || !strings.HasSuffix(got[1], tc.wantLast+"}") {
				t.Fatalf("requests: %q", got)
			}
			if n := len(res.Pipeline.Results); n != 2 {
				t.Fatalf("%d results, want the execute's and the transport's own", n)
			}
			if tc.wantCloses == 1 && (!strings.Contains(got[2], `"baton":"B3"`) || !strings.Contains(got[2], `"requests":[{"type":"close"}]`)) {
				t.Fatalf("the stream holding a transaction was not closed: %q", got[2])
			}
			if !tc.wantOpen {
				return
			}
			// The kept stream carries the next unit of work; once idle
			// for keptIdleMax it is dropped instead.
			if err := s.Send(context.Background(), execReq("SELECT 1"), true, res); err != nil {
				t.Fatal(err)
			}
			if got := rec.all(); !strings.Contains(got[2], `"baton":"B3"`) {
				t.Fatalf("next unit of work not on the kept stream: %q", got[2])
			}
			s.(*stream).idleSince = time.Now().Add(-keptIdleMax)
			if s.Open() {
				t.Fatal("a stream idle for keptIdleMax is still open")
			}
			if err := s.Send(context.Background(), execReq("SELECT 2"), true, res); err != nil {
				t.Fatal(err)
			}
			if got := rec.all(); !strings.Contains(got[3], `"baton":null`) {
				t.Fatalf("a stream idle too long was used: %q", got[3])
			}
		})
	}
}

// TestSendEndFailureClosesStream: a request with end that got no answer
// leaves the stream possibly holding a transaction; Send has it closed,
// in the background.
func TestSendEndFailureClosesStream(t *testing.T) {
	var rec recorder
	var n atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		body := rec.add(r)
		switch n.Add(1) {
		case 1:
			_, _ = io.WriteString(w, okExecute)
		case 2:
			// Hijack and drop the connection: no answer to the COMMIT.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			if !strings.Contains(body, `"baton":"B2"`) {
				t.Errorf("cleanup close without the baton: %s", body)
			}
			_, _ = io.WriteString(w, okClose)
		}
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	res := begin(t, s)
	err := s.Send(context.Background(), execReq("COMMIT"), true, res)
	var e *transport.Error
	if !errors.As(err, &e) || e.Safe || e.Resend || e.HTTPStatus != 0 {
		t.Fatalf("got %#v, want an error for a request that may have arrived", err)
	}
	if s.Open() {
		t.Fatal("stream still open")
	}
	// The close goes out in the background: the failure is the caller's
	// answer, which it does not delay.
	for deadline := time.Now().Add(5 * time.Second); len(rec.all()) < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := rec.all(); len(got) != 3 {
		t.Fatalf("%d requests, want BEGIN, COMMIT and the cleanup close: %q", len(got), got)
	}
}

// TestResetClosesOpenStream: Reset sends a close with the baton and
// forgets it; on a stream that is not open it sends nothing.
func TestResetClosesOpenStream(t *testing.T) {
	var rec recorder
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		body := rec.add(r)
		if strings.Contains(body, `"close"`) {
			_, _ = io.WriteString(w, okClose)
			return
		}
		_, _ = io.WriteString(w, okExecute)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	s.Reset()
	if len(rec.all()) != 0 {
		t.Fatal("Reset of a stream never opened sent a request")
	}
	begin(t, s)
	s.Reset()
	got := rec.all()
	if s.Open() || len(got) != 2 || !strings.Contains(got[1], `"baton":"B2"`) || !strings.Contains(got[1], "close") {
		t.Fatalf("open %v, requests %q", s.Open(), got)
	}
}

func TestDecodeFailureForgetsStream(t *testing.T) {
	var n atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			_, _ = io.WriteString(w, okExecute)
			return
		}
		_, _ = io.WriteString(w, `{"baton":"B3","results":[{"type":"ok"`)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	res := begin(t, s)
	err := s.Send(context.Background(), execReq("SELECT 1"), false, res)
	var e *transport.Error
	if !errors.As(err, &e) || e.Safe || !strings.Contains(err.Error(), "decode failed") {
		t.Fatalf("got %v", err)
	}
	if s.Open() {
		t.Fatal("a stream whose answer could not be decoded is kept")
	}
}

// TestNotSentIsBadConn: with the own transport and with another
// RoundTripper, a refused connection is Safe and BadConn, and matches
// driver.ErrBadConn; an answered request is neither.
func TestNotSentIsBadConn(t *testing.T) {
	addr, err := loopback.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []http.RoundTripper{nil, &http.Transport{}} {
		c := newTestClient(t, transport.Options{URL: "http://" + addr, Codec: direct.Codec, RoundTripper: rt})
		err := sendClose(context.Background(), c.NewStream())
		var e *transport.Error
		if !errors.As(err, &e) || !e.Safe || !e.Resend {
			t.Fatalf("rt %T: got %#v", rt, err)
		}
		if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("rt %T: the message lost the cause: %v", rt, err)
		}
	}
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	for _, rt := range []http.RoundTripper{nil, &http.Transport{}} {
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, RoundTripper: rt})
		err := sendClose(context.Background(), c.NewStream())
		var e *transport.Error
		if !errors.As(err, &e) || e.Safe || e.Resend {
			t.Fatalf("rt %T: a request the server read is not unsent: %#v", rt, err)
		}
	}
}

// TestNoProbe: nothing but the requests themselves goes to the server
// (PROTOCOL.md §2 defines no discovery): whatever GET /v3 would answer,
// 404, 405, 429 or nothing, the first request is the pipeline, and a cold
// start costs one round trip.
func TestNoProbe(t *testing.T) {
	var gets, posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		posts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, okClose)
	}))
	defer srv.Close()
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	if v, err := c.version(context.Background()); err != nil || v != v3 {
		t.Fatalf("v %d, %v", v, err)
	}
	for range 3 {
		if err := sendClose(context.Background(), c.NewStream()); err != nil {
			t.Fatal(err)
		}
	}
	if gets.Load() != 0 || posts.Load() != 3 {
		t.Fatalf("%d GETs and %d POSTs, want 0 and 3", gets.Load(), posts.Load())
	}
}

// cursorServer serves /v3/cursor from lines, pausing where a line is
// "PAUSE", and answers pipelines (touches and closes) with batons. A
// request that comes while a cursor's body is being written breaks
// PROTOCOL.md §4.4 (one request in flight per stream): it is counted in
// overlaps.
type cursorServer struct {
	recorder
	lines    []string
	pause    time.Duration
	touches  atomic.Int32
	inCursor atomic.Bool
	overlaps atomic.Int32
}

func (cs *cursorServer) handler(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := cs.add(r)
		if r.URL.Path == "/v3/cursor" {
			cs.inCursor.Store(true)
			defer cs.inCursor.Store(false)
			w.Header().Set("Content-Type", "text/plain")
			bw := bufio.NewWriter(w)
			for _, l := range cs.lines {
				if l == "PAUSE" {
					_ = bw.Flush()
					w.(http.Flusher).Flush()
					time.Sleep(cs.pause)
					continue
				}
				_, _ = bw.WriteString(l + "\n")
			}
			_ = bw.Flush()
			return
		}
		if cs.inCursor.Load() {
			cs.overlaps.Add(1)
		}
		if strings.Contains(body, `"requests":[]`) {
			t.Errorf("an empty pipeline: %s", body)
		}
		if strings.Contains(body, `get_autocommit`) {
			cs.touches.Add(1)
			_, _ = io.WriteString(w, `{"baton":"K`+string(rune('0'+cs.touches.Load()))+`","base_url":null,"results":[{"type":"ok","response":{"type":"get_autocommit","is_autocommit":false}}]}`)
			return
		}
		_, _ = io.WriteString(w, okClose)
	}
}

var cursorLines = []string{
	`{"baton":"C1","base_url":null}`,
	`{"type":"step_begin","step":0,"cols":[{"name":"x","decltype":"INTEGER"}]}`,
	`{"type":"row","row":[{"type":"integer","value":"1"}]}`,
	"PAUSE",
	`{"type":"row","row":[{"type":"integer","value":"2"}]}`,
	`{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`,
	`{"type":"replication_index","replication_index":null}`,
}

func readCursor(t *testing.T, cur transport.Cursor) []string {
	t.Helper()
	var types []string
	var e codec.CursorEntry
	for {
		err := cur.Next(&e)
		if errors.Is(err, io.EOF) {
			return types
		}
		if err != nil {
			t.Fatalf("after %v: %v", types, err)
		}
		types = append(types, map[codec.EntryType]string{codec.EntryStepBegin: "begin", codec.EntryRow: "row",
			codec.EntryStepEnd: "end", codec.EntryReplicationIndex: "index"}[e.Type])
	}
}

// TestCursorOwnStream: a cursor opened with end on a stream that is not
// open runs on a stream of its own, which Close closes with the cursor's
// baton; nothing else goes on it (no transaction needs it kept alive), and
// the Stream it was opened from stays free.
func TestCursorOwnStream(t *testing.T) {
	cs := &cursorServer{lines: cursorLines, pause: 300 * time.Millisecond}
	srv := fakeServer(t, 200, cs.handler(t))
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec}, func(c *client) { c.keepAlive = 100 * time.Millisecond })
	s := c.NewStream()
	cur, err := s.OpenCursor(context.Background(), &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT x"}}}}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Open() {
		t.Fatal("the cursor took the conn's stream")
	}
	if got := strings.Join(readCursor(t, cur), " "); got != "begin row row end index" || !cur.Done() {
		t.Fatalf("entries %q, done %v", got, cur.Done())
	}
	time.Sleep(300 * time.Millisecond)
	if err := cur.Close(); err != nil {
		t.Fatal(err)
	}
	got := cs.all()
	if len(got) != 2 || !strings.Contains(got[1], "close") || !strings.Contains(got[1], `"baton":"C1"`) {
		t.Fatalf("requests %q, want the cursor and a close with its baton", got)
	}
}

// TestCursorHeldKeepAlive: a cursor on a transaction's stream (no end)
// sends nothing while its body is in flight, though the body pauses past
// the interval; once the body is in, a get_autocommit touches the stream
// every interval while the rows are read, and the stream goes on with the
// last touch's baton.
func TestCursorHeldKeepAlive(t *testing.T) {
	cs := &cursorServer{lines: cursorLines, pause: 300 * time.Millisecond}
	srv := fakeServer(t, 200, cs.handler(t))
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec}, func(c *client) { c.keepAlive = 100 * time.Millisecond })
	s := c.newStream()
	s.baton = "B0"
	cur, err := s.OpenCursor(context.Background(), &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT x"}}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e codec.CursorEntry
	if err := cur.Next(&e); err != nil || e.Type != codec.EntryStepBegin {
		t.Fatalf("%v %v", e.Type, err)
	}
	time.Sleep(700 * time.Millisecond) // the body's pause, then about 3 intervals with the rows read
	if got := strings.Join(readCursor(t, cur), " "); got != "row row end index" {
		t.Fatalf("entries %q", got)
	}
	if err := cur.Close(); err != nil {
		t.Fatal(err)
	}
	if n := cs.touches.Load(); n < 2 {
		t.Fatalf("%d touches after the body was in, want 2 or more", n)
	}
	if n := cs.overlaps.Load(); n != 0 {
		t.Fatalf("%d requests while the cursor's body was in flight", n)
	}
	if want := "K" + string(rune('0'+cs.touches.Load())); s.baton != want {
		t.Fatalf("baton %q, want the last touch's %q", s.baton, want)
	}
}

// TestCursorHeldStream: without end the cursor runs on the stream itself,
// which keeps the cursor's baton after Close (for the transaction on it).
func TestCursorHeldStream(t *testing.T) {
	lines := append([]string(nil), cursorLines...)
	lines = append(lines[:3], lines[4:]...)
	cs := &cursorServer{lines: lines}
	srv := fakeServer(t, 200, cs.handler(t))
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	cur, err := s.OpenCursor(context.Background(), &codec.Batch{}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	readCursor(t, cur)
	cur.Close()
	if !s.Open() {
		t.Fatal("the transaction's stream was dropped")
	}
	for _, r := range cs.all() {
		if strings.Contains(r, "close") {
			t.Fatalf("a held cursor closed its stream: %q", r)
		}
	}
}

// TestCursorFailures: HTTP errors, a body cut before its first line and
// garbage are errors; a body cut mid-way is ErrCursorTruncated; Hrana 2
// servers have no cursors.
func TestCursorFailures(t *testing.T) {
	tests := []struct {
		name   string
		v3     int
		status int
		lines  []string
		open   string // error text from OpenCursor
		next   error  // error from reading, if OpenCursor worked
	}{
		{name: "http error", v3: 200, status: 400, lines: []string{"Received an invalid baton"}, open: "invalid baton"},
		{name: "empty body", v3: 200, status: 200, open: "read failed"},
		{name: "garbage header", v3: 200, status: 200, lines: []string{`{"baton":`}, open: "decode failed"},
		{name: "truncated", v3: 200, status: 200, lines: cursorLines[:3], next: transport.ErrCursorTruncated},
		{name: "garbage entry", v3: 200, status: 200, lines: append(cursorLines[:3:3], `{"type":"row","row":[{]}`), next: errors.New("decode failed")},
		{name: "hrana 2", v3: 404, open: "may speak only Hrana 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, tt.v3, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if r.URL.Path != "/v3/cursor" {
					_, _ = io.WriteString(w, okClose)
					return
				}
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(tt.status)
				for _, l := range tt.lines {
					_, _ = io.WriteString(w, l+"\n")
				}
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
			cur, err := c.NewStream().OpenCursor(context.Background(), &codec.Batch{}, true, nil)
			if tt.open != "" {
				if err == nil || !strings.Contains(err.Error(), tt.open) {
					t.Fatalf("got %v, want %q", err, tt.open)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close()
			var e codec.CursorEntry
			for err == nil {
				err = cur.Next(&e)
			}
			if tt.next == transport.ErrCursorTruncated && !errors.Is(err, transport.ErrCursorTruncated) ||
				tt.next != transport.ErrCursorTruncated && !strings.Contains(err.Error(), tt.next.Error()) {
				t.Fatalf("got %v, want %v", err, tt.next)
			}
			if again := cur.Next(&e); again != err {
				t.Fatalf("a failed cursor answered %v, then %v", err, again)
			}
		})
	}
}

// TestCursorTimeoutBoundsFirstLine: the connector's timeout bounds the wait
// for the cursor's first line, not the body after it.
func TestCursorTimeoutBoundsFirstLine(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, Timeout: 50 * time.Millisecond})
	_, err := c.NewStream().OpenCursor(context.Background(), &codec.Batch{}, true, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

// TestLongCursorLine: a line longer than the read buffer is assembled; one
// over the response limit is refused.
func TestLongCursorLine(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	lines := []string{cursorLines[0], cursorLines[1],
		`{"type":"row","row":[{"type":"text","value":"` + big + `"}]}`, cursorLines[5], cursorLines[6]}
	cs := &cursorServer{lines: lines}
	srv := fakeServer(t, 200, cs.handler(t))
	for _, limit := range []int64{0, 100 << 10} {
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec}, func(c *client) {
			if limit > 0 {
				c.maxResp = limit
			}
		})
		cur, err := c.NewStream().OpenCursor(context.Background(), &codec.Batch{}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e codec.CursorEntry
		_ = cur.Next(&e)
		err = cur.Next(&e)
		switch {
		case limit == 0 && (err != nil || string(e.Row[0].Bytes) != big):
			t.Fatalf("long line: %v", err)
		case limit > 0 && !errors.Is(err, transport.ErrResponseTooLarge):
			t.Fatalf("limit %d: got %v", limit, err)
		}
		cur.Close()
	}
}

// TestCursorSetup: setup runs as a pipeline of its own on the cursor's new
// stream, whose baton the cursor request then carries; a setting that
// fails is the error.
func TestCursorSetup(t *testing.T) {
	setup := []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "PRAGMA foreign_keys = OFF"}}}
	for _, fail := range []bool{false, true} {
		var rec recorder
		srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
			body := rec.add(r)
			switch {
			case r.URL.Path == "/v3/cursor":
				if !strings.Contains(body, `"baton":"S1"`) {
					t.Errorf("cursor without the setup's baton: %s", body)
				}
				for _, l := range cursorLines {
					if l != "PAUSE" {
						_, _ = io.WriteString(w, l+"\n")
					}
				}
			case strings.Contains(body, "PRAGMA"):
				if strings.Contains(body, "close") {
					t.Errorf("the setup closed the stream: %s", body)
				}
				result := `{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}}}`
				if fail {
					result = `{"type":"error","error":{"message":"no such pragma","code":"SQL_PARSE_ERROR"}}`
				}
				_, _ = io.WriteString(w, `{"baton":"S1","base_url":null,"results":[`+result+`]}`)
			default:
				_, _ = io.WriteString(w, okClose)
			}
		})
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
		cur, err := c.NewStream().OpenCursor(context.Background(), &codec.Batch{}, true, setup)
		if fail {
			if err == nil || !strings.Contains(err.Error(), `connection setting "PRAGMA foreign_keys = OFF" failed: no such pragma`) {
				t.Fatalf("got %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		readCursor(t, cur)
		cur.Close()
	}
}

// TestHeaders: custom headers go with the probe, pipelines and cursors;
// the client's own headers win; their values are redacted from echoed
// error text.
func TestHeaders(t *testing.T) {
	const key = "c2VjcmV0LWtleS0xMjM0NQ=="
	var seen []http.Header
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.Method == http.MethodGet:
		case r.URL.Path == "/v3/cursor":
			_, _ = io.WriteString(w, cursorLines[0]+"\n"+cursorLines[6]+"\n")
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "bad request with key "+key)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, AuthToken: "tok",
		Headers: http.Header{"X-Turso-Encryption-Key": {key}, "X-App": {"demo"}, "Authorization": {"mine"}}})
	err := sendClose(context.Background(), c.NewStream())
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("got %v", err)
	}
	cur, err := c.NewStream().OpenCursor(context.Background(), &codec.Batch{}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	cur.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Fatalf("%d requests", len(seen))
	}
	for i, h := range seen {
		if h.Get("X-Turso-Encryption-Key") != key || h.Get("X-App") != "demo" {
			t.Errorf("request %d lacks the custom headers: %v", i, h)
		}
		if i > 0 && h.Get("Authorization") != "Bearer tok" {
			t.Errorf("request %d: Authorization %q", i, h.Get("Authorization"))
		}
	}
}

// TestNamespaceHeader: the namespace goes with every request, over a header
// of the same name given as a custom header, and is not redacted from
// error text (which names it when the namespace does not exist).
func TestNamespaceHeader(t *testing.T) {
	const ns = "tenant-number-one"
	var seen []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Values("X-Namespace")...)
		if bin := r.Header.Get("X-Namespace-Bin"); bin != "dGVuYW50LW51bWJlci1vbmU" {
			t.Errorf("x-namespace-bin %q", bin)
		}
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Namespace `+"`"+ns+"`"+` doesn't exist"}`)
	}))
	defer srv.Close()
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, Namespace: ns,
		Headers: http.Header{"X-Namespace": {"other-namespace"}}})
	err := sendClose(context.Background(), c.NewStream())
	if !isStatus(err, http.StatusNotFound) || !strings.Contains(err.Error(), ns) {
		t.Fatalf("got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != ns || seen[1] != ns {
		t.Fatalf("x-namespace headers sent: %q", seen)
	}
}

// TestStrainedKeepsNoStream: after a 429 (sqld out of connections, each
// kept stream holding one) the client keeps no stream for strainWindow: a
// kept stream ends with its next unit of work, giving its connection back.
func TestStrainedKeepsNoStream(t *testing.T) {
	var rec recorder
	var n atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		body := rec.add(r)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case n.Add(1) == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":"Timed out while opening database connection"}`)
		case strings.Contains(body, `"close"`):
			_, _ = io.WriteString(w, okExecClose)
		default: // the request the 429 refused, built to be kept, sent again
			_, _ = io.WriteString(w, `{"baton":"B3","base_url":null,"results":[`+
				`{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}}},`+
				`{"type":"ok","response":{"type":"get_autocommit","is_autocommit":true}}]}`)
		}
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	res := new(transport.Response)
	for i := range 2 {
		if err := s.Send(context.Background(), execReq("SELECT 1"), true, res); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	got := rec.all()
	if len(got) != 3 || !strings.HasSuffix(got[2], `{"type":"close"}]}`) || !strings.Contains(got[2], `"baton":"B3"`) || s.Open() {
		t.Fatalf("requests: %q, open %v", got, s.Open())
	}
	c.strain.Store(0)
	if !c.keeps() {
		t.Fatal("streams not kept once the strain is over")
	}
}

// TestCursorOnStaleKeptStream: a kept stream idle past keptIdleMax is
// dropped before a cursor as before a pipeline: the cursor opens a new
// stream rather than send a baton the server is about to expire.
func TestCursorOnStaleKeptStream(t *testing.T) {
	for _, end := range []bool{true, false} {
		cs := &cursorServer{lines: cursorLines}
		srv := fakeServer(t, 200, cs.handler(t))
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
		s := c.NewStream().(*stream)
		s.baton, s.idleSince = "B0", time.Now().Add(-keptIdleMax)
		cur, err := s.OpenCursor(context.Background(), &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT x"}}}}, end, nil)
		if err != nil {
			t.Fatal(err)
		}
		readCursor(t, cur)
		_ = cur.Close()
		if got := cs.all(); len(got) == 0 || strings.Contains(got[0], "B0") {
			t.Fatalf("end %v: requests %q, want the cursor on a new stream", end, got)
		}
	}
}
