package fakesqld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Serving a script over Hrana's WebSocket protocol (hrana.md §12). The
// script is the same list of Exchanges; each pipeline exchange is served as
// the WebSocket requests that stand for it (see NewWS).

// NewWS starts a fake server that serves the script over WebSocket, as
// sqld does on GET / upgraded (subprotocols hrana3 and hrana2: JSON only).
// Its URL is ws://127.0.0.1:port. It answers every hello with hello_ok.
//
// A script written for HTTP carries over, exchange by exchange:
//
//   - Pipeline(baton, reqs...) is served as its stream requests, in order,
//     on one stream of one socket, each answered with its Result as
//     response_ok or response_error. A trailing Close is not a request of
//     its own; it tells how the unit of work ends.
//   - Batons name streams: a response's baton binds the stream the
//     exchange ran on, and a later exchange with that baton must run on
//     that same stream. A baton of null is a stream no baton is bound to:
//     without a Close (a transaction begins, which the client holds on a
//     socket of its own) it must be a stream opened in the same burst, the
//     only one open on its socket; with a Close (a unit of work of its
//     own) it may be new or one the client kept open from an earlier unit,
//     since WebSocket streams live on.
//   - A Close on a bound stream (the end of a transaction) expects the
//     stream's close_stream in the same burst, after the requests, and a
//     Pipeline(baton, Close()) alone is that close_stream. On an unbound
//     stream a Close expects nothing: the stream stays open; but when the
//     requests may leave a transaction open (a batch, a sequence, BEGIN,
//     SAVEPOINT, COMMIT, END or RELEASE) the client follows them with
//     batch [ROLLBACK if not is_autocommit], which the fake answers as
//     skipped.
//   - open_stream and the close_stream of an unbound stream belong to no
//     exchange: the fake checks them against its streams and answers them.
//   - Replies: Respond (pipeline results), Drop (the socket is closed once
//     the exchange's requests are in), Hang (nothing is answered) and
//     Delay of those. HTTP statuses and cursor bodies have no WebSocket
//     form; neither do Cursor, Expect, At and WithHeader exchanges: a
//     test that reaches one fails.
//
// Requests records every message a client sends, with Method "WS", Path
// its type ("hello", "open_stream", "execute", ...), the upgrade's Header,
// and Exchange -1 for those outside the script.
func NewWS(t testing.TB, script ...Exchange) *Server {
	t.Helper()
	s := newServer(t, script)
	s.ws = &wsState{bound: map[string]*wsStream{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveWS))
	s.URL = "ws" + strings.TrimPrefix(s.srv.URL, "http")
	t.Cleanup(s.Close)
	return s
}

// wsKind is what a Reply does over WebSocket.
type wsKind int

const (
	wsNone   wsKind = iota // no WebSocket form
	wsAnswer               // answer each request with its Result
	wsDrop                 // close the socket
	wsHang                 // answer nothing
)

type wsReply struct {
	kind    wsKind
	baton   string
	results []Result
	delay   time.Duration
}

// wsState is a WebSocket server's; its fields are guarded by Server.mu.
type wsState struct {
	conns   []*wsConn
	bound   map[string]*wsStream // by baton
	cur     *wsUnit              // the exchange whose requests are arriving
	aside   []int                // closes overtaken by other sockets (see start)
	readers sync.WaitGroup
}

// wsConn is one socket.
type wsConn struct {
	n       int // from 1, in order of connection
	ws      *WSSocket
	streams map[int32]*wsStream
	tail    []wsTail // what must come next on the socket: the end of a burst
}

type wsStream struct {
	c     *wsConn
	id    int32
	fresh bool   // opened and not used yet
	baton string // bound to; "" if none
}

func (st *wsStream) String() string {
	s := fmt.Sprintf("stream %d on socket %d", st.id, st.c.n)
	if st.baton != "" {
		s += " (baton " + showBaton(st.baton) + ")"
	}
	return s
}

// wsTail is a message the end of an exchange's burst brings.
type wsTail struct {
	guard bool // batch [ROLLBACK if not is_autocommit]; else close_stream
	st    *wsStream
	ex    int
	mute  bool // the exchange hangs: no answer
}

func (tl wsTail) String() string {
	if tl.guard {
		return fmt.Sprintf("batch [ROLLBACK if not is_autocommit] on %s after exchange #%d", tl.st, tl.ex)
	}
	return fmt.Sprintf("close_stream of %s after exchange #%d", tl.st, tl.ex)
}

