package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fakesqld"
	"github.com/gohrana/libsql/transport"
)

// The codecs the tests speak.
var (
	jsonCodec     = direct.Codec.(codec.SocketCodec)
	protobufCodec = protobuf.Codec.(codec.SocketCodec)
)

// fake is a scripted Hrana-over-WebSocket server on 127.0.0.1. It decodes
// what clients send with encoding/json (independently of the codecs) and
// answers like sqld would, in a simplified world:
//
//   - execute answers one row holding "<stream id>:<sql>" as text;
//     "ERR ..." fails with SQLITE_ERROR; "SLEEP <ms> ..." answers after
//     that long, from another goroutine (so answers leave out of order);
//   - open_cursor on "ROWS <n>" streams n rows (i, "row <i>") for i from
//     0 to n-1, fetch by fetch;
//   - hello with a jwt other than token fails, echoing the jwt in the
//     message (a server that leaks it; the client must not).
//
// A hook, if set (setHook), sees every message first and answers it
// itself when it returns true.
type fake struct {
	t      testing.TB
	srv    *httptest.Server
	token  string
	protos []string
	hook   atomic.Pointer[func(fc *fconn, m *cmsg) bool]
	reject atomic.Int32 // dials to answer with HTTP 503, then accept
	// rejectAfter delays each 503 (nanoseconds), so that requests a test
	// starts together all meet the dial under way.
	rejectAfter atomic.Int64
	dials       atomic.Int32
	live        atomic.Int32 // sockets open

	mu     sync.Mutex
	conns  []*fconn
	header http.Header // of the latest handshake
}

// cmsg is a client message as the fake reads it.
type cmsg struct {
	Type      string  `json:"type"`
	JWT       *string `json:"jwt"`
	RequestID int32   `json:"request_id"`
	Request   creq    `json:"request"`
}

type creq struct {
	Type     string  `json:"type"`
	StreamID int32   `json:"stream_id"`
	CursorID int32   `json:"cursor_id"`
	MaxCount int     `json:"max_count"`
	SQLID    *int32  `json:"sql_id"`
	SQL      *string `json:"sql"`
	Stmt     *cstmt  `json:"stmt"`
	Batch    *struct {
		Steps []struct {
			Stmt cstmt `json:"stmt"`
		} `json:"steps"`
	} `json:"batch"`
}

type cstmt struct {
	SQL   *string `json:"sql"`
	SQLID *int32  `json:"sql_id"`
}

// fconn is one socket as the fake sees it.
type fconn struct {
	f  *fake
	ws *fakesqld.WSSocket

	mu      sync.Mutex
	msgs    []cmsg
	streams map[int32]bool
	sqls    map[int32]string
	cursors map[int32]*fcursor
	fetches int // fetch_cursor requests received
}

type fcursor struct {
	total, next int
	begun       bool
}

func newFake(t testing.TB) *fake { return startFake(t, false) }

// startFake starts a fake, serving TLS (wss) if tls is set.
func startFake(t testing.TB, tls bool) *fake {
	f := &fake{t: t, protos: []string{"hrana3", "hrana2"}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	if tls {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(func() {
		f.closeAll()
		f.srv.Close()
	})
	return f
}

func (f *fake) setHook(h func(fc *fconn, m *cmsg) bool) {
	if h == nil {
		f.hook.Store(nil)
		return
	}
	f.hook.Store(&h)
}

func (f *fake) url() string { return "ws" + strings.TrimPrefix(f.srv.URL, "http") }

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.dials.Add(1)
	f.mu.Lock()
	f.header = r.Header.Clone()
	f.mu.Unlock()
	if f.reject.Add(-1) >= 0 {
		time.Sleep(time.Duration(f.rejectAfter.Load()))
		http.Error(w, "overloaded, header "+r.Header.Get("X-Secret"), http.StatusServiceUnavailable)
		return
	}
	f.reject.Store(0)
	c, err := fakesqld.AcceptWS(w, r, f.protos...)
	if err != nil {
		return
	}
	fc := &fconn{f: f, ws: c, streams: map[int32]bool{}, sqls: map[int32]string{}, cursors: map[int32]*fcursor{}}
	f.mu.Lock()
	f.conns = append(f.conns, fc)
	f.mu.Unlock()
	f.live.Add(1)
	defer f.live.Add(-1)
	fc.loop()
}

// closeAll closes every socket abruptly, as a server that goes away does.
func (f *fake) closeAll() {
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	for _, fc := range conns {
		fc.ws.Drop()
	}
}

// conn returns the ith socket the fake accepted.
func (f *fake) conn(i int) *fconn {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.conns) {
		f.t.Fatalf("the fake has %d sockets, not %d", len(f.conns), i+1)
	}
	return f.conns[i]
}

