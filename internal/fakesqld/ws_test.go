package fakesqld

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsClient is a bare Hrana WebSocket client: it sends what it is told.
type wsClient struct {
	t  *testing.T
	c  *websocket.Conn
	id int
}

func dialWS(t *testing.T, s *Server) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, s.URL, &websocket.DialOptions{Subprotocols: []string{"hrana3"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	w := &wsClient{t: t, c: c}
	w.send(`{"type":"hello","jwt":null}`)
	if got := w.read(); got["type"] != "hello_ok" {
		t.Fatalf("hello answered %v", got)
	}
	return w
}

func (w *wsClient) send(msg string) {
	w.t.Helper()
	if err := w.c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		w.t.Fatal(err)
	}
}

// request sends a request and returns its id.
func (w *wsClient) request(req string) int {
	w.id++
	w.send(fmt.Sprintf(`{"type":"request","request_id":%d,"request":%s}`, w.id, req))
	return w.id
}

func (w *wsClient) read() map[string]any {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := w.c.Read(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		w.t.Fatal(err)
	}
	return m
}

// answer reads an answer and returns its type and response (or error)
// type: "response_ok execute", "response_error SQLITE_BUSY".
func (w *wsClient) answer(id int) string {
	w.t.Helper()
	m := w.read()
	if m["request_id"] != float64(id) {
		w.t.Fatalf("answer %v, want one to request %d", m, id)
	}
	if r, ok := m["response"].(map[string]any); ok {
		return fmt.Sprint(m["type"], " ", r["type"])
	}
	e, _ := m["error"].(map[string]any)
	return fmt.Sprint(m["type"], " ", e["code"])
}

const (
	wsBegin  = `{"type":"batch","stream_id":%d,"batch":{"steps":[{"stmt":{"sql":"BEGIN"}},{"condition":{"type":"ok","step":0},"stmt":{"sql":"INSERT INTO t VALUES (1)"}}]}}`
	wsExec   = `{"type":"execute","stream_id":%d,"stmt":{"sql":%q}}`
	wsOpen   = `{"type":"open_stream","stream_id":%d}`
	wsClose  = `{"type":"close_stream","stream_id":%d}`
	wsGuard  = `{"type":"batch","stream_id":%d,"batch":{"steps":[{"condition":{"type":"not","cond":{"type":"is_autocommit"}},"stmt":{"sql":"ROLLBACK","want_rows":false}}]}}`
	wsInsert = "INSERT INTO t VALUES (1)"
)

// A script written for HTTP, served over WebSocket: autocommit statements run on a stream that lives on, the
// transaction on a socket of its own, its batons naming its stream, and
// COMMIT's Close is the stream's close_stream.
func TestWSServesPipelines(t *testing.T) {
	t.Parallel()
	rt := newRecT(t)
	b1, b2 := Baton(1), Baton(2)
	s := NewWS(rt,
		Pipeline("", Execute(SQL("SELECT 1")), Close()).Respond("", ExecuteOK(Query(Cols("1"), Vals(Int(1)))), CloseOK()),
		Pipeline("", Batch(Step(SQL("DELETE FROM t"))), Close()).Respond("", BatchOK(StepOK(Updated(2))), CloseOK()),
		Pipeline("", Batch(Step(SQL("BEGIN")), Step(SQL(wsInsert)).If(OK(0)))).Respond(b1, BatchOK(StepOK(Empty()), StepOK(Inserted(1, 1)))),
		Pipeline(b1, Execute(SQL("SELECT 2"))).Respond(b2, Fail("SQLITE_ERROR", "no")),
		Pipeline(b2, Execute(SQL("COMMIT")), Close()).Respond("", ExecuteOK(Empty()), CloseOK()),
	)
	shared := dialWS(t, s)
	shared.request(fmt.Sprintf(wsOpen, 1))
	id := shared.request(fmt.Sprintf(wsExec, 1, "SELECT 1"))
	shared.read() // open_stream
	if got := shared.answer(id); got != "response_ok execute" {
		t.Errorf("SELECT 1: %s", got)
	}
	// The stream lived on; a batch is followed by the guard.
	id = shared.request(`{"type":"batch","stream_id":1,"batch":{"steps":[{"stmt":{"sql":"DELETE FROM t"}}]}}`)
	guard := shared.request(fmt.Sprintf(wsGuard, 1))
	if got := shared.answer(id); got != "response_ok batch" {
		t.Errorf("DELETE: %s", got)
	}
	if got := shared.answer(guard); got != "response_ok batch" {
		t.Errorf("guard: %s", got)
	}
	own := dialWS(t, s)
	own.request(fmt.Sprintf(wsOpen, 1))
	id = own.request(fmt.Sprintf(wsBegin, 1))
	own.read()
	if got := own.answer(id); got != "response_ok batch" {
		t.Errorf("BEGIN: %s", got)
	}
	if got := own.answer(own.request(fmt.Sprintf(wsExec, 1, "SELECT 2"))); got != "response_error SQLITE_ERROR" {
		t.Errorf("SELECT 2: %s", got)
	}
	id = own.request(fmt.Sprintf(wsExec, 1, "COMMIT"))
	closeID := own.request(fmt.Sprintf(wsClose, 1))
	if got := own.answer(id); got != "response_ok execute" {
		t.Errorf("COMMIT: %s", got)
	}
	if got := own.answer(closeID); got != "response_ok close_stream" {
		t.Errorf("close_stream: %s", got)
	}
	if s.Remaining() != 0 {
		t.Errorf("%d exchanges left", s.Remaining())
	}
	if errs := rt.finish(); len(errs) > 0 {
		t.Errorf("failures: %q", errs)
	}
	if n := len(s.Requests()); n != 11 {
		t.Errorf("%d messages recorded, want 11", n)
	}
}