// wsUnit is an exchange being served.
type wsUnit struct {
	ex    int
	e     Exchange
	st    *wsStream
	reqs  []Req // the scripted requests, without the Close
	close bool
	pos   int
	held  [][]byte // answers held back for a delayed reply
}

// wsOut is what the socket does after a message: write frames (after a
// delay), or drop the connection.
type wsOut struct {
	frames [][]byte
	delay  time.Duration
	drop   bool
}

// guardReq is the batch a WebSocket client sends after a unit of work that
// may leave a transaction open on a stream that lives on.
var guardReq = Batch(Step(SQL("ROLLBACK")).If(Not(IsAutocommit())))

// OverWS reports whether the reply has a WebSocket form (see NewWS): a
// pipeline answer, Drop, Hang, or Delay of one of those.
func (r Reply) OverWS() bool { return r.ws.kind != wsNone }

// OverWS reports whether the exchange has a WebSocket form (see NewWS):
// a pipeline whose reply has one.
func (e Exchange) OverWS() bool { return e.pipeline && e.reply.OverWS() }

// pendingTails describes the messages the end of a burst still owes, and
// the closes set aside that never came; s.mu is held.
func (s *Server) pendingTails() []string {
	w := s.ws
	if w == nil {
		return nil
	}
	var out []string
	for _, x := range w.aside {
		out = append(out, fmt.Sprintf("expected exchange #%d (%s), which never arrived", x, s.script[x].Summary()))
	}
	for _, c := range w.conns {
		for _, tl := range c.tail {
			if !tl.mute {
				out = append(out, "expected "+tl.String()+", which never arrived")
			}
		}
	}
	return out
}

// wsDrain is how long Close waits for the clients to close their sockets,
// so that what they sent before is read and checked.
const wsDrain = time.Second

// close ends the sockets: those the clients close within wsDrain after
// reading everything, the others at once.
func (w *wsState) close() {
	if w == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		w.readers.Wait()
		close(done)
	}()
	t := time.NewTimer(wsDrain)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for _, c := range w.conns { // no reader is added once closed is set
		c.ws.Drop()
	}
	<-done
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := AcceptWS(w, r, "hrana3", "hrana2")
	if err != nil {
		s.t.Errorf("fakesqld: %s %s is not a WebSocket upgrade: %v", r.Method, r.URL.Path, err)
		return
	}
	if c.Subprotocol() == "" {
		s.t.Errorf("fakesqld: the client offered none of hrana3, hrana2 (the fake speaks JSON): %q", r.Header.Get("Sec-WebSocket-Protocol"))
		_ = c.Close(websocket.StatusPolicyViolation, "no JSON subprotocol")
		return
	}
	wc := &wsConn{ws: c, streams: map[int32]*wsStream{}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Drop()
		return
	}
	wc.n = len(s.ws.conns) + 1
	s.ws.conns = append(s.ws.conns, wc)
	s.ws.readers.Add(1)
	s.mu.Unlock()
	defer s.ws.readers.Done()
	// Messages are read ahead of the answers, as sqld queues a socket's
	// requests: a request that follows one whose answer is delayed has
	// arrived even if the client closes the socket meanwhile.
	msgs := make(chan []byte, 64)
	go func() {
		defer close(msgs)
		for {
			data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			msgs <- data
		}
	}()
	defer func() {
		go func() {
			for range msgs { // until the read fails
			}
		}()
	}()
	for data := range msgs {
		out := s.wsMessage(wc, data)
		if out.delay > 0 && !s.wait(context.Background(), out.delay) {
			// The server is closing: what arrived meanwhile is recorded
			// (and checked), not answered.
			for {
				select {
				case data, ok := <-msgs:
					if !ok {
						return
					}
					s.wsMessage(wc, data)
				default:
					return
				}
			}
		}
		for _, f := range out.frames {
			_ = c.Write(f)
		}
		if out.drop {
			c.Drop()
			return
		}
	}
}