func (fc *fconn) loop() {
	for {
		data, err := fc.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m cmsg
		if err := json.Unmarshal(data, &m); err != nil {
			fc.f.t.Errorf("fake: undecodable message %s: %v", data, err)
			_ = fc.ws.Close(websocket.StatusInvalidFramePayloadData, "bad json")
			return
		}
		fc.mu.Lock()
		fc.msgs = append(fc.msgs, m)
		fc.mu.Unlock()
		if h := fc.f.hook.Load(); h != nil && (*h)(fc, &m) {
			continue
		}
		if !fc.answer(&m) {
			return
		}
	}
}

// received returns the types of the requests the socket got so far
// ("hello" for the hello).
func (fc *fconn) received() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var out []string
	for _, m := range fc.msgs {
		if m.Type == "hello" {
			out = append(out, "hello")
			continue
		}
		out = append(out, m.Request.Type)
	}
	return out
}

// hellos returns the tokens of the hellos the socket got so far.
func (fc *fconn) hellos() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var out []string
	for _, m := range fc.msgs {
		if m.Type == "hello" && m.JWT != nil {
			out = append(out, *m.JWT)
		}
	}
	return out
}

func (fc *fconn) ok(id int32, response string) { _ = fc.ws.OK(id, response) }

func (fc *fconn) fail(id int32, code, message string) { _ = fc.ws.Fail(id, code, message) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// textResult is an execute result of one row holding s.
func textResult(s string) string {
	return `{"cols":[{"name":"s","decltype":null}],"rows":[[{"type":"text","value":` + quote(s) +
		`}]],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}`
}

// answer answers m the way the fake's world works; false ends the socket.
func (fc *fconn) answer(m *cmsg) bool {
	if m.Type == "hello" {
		if fc.f.token != "" && (m.JWT == nil || *m.JWT != fc.f.token) {
			got := "<none>"
			if m.JWT != nil {
				got = *m.JWT
			}
			_ = fc.ws.Write(fakesqld.HelloErrorFrame("AUTH_JWT_INVALID", "Authentication failed: the JWT "+got+" is invalid"))
			_ = fc.ws.Close(websocket.StatusNormalClosure, "")
			return false
		}
		_ = fc.ws.Write(fakesqld.HelloOK)
		return true
	}
	r, id := &m.Request, m.RequestID
	switch r.Type {
	case "open_stream":
		fc.mu.Lock()
		fc.streams[r.StreamID] = true
		fc.mu.Unlock()
		fc.ok(id, `{"type":"open_stream"}`)
	case "close_stream":
		fc.mu.Lock()
		delete(fc.streams, r.StreamID)
		fc.mu.Unlock()
		fc.ok(id, `{"type":"close_stream"}`)
	case "execute":
		sql := fc.sql(r.Stmt)
		fc.execute(id, r.StreamID, sql, func(res string) string { return `{"type":"execute","result":` + res + `}` })
	case "batch":
		var results []string
		for _, st := range r.Batch.Steps {
			results = append(results, textResult(fmt.Sprintf("%d:%s", r.StreamID, fc.sql(&st.Stmt))))
		}
		fc.ok(id, `{"type":"batch","result":{"step_results":[`+strings.Join(results, ",")+`],"step_errors":[]}}`)
	case "sequence":
		fc.ok(id, `{"type":"sequence"}`)
	case "describe":
		fc.ok(id, `{"type":"describe","result":{"params":[],"cols":[],"is_explain":false,"is_readonly":true}}`)
	case "get_autocommit":
		fc.ok(id, `{"type":"get_autocommit","is_autocommit":true}`)
	case "store_sql":
		fc.mu.Lock()
		_, dup := fc.sqls[*r.SQLID]
		fc.sqls[*r.SQLID] = *r.SQL
		fc.mu.Unlock()
		if dup {
			// sqld closes the socket on this protocol violation.
			fc.f.t.Errorf("fake: SQL id %d stored twice", *r.SQLID)
			_ = fc.ws.Close(websocket.StatusPolicyViolation, "SQL text already exists")
			return false
		}
		fc.ok(id, `{"type":"store_sql"}`)
	case "close_sql":
		fc.mu.Lock()
		delete(fc.sqls, *r.SQLID)
		fc.mu.Unlock()
		fc.ok(id, `{"type":"close_sql"}`)
	case "open_cursor":
		sql := fc.sql(&r.Batch.Steps[0].Stmt)
		if strings.HasPrefix(sql, "ERR") {
			fc.fail(id, "SQL_PARSE_ERROR", "near ERR: syntax error")
			return true
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(sql, "ROWS "))
		fc.mu.Lock()
		fc.cursors[r.CursorID] = &fcursor{total: n}
		fc.mu.Unlock()
		fc.ok(id, `{"type":"open_cursor"}`)
	case "fetch_cursor":
		fc.fetch(id, r.CursorID, r.MaxCount)
	case "close_cursor":
		fc.mu.Lock()
		delete(fc.cursors, r.CursorID)
		fc.mu.Unlock()
		fc.ok(id, `{"type":"close_cursor"}`)
	default:
		fc.f.t.Errorf("fake: unexpected request %q", r.Type)
	}
	return true
}

// sql resolves a statement's SQL text, stored or not.
func (fc *fconn) sql(st *cstmt) string {
	if st.SQLID != nil {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return fc.sqls[*st.SQLID]
	}
	return *st.SQL
}

func (fc *fconn) execute(id, stream int32, sql string, wrap func(string) string) {
	switch {
	case strings.HasPrefix(sql, "ERR"):
		fc.fail(id, "SQLITE_ERROR", "no such table: "+sql)
	case strings.HasPrefix(sql, "SLEEP "):
		ms, _ := strconv.Atoi(strings.Fields(sql)[1])
		go func() {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			fc.ok(id, wrap(textResult(fmt.Sprintf("%d:%s", stream, sql))))
		}()
	default:
		fc.ok(id, wrap(textResult(fmt.Sprintf("%d:%s", stream, sql))))
	}
}

// fetch answers a fetch_cursor with up to max entries: step_begin, the
// rows, step_end and replication_index.
func (fc *fconn) fetch(id, cursorID int32, max int) {
	fc.mu.Lock()
	fc.fetches++
	c := fc.cursors[cursorID]
	fc.mu.Unlock()
	if c == nil {
		fc.f.t.Errorf("fake: fetch_cursor on cursor %d, not open", cursorID)
		return
	}
	var entries []string
	for len(entries) < max {
		switch {
		case !c.begun:
			c.begun = true
			entries = append(entries, `{"type":"step_begin","step":0,"cols":[{"name":"i","decltype":"INTEGER"},{"name":"t","decltype":"TEXT"}]}`)
		case c.next < c.total:
			entries = append(entries, fmt.Sprintf(`{"type":"row","row":[{"type":"integer","value":"%d"},{"type":"text","value":"row %d"}]}`, c.next, c.next))
			c.next++
		case c.next == c.total:
			c.next++
			entries = append(entries, `{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`)
		case c.next == c.total+1:
			c.next++
			entries = append(entries, `{"type":"replication_index","replication_index":null}`)
		default:
			max = len(entries)
		}
	}
	done := c.next > c.total+1
	fc.ok(id, fmt.Sprintf(`{"type":"fetch_cursor","entries":[%s],"done":%t}`, strings.Join(entries, ","), done))
}

// newFakeClient returns a client of f with the fake's token, adjusted by mod.
func newFakeClient(t testing.TB, f *fake, mod func(o *options)) *client {
	t.Helper()
	o := options{Options: transport.Options{URL: f.url(), AuthToken: f.token, Codec: jsonCodec}}
	if mod != nil {
		mod(&o)
	}
	c, err := newClient(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// mustExecute is execute for statements that must succeed: a failure to
// send fails the test.
func mustExecute(t testing.TB, s transport.Stream, sqls ...string) {
	t.Helper()
	if _, err := execute(context.Background(), s, sqls...); err != nil {
		t.Fatal(err)
	}
}

// execute sends one execute per SQL text in one Send and returns the text
// each answered (or "error: <message>" for a failed one).
func execute(ctx context.Context, s transport.Stream, sqls ...string) ([]string, error) {
	reqs := make([]codec.StreamRequest, len(sqls))
	for i, sql := range sqls {
		reqs[i] = codec.StreamRequest{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql, WantRows: true}}
	}
	res := new(transport.Response)
	if err := s.Send(ctx, reqs, true, res); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res.Pipeline.Results {
		if !r.OK {
			out = append(out, "error: "+r.Error.Message)
			continue
		}
		out = append(out, string(r.Response.Result.Values[0].Bytes))
	}
	return out, nil
}

// asError returns err as a *transport.Error, failing the test otherwise.
func asError(t *testing.T, err error) *transport.Error {
	t.Helper()
	e, ok := err.(*transport.Error)
	if !ok {
		t.Fatalf("error %v (%T) is not a *transport.Error", err, err)
	}
	return e
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// isSafe and isStatement report facts of a *transport.Error.
func isSafe(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.Safe
}

func isStatement(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.Statement
}