// The fake fails a test whose client strays from the mapping.
func TestWSMismatches(t *testing.T) {
	t.Parallel()
	b1 := Baton(1)
	auto := Pipeline("", Execute(SQL(wsInsert)), Close()).Respond("", ExecuteOK(Inserted(1, 1)), CloseOK())
	begin := Pipeline("", Batch(Step(SQL("BEGIN")), Step(SQL(wsInsert)).If(OK(0)))).Respond(b1, BatchOK(StepOK(Empty()), StepOK(Inserted(1, 1))))
	tests := []struct {
		name   string
		script []Exchange
		// run sends messages on the sockets it dials.
		run  func(dial func() *wsClient)
		want string
	}{
		{"other SQL", []Exchange{auto}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsExec, 1, "DELETE FROM t"))
		}, `does not match request 0`},
		{"stream not open", []Exchange{auto}, func(dial func() *wsClient) {
			c := dial()
			c.read2(c.request(fmt.Sprintf(wsExec, 3, wsInsert)))
		}, "stream 3, which is not open"},
		{"transaction on a shared socket", []Exchange{auto, begin}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsExec, 1, wsInsert))
			c.openStream(2, fmt.Sprintf(wsBegin, 2))
		}, "on a socket of its own"},
		{"baton on another stream", []Exchange{begin, Pipeline(b1, Execute(SQL("SELECT 1"))).Respond(b1, ExecuteOK(Empty()))}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsBegin, 1))
			c.openStream(2, fmt.Sprintf(wsExec, 2, "SELECT 1"))
		}, "expected on stream 1 on socket 1"},
		{"no close_stream after COMMIT", []Exchange{begin, Pipeline(b1, Execute(SQL("COMMIT")), Close()).Respond("", ExecuteOK(Empty()), CloseOK())}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsBegin, 1))
			c.read2(c.request(fmt.Sprintf(wsExec, 1, "COMMIT")))
		}, "close_stream of stream 1 on socket 1 after exchange #1, which never arrived"},
		{"no guard after a batch", []Exchange{Pipeline("", Sequence("BEGIN; SELECT 1"), Close()).Respond("", SequenceOK(), CloseOK()), auto}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, `{"type":"sequence","stream_id":1,"sql":"BEGIN; SELECT 1"}`)
			c.read2(c.request(fmt.Sprintf(wsExec, 1, wsInsert)))
		}, "expected batch [ROLLBACK if not is_autocommit]"},
		{"HTTP reply", []Exchange{Pipeline("", Execute(SQL(wsInsert)), Close()).Reply(HTTPError(503, "Replicator exited"))}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsExec, 1, wsInsert))
		}, "its reply has no WebSocket form"},
		{"cursor", []Exchange{Cursor("", Step(SQL("SELECT 1"))).Stream("")}, func(dial func() *wsClient) {
			c := dial()
			c.openStream(1, fmt.Sprintf(wsExec, 1, "SELECT 1"))
		}, "it has no WebSocket form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			s := NewWS(rt, tt.script...)
			tt.run(func() *wsClient { return dialWS(t, s) })
			errs := rt.finish()
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Errorf("failures %q, want one saying %q", errs, tt.want)
			}
		})
	}
}