// wsMessage records and checks one client message, and says what to
// answer.
func (s *Server) wsMessage(c *wsConn, data []byte) wsOut {
	var m struct {
		Type      string          `json:"type"`
		RequestID int32           `json:"request_id"`
		Request   json.RawMessage `json:"request"`
	}
	var tree map[string]any
	err := json.Unmarshal(data, &m)
	if err == nil && m.Type == "request" {
		err = json.Unmarshal(m.Request, &tree)
	}
	typ, _ := tree["type"].(string)
	sid, _ := tree["stream_id"].(float64)
	delete(tree, "stream_id") // checked against the exchange's stream instead

	s.mu.Lock()
	rec := Request{N: len(s.reqs) + 1, Time: time.Now(), Method: "WS", Path: m.Type, Header: c.ws.Header(), Body: data, Exchange: -1, Socket: c.n}
	if m.Type == "request" {
		rec.Path = typ
	}
	var out wsOut
	h := wsHandler{s: s, c: c, rec: &rec, out: &out, id: m.RequestID}
	switch {
	case err != nil:
		rec.Mismatch = "undecodable message: " + err.Error()
	case m.Type == "hello":
		out.frames = append(out.frames, HelloOK)
	case m.Type != "request":
		rec.Mismatch = fmt.Sprintf("a message of type %q", m.Type)
	default:
		h.request(typ, int32(sid), tree)
	}
	s.reqs = append(s.reqs, rec)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()

	if rec.Mismatch != "" {
		s.t.Errorf("fakesqld: WebSocket message #%d on socket %d: %s\nreceived: %s", rec.N, c.n, rec.Mismatch, showBody(data))
		if m.Type == "request" {
			out.frames = append(out.frames, ErrorFrame(m.RequestID, "FAKESQLD", "fakesqld: unexpected request: "+rec.Mismatch))
		}
	}
	return out
}

// wsHandler handles one request message; s.mu is held.
type wsHandler struct {
	s   *Server
	c   *wsConn
	rec *Request
	out *wsOut
	id  int32
}

func (h *wsHandler) answer(response string) {
	h.out.frames = append(h.out.frames, OKFrame(h.id, response))
}

func (h *wsHandler) request(typ string, sid int32, tree map[string]any) {
	c, w := h.c, h.s.ws
	if len(c.tail) > 0 {
		h.tail(typ, sid, tree)
		return
	}
	st := c.streams[sid]
	switch typ {
	case "open_stream":
		if st != nil {
			h.rec.Mismatch = fmt.Sprintf("open_stream of %s, which is open", st)
			return
		}
		c.streams[sid] = &wsStream{c: c, id: sid, fresh: true}
		h.answer(`{"type":"open_stream"}`)
		return
	case "close_stream":
		if st == nil {
			h.rec.Mismatch = fmt.Sprintf("close_stream of stream %d, which is not open on socket %d", sid, c.n)
			return
		}
		if st.baton == "" && (w.cur == nil || w.cur.st != st) {
			delete(c.streams, sid)
			h.answer(`{"type":"close_stream"}`)
			return
		}
	case "execute", "batch", "sequence", "describe", "get_autocommit":
		if st == nil {
			h.rec.Mismatch = fmt.Sprintf("%s on stream %d, which is not open on socket %d", typ, sid, c.n)
			return
		}
	default:
		h.rec.Mismatch = fmt.Sprintf("a %s request, which the fake does not serve over WebSocket", typ)
		return
	}
	if w.cur == nil && !h.start(st, typ == "close_stream") {
		return
	}
	u := w.cur
	h.rec.Exchange = u.ex
	if st != u.st {
		h.rec.Mismatch = fmt.Sprintf("received on %s, expected on %s (exchange #%d: %s)", st, u.st, u.ex, u.e.Summary())
		w.cur = nil
		return
	}
	if typ == "close_stream" {
		w.cur = nil
		if len(u.reqs) > 0 {
			h.rec.Mismatch = fmt.Sprintf("close_stream of %s before request %d of exchange #%d (%s)", st, u.pos, u.ex, u.e.Summary())
			return
		}
		// A Pipeline(baton, Close()) alone.
		h.finish(u)
		delete(c.streams, sid)
		switch r := u.e.reply.ws; r.kind {
		case wsAnswer:
			h.answer(`{"type":"close_stream"}`)
			h.out.delay = r.delay
		case wsDrop:
			h.out.drop = true
		}
		return
	}
	want := wsTree(u.reqs[u.pos])
	if d := diff(normalize(want), normalize(tree), "$.request"); d != "" {
		h.rec.Mismatch = fmt.Sprintf("does not match request %d of exchange #%d (%s):\n\t%s\nexpected:\n%s", u.pos, u.ex, u.e.Summary(), d, showTree(want, false))
		w.cur = nil
		return
	}
	st.fresh = false
	i := u.pos
	u.pos++
	last := u.pos == len(u.reqs)
	r := u.e.reply.ws
	if r.kind == wsAnswer {
		var f []byte
		if i < len(r.results) {
			f = answerFrame(h.id, r.results[i])
		} else {
			h.rec.Mismatch = fmt.Sprintf("exchange #%d has no result for its request %d", u.ex, i)
		}
		if r.delay > 0 {
			u.held = append(u.held, f)
		} else if f != nil {
			h.out.frames = append(h.out.frames, f)
		}
	}
	if !last {
		return
	}
	w.cur = nil
	h.finish(u)
	switch r.kind {
	case wsAnswer:
		for _, f := range u.held {
			if f != nil {
				h.out.frames = append(h.out.frames, f)
			}
		}
		h.out.delay = r.delay
	case wsDrop:
		h.out.delay, h.out.drop = r.delay, true
	}
}

// start takes the next exchange for a request on st (close: its
// close_stream) and checks that st is the stream the exchange runs on.
func (h *wsHandler) start(st *wsStream, close bool) bool {
	s, w, rec := h.s, h.s.ws, h.rec
	// The close of a bound stream alone is a Reset, which the client sends
	// without waiting for its answer: a request on another socket may
	// overtake it. It waits aside for its close_stream.
	for !close && s.next < len(s.script) && isReset(s.script[s.next]) {
		if b := w.bound[s.script[s.next].baton]; b == nil || b.c == st.c {
			break
		}
		w.aside = append(w.aside, s.next)
		s.next++
	}
	ex := -1
	if close {
		for i, x := range w.aside {
			if s.script[x].baton == st.baton {
				ex = x
				w.aside = append(w.aside[:i], w.aside[i+1:]...)
				break
			}
		}
	}
	if ex < 0 {
		if s.next >= len(s.script) {
			rec.Mismatch = fmt.Sprintf("the script's %d exchange(s) are used up", len(s.script))
			return false
		}
		ex = s.next
		s.next++
	}
	e := s.script[ex]
	rec.Exchange = ex
	fail := func(format string, args ...any) bool {
		rec.Mismatch = fmt.Sprintf("exchange #%d (%s): ", rec.Exchange, e.Summary()) + fmt.Sprintf(format, args...)
		return false
	}
	if !e.pipeline {
		return fail("it has no WebSocket form")
	}
	if e.reply.ws.kind == wsNone {
		return fail("its reply has no WebSocket form")
	}
	u := &wsUnit{ex: rec.Exchange, e: e, st: st, reqs: e.reqs}
	if n := len(e.reqs); n > 0 && e.reqs[n-1].m["type"] == "close" {
		u.reqs, u.close = e.reqs[:n-1], true
	}
	switch {
	case close && (len(u.reqs) > 0 || !u.close):
		return fail("received the close_stream of %s", st)
	case !close && len(u.reqs) == 0:
		return fail("received a request on %s, expected only the close of a stream", st)
	case e.baton != "" && st.baton != e.baton:
		if b := s.ws.bound[e.baton]; b != nil {
			return fail("received on %s, expected on %s", st, b)
		}
		return fail("received on %s; no stream is bound to baton %s", st, showBaton(e.baton))
	case e.baton == "" && st.baton != "":
		return fail("received on %s, expected on a stream no baton is bound to", st)
	case e.baton == "" && !u.close && (!st.fresh || len(st.c.streams) > 1):
		return fail("received on %s, expected on a stream opened in the same burst on a socket of its own (a transaction begins)", st)
	}
	s.ws.cur = u
	return true
}

// isReset reports whether e is the close of a bound stream alone.
func isReset(e Exchange) bool {
	return e.pipeline && e.baton != "" && len(e.reqs) == 1 && e.reqs[0].m["type"] == "close"
}