// openStream opens stream id with first as its first request, and reads
// both answers (open_stream's and first's), whatever they are.
func (w *wsClient) openStream(id int, first string) {
	w.t.Helper()
	w.request(fmt.Sprintf(wsOpen, id))
	w.request(first)
	w.read()
	w.read()
}

// read2 reads the answer to id, whatever it is.
func (w *wsClient) read2(id int) { w.answer(id) }

// A Reset's close_stream, which a client sends without waiting, may come
// after a request on another socket: the fake sets the close aside and
// still expects it.
func TestWSResetOvertaken(t *testing.T) {
	t.Parallel()
	b1 := Baton(1)
	for _, closes := range []bool{true, false} {
		t.Run(fmt.Sprint("closes=", closes), func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			s := NewWS(rt,
				Pipeline("", Batch(Step(SQL("BEGIN")), Step(SQL(wsInsert)).If(OK(0)))).Respond(b1, BatchOK(StepOK(Empty()), StepOK(Inserted(1, 1)))),
				Pipeline(b1, Close()).Respond("", CloseOK()),
				Pipeline("", Execute(SQL("SELECT 1")), Close()).Respond("", ExecuteOK(Empty()), CloseOK()))
			own := dialWS(t, s)
			own.openStream(1, fmt.Sprintf(wsBegin, 1))
			shared := dialWS(t, s)
			shared.openStream(1, fmt.Sprintf(wsExec, 1, "SELECT 1"))
			if closes {
				own.read2(own.request(fmt.Sprintf(wsClose, 1)))
			}
			errs := rt.finish()
			switch {
			case closes && len(errs) > 0:
				t.Errorf("failures %q", errs)
			case !closes && (len(errs) != 1 || !strings.Contains(errs[0], "exchange #1")):
				t.Errorf("failures %q, want the close never received", errs)
			}
		})
	}
}

// Drop closes the socket once the exchange's requests are in; Hang
// answers nothing.
func TestWSFaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		reply Reply
	}{{"drop", Drop()}, {"hang", Hang()}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt := newRecT(t)
			s := NewWS(rt, Pipeline("", Execute(SQL("SELECT 1")), Close()).Reply(tt.reply))
			c := dialWS(t, s)
			c.request(fmt.Sprintf(wsOpen, 1))
			c.request(fmt.Sprintf(wsExec, 1, "SELECT 1"))
			c.read() // open_stream
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, data, err := c.c.Read(ctx)
			switch {
			case err == nil:
				t.Errorf("answered %s", data)
			case tt.name == "drop" && ctx.Err() != nil:
				t.Error("the socket was not closed")
			case tt.name == "hang" && ctx.Err() == nil:
				t.Errorf("the socket failed: %v", err)
			}
			if errs := rt.finish(); len(errs) > 0 {
				t.Errorf("failures %q", errs)
			}
		})
	}
}

// The same exchanges are told apart by whether they can be served over
// WebSocket.
func TestOverWS(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    Exchange
		want bool
	}{
		{Pipeline("", Close()).Respond("", CloseOK()), true},
		{Pipeline("", Close()).Reply(Delay(time.Second, Drop())), true},
		{Pipeline("", Close()).Reply(Hang()), true},
		{Pipeline("", Close()).Reply(StreamExpired()), false},
		{Pipeline("", Close()).Respond("", CloseOK()).WithHeader("X", "y"), false},
		{Pipeline("", Close()).Respond("", CloseOK()).At("/v2/pipeline"), false},
		{Cursor("", Step(SQL("SELECT 1"))).Stream(""), false},
		{Expect("GET", "/health").Reply(NotFound()), false},
	} {
		if got := tt.e.OverWS(); got != tt.want {
			t.Errorf("%s: OverWS %v, want %v", tt.e.Summary(), got, tt.want)
		}
	}
}