// finish binds batons after an exchange's requests are in and lays out
// the end of its burst.
func (h *wsHandler) finish(u *wsUnit) {
	w, st, r := h.s.ws, u.st, u.e.reply.ws
	mute := r.kind != wsAnswer
	switch {
	case !u.close, r.kind == wsDrop: // a dropped socket owes nothing
	case u.e.baton != "" && len(u.reqs) > 0:
		st.c.tail = append(st.c.tail, wsTail{st: st, ex: u.ex, mute: mute})
	case u.e.baton == "" && mayLeaveTx(u.reqs):
		st.c.tail = append(st.c.tail, wsTail{guard: true, st: st, ex: u.ex, mute: mute})
	}
	if r.kind != wsAnswer {
		return
	}
	if u.e.baton != "" {
		delete(w.bound, u.e.baton)
		st.baton = ""
	}
	if r.baton != "" {
		w.bound[r.baton] = st
		st.baton = r.baton
	}
}

// tail checks a message against the end of a burst that the socket owes.
func (h *wsHandler) tail(typ string, sid int32, tree map[string]any) {
	c := h.c
	tl := c.tail[0]
	c.tail = c.tail[1:]
	h.rec.Exchange = tl.ex
	switch {
	case sid != tl.st.id:
	case tl.guard && typ == "batch" && diff(normalize(guardReq.m), normalize(tree), "$") == "":
		if !tl.mute {
			h.answer(`{"type":"batch","result":{"step_results":[null],"step_errors":[null],"replication_index":null}}`)
		}
		return
	case !tl.guard && typ == "close_stream":
		delete(c.streams, sid)
		if !tl.mute {
			h.answer(`{"type":"close_stream"}`)
		}
		return
	}
	h.rec.Mismatch = fmt.Sprintf("received %s on stream %d, expected %s", typ, sid, tl)
	c.tail = nil
}

// wsTree is the expected request object of r over WebSocket (without its
// stream_id): an execute's replication index is the request's own field.
func wsTree(r Req) map[string]any {
	m := make(map[string]any, len(r.m)+1)
	for k, v := range r.m {
		m[k] = v
	}
	if stmt, ok := m["stmt"].(map[string]any); ok && m["type"] == "execute" {
		if idx, ok := stmt["replication_index"]; ok {
			cp := make(map[string]any, len(stmt))
			for k, v := range stmt {
				if k != "replication_index" {
					cp[k] = v
				}
			}
			m["stmt"], m["replication_index"] = cp, idx
		}
	}
	return m
}

// mayLeaveTx reports whether requests may leave a transaction open: a
// batch, a sequence, or a statement that begins one or may fail to end it.
func mayLeaveTx(reqs []Req) bool {
	for _, r := range reqs {
		switch r.m["type"] {
		case "batch", "sequence":
			return true
		case "execute":
			stmt, _ := r.m["stmt"].(map[string]any)
			sql, _ := stmt["sql"].(string)
			// One statement: a text of several, sqld refuses.
			if strings.Contains(strings.TrimRight(strings.TrimSpace(sql), "; \t\r\n"), ";") {
				continue
			}
			switch firstKeyword(sql) {
			case "BEGIN", "SAVEPOINT", "COMMIT", "END", "RELEASE":
				return true
			}
		}
	}
	return false
}

// firstKeyword is the first word of sql, upper case, past spaces and
// comments.
func firstKeyword(sql string) string {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n")
		switch {
		case strings.HasPrefix(sql, "--"):
			if i := strings.IndexByte(sql, '\n'); i >= 0 {
				sql = sql[i+1:]
				continue
			}
			return ""
		case strings.HasPrefix(sql, "/*"):
			if i := strings.Index(sql, "*/"); i >= 0 {
				sql = sql[i+2:]
				continue
			}
			return ""
		}
		end := strings.IndexFunc(sql, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
		})
		if end < 0 {
			end = len(sql)
		}
		return strings.ToUpper(sql[:end])
	}
}

// answerFrame is the WebSocket answer to request id of a pipeline Result.
func answerFrame(id int32, r Result) []byte {
	var x struct {
		Type     string          `json:"type"`
		Response json.RawMessage `json:"response"`
		Error    json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(r.raw, &x); err != nil {
		return ErrorFrame(id, "FAKESQLD", "fakesqld: a result is not JSON: "+err.Error())
	}
	if x.Type == "ok" {
		return OKFrame(id, string(x.Response))
	}
	return []byte(`{"type":"response_error","request_id":` + strconv.Itoa(int(id)) + `,"error":` + string(x.Error) + `}`)
}

// asideLen is the number of closes set aside; s.mu is held.
func (s *Server) asideLen() int {
	if s.ws == nil {
		return 0
	}
	return len(s.ws.aside)
}
