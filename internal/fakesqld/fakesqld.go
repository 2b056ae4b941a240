package fakesqld

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running fake sqld. Its URL is http://127.0.0.1:port.
type Server struct {
	// URL is the server's base URL, without a trailing slash.
	URL string

	t    testing.TB
	srv  *httptest.Server
	done chan struct{} // closed by Close: releases pauses and hangs

	mu      sync.Mutex
	script  []Exchange
	next    int
	reqs    []Request
	changed chan struct{} // closed and replaced whenever a request arrives
	closed  bool

	ws *wsState // nil: the server speaks HTTP (see NewWS)

	proto protocol // the client's keeping of PROTOCOL.md (protocol.go); s.mu
}

// Request is one request the server received.
type Request struct {
	// N is the request's position in arrival order, from 1.
	N int
	// Time is when the request's body had been read.
	Time   time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Exchange is the index in the script of the exchange the request was
	// matched against, or -1 if the script was used up.
	Exchange int
	// Mismatch says why the request did not match its exchange; "" if it
	// did.
	Mismatch string
	// Socket is, over WebSocket (NewWS), the number of the socket the
	// message came on, from 1 in order of connection; 0 over HTTP.
	Socket int
}

// String describes the request and shows its body.
func (r Request) String() string {
	return fmt.Sprintf("#%d %s %s %s", r.N, r.Method, r.Path, showBody(r.Body))
}

// New starts a fake server that expects the script's exchanges in order.
// The server is closed, and exchanges never reached reported as test
// failures, when the test and its subtests end (t.Cleanup).
func New(t testing.TB, script ...Exchange) *Server {
	t.Helper()
	s := newServer(t, script)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

func newServer(t testing.TB, script []Exchange) *Server {
	s := &Server{t: t, done: make(chan struct{}), changed: make(chan struct{})}
	s.script = append(s.script, script...)
	return s
}

// Add appends exchanges to the script.
func (s *Server) Add(script ...Exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, script...)
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count returns the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// CountPath returns the number of requests received so far for a path such
// as "/v3/pipeline".
func (s *Server) CountPath(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if r.Path == path {
			n++
		}
	}
	return n
}

// Remaining returns the number of exchanges not reached yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next + s.asideLen()
}

// Await waits until every exchange of the script has been reached or d has
// passed, and reports whether the script was used up. It is for requests
// the client sends on its own goroutines (a rollback after a context ends).
func (s *Server) Await(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		left, ch := len(s.script)-s.next+s.asideLen(), s.changed
		s.mu.Unlock()
		if left <= 0 {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// verifyGrace is how long Verify waits for exchanges not reached yet:
// a client closes the stream of a failed request in the background.
const verifyGrace = 2 * time.Second

// Verify fails the test (t.Errorf) if some exchanges of the script have not
// been reached within verifyGrace.
func (s *Server) Verify() {
	s.t.Helper()
	s.Await(verifyGrace)
	s.mu.Lock()
	left := s.script[s.next:]
	first := s.next
	tails := s.pendingTails()
	s.mu.Unlock()
	for _, tl := range tails {
		s.t.Errorf("fakesqld: %s", tl)
	}
	if len(left) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "fakesqld: %d expected request(s) never arrived:", len(left))
	for i, ex := range left {
		fmt.Fprintf(&b, "\n\texchange #%d: %s", first+i, ex.Summary())
	}
	fmt.Fprintf(&b, "\nreceived %d request(s):", s.Count())
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "\n\t%s", r.brief())
	}
	s.t.Errorf("%s", b.String())
}

// Close stops the server, ending pauses and hangs, and then reports
// exchanges never reached (see Verify). It is called by the test's cleanup;
// calling it again does nothing.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.Await(verifyGrace) // requests the client sends in the background, before the server stops
	close(s.done)
	s.ws.close()
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.Verify()
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, rerr := io.ReadAll(r.Body)
	s.mu.Lock()
	rec := Request{N: len(s.reqs) + 1, Time: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Exchange: -1}
	var ex Exchange
	switch {
	case s.next < len(s.script):
		ex = s.script[s.next]
		rec.Exchange = s.next
		s.next++
		rec.Mismatch = ex.match(&rec)
		if rec.Mismatch == "" && rerr != nil {
			rec.Mismatch = "reading the body failed: " + rerr.Error()
		}
	default:
		rec.Mismatch = fmt.Sprintf("the script's %d exchange(s) are used up", len(s.script))
	}
	s.reqs = append(s.reqs, rec)
	close(s.changed)
	s.changed = make(chan struct{})
	stream, broken := s.proto.begin(&s.mu, rec.Path, body)
	s.mu.Unlock()
	for _, b := range broken {
		s.t.Errorf("fakesqld: request #%d breaks %s:\n%s %s\n%s", rec.N, b, rec.Method, rec.Path, showBody(rec.Body))
	}
	// The request ends when its answer is written, or when the client cuts
	// it off (the request's context ends with its connection).
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-ended:
		case <-r.Context().Done():
		}
		s.mu.Lock()
		s.proto.end(stream)
		s.mu.Unlock()
	}()
	bw := &batonWriter{ResponseWriter: w, issued: func(baton string) {
		s.mu.Lock()
		s.proto.issued(stream, baton)
		s.mu.Unlock()
	}}
	defer bw.finish(bw.head)
	w = bw

	if rec.Mismatch != "" {
		if rec.Exchange < 0 {
			s.t.Errorf("fakesqld: unexpected request #%d: %s\nreceived: %s %s\n%s",
				rec.N, rec.Mismatch, rec.Method, rec.Path, showBody(rec.Body))
		} else {
			s.t.Errorf("fakesqld: request #%d does not match exchange #%d (%s):\n\t%s\nreceived: %s %s\n%s\nexpected body:\n%s",
				rec.N, rec.Exchange, ex.Summary(), rec.Mismatch, rec.Method, rec.Path, showBody(rec.Body), showTree(ex.body, ex.anyBody))
		}
		http.Error(w, "fakesqld: unexpected request: "+rec.Mismatch, http.StatusInternalServerError)
		return
	}
	if ex.reply.serve == nil {
		s.t.Errorf("fakesqld: exchange #%d (%s) has no reply", rec.Exchange, ex.Summary())
		http.Error(w, "fakesqld: no reply scripted", http.StatusInternalServerError)
		return
	}
	ex.reply.serve(s, w, r)
}

// wait waits d, and reports false if the client or the server went away
// first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// brief describes the request on one line, with its body compacted and cut
// short.
func (r Request) brief() string {
	var buf bytes.Buffer
	b := showBody(r.Body)
	if json.Compact(&buf, r.Body) == nil {
		b = buf.String()
	}
	if len(b) > 300 {
		b = b[:297] + "..."
	}
	return fmt.Sprintf("#%d %s %s %s", r.N, r.Method, r.Path, b)
}

// Exchange is one expected request and the reply to it.
type Exchange struct {
	method, path string
	body         any // expected JSON tree
	anyBody      bool
	headers      [][2]string
	summary      string
	reply        Reply

	// The exchange in Hrana terms, for serving it over WebSocket (ws.go):
	// a pipeline's baton and stream requests.
	pipeline bool
	baton    string
	reqs     []Req
}

// Expect expects a request with the method and path and any body (see
// WithBody and WithJSON to compare it).
func Expect(method, path string) Exchange {
	return Exchange{method: method, path: path, anyBody: true, summary: method + " " + path}
}

// Pipeline expects POST /v3/pipeline with the baton ("" for null) and
// exactly these stream requests.
func Pipeline(baton string, reqs ...Req) Exchange {
	l := make([]any, len(reqs))
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		l[i] = r.m
		parts[i] = r.sum
	}
	return Exchange{method: http.MethodPost, path: "/v3/pipeline", pipeline: true, baton: baton, reqs: reqs,
		body:    map[string]any{"baton": batonTree(baton), "requests": l},
		summary: "POST /v3/pipeline baton=" + showBaton(baton) + " [" + strings.Join(parts, ", ") + "]"}
}

// Cursor expects POST /v3/cursor with the baton ("" for null) and a batch of
// exactly these steps.
func Cursor(baton string, steps ...BatchStep) Exchange {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.stmt.summary()
	}
	return Exchange{method: http.MethodPost, path: "/v3/cursor",
		body:    map[string]any{"baton": batonTree(baton), "batch": batchTree(steps)},
		summary: "POST /v3/cursor baton=" + showBaton(baton) + " [" + strings.Join(parts, ", ") + "]"}
}

// At changes the expected path (e.g. "/v2/pipeline").
func (e Exchange) At(path string) Exchange {
	e.pipeline = false // another endpoint: HTTP only
	e.summary = strings.Replace(e.summary, e.path, path, 1)
	e.path = path
	return e
}

// WithHeader also expects a request header to have the value v.
func (e Exchange) WithHeader(key, v string) Exchange {
	e.pipeline = false // headers are HTTP's
	e.headers = append(append([][2]string(nil), e.headers...), [2]string{key, v})
	return e
}

// WithBody expects the body to be this JSON text (compared structurally).
func (e Exchange) WithBody(jsonText string) Exchange {
	var tree any
	if err := json.Unmarshal([]byte(jsonText), &tree); err != nil {
		panic("fakesqld: WithBody: " + err.Error())
	}
	return e.WithJSON(tree)
}

// WithJSON expects the body to be this JSON tree (maps, slices, strings,
// float64, bools, nil and Any), compared structurally.
func (e Exchange) WithJSON(tree any) Exchange {
	e.pipeline = false
	e.body, e.anyBody = tree, false
	return e
}

// AnyBody accepts any body.
func (e Exchange) AnyBody() Exchange {
	e.pipeline = false
	e.body, e.anyBody = nil, true
	return e
}

// Reply sets the reply.
func (e Exchange) Reply(r Reply) Exchange {
	e.reply = r
	return e
}

// Respond sets the reply to a successful pipeline response.
func (e Exchange) Respond(baton string, results ...Result) Exchange {
	return e.Reply(PipelineReply(baton, results...))
}

// Stream sets the reply to a successful cursor response: the first line
// with the baton, then lines.
func (e Exchange) Stream(baton string, lines ...Line) Exchange {
	return e.Reply(CursorReply(baton, lines...))
}

// Summary describes the expected request in one line.
func (e Exchange) Summary() string {
	if e.reply.desc != "" {
		return e.summary + " -> " + e.reply.desc
	}
	return e.summary
}

// match reports why r does not match e, or "".
func (e Exchange) match(r *Request) string {
	if r.Method != e.method || r.Path != e.path {
		return fmt.Sprintf("received %s %s, expected %s %s", r.Method, r.Path, e.method, e.path)
	}
	for _, h := range e.headers {
		if got := r.Header.Get(h[0]); got != h[1] {
			return fmt.Sprintf("header %s is %q, expected %q", h[0], got, h[1])
		}
	}
	if e.anyBody {
		return ""
	}
	if e.body == nil {
		if len(r.Body) != 0 {
			return "expected no body"
		}
		return ""
	}
	var got any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		return "the body is not JSON: " + err.Error()
	}
	return diff(normalize(e.body), normalize(got), "$")
}

// Reply is what the server does with a matched request.
type Reply struct {
	desc  string
	serve func(s *Server, w http.ResponseWriter, r *http.Request)
	ws    wsReply // what it does over WebSocket (ws.go)
}

// Raw answers with a status, headers and a body.
func Raw(status int, header http.Header, body []byte) Reply {
	return Reply{desc: fmt.Sprintf("HTTP %d", status), serve: func(_ *Server, w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}}
}

// JSON answers with a status and a JSON body (Content-Type
// application/json).
func JSON(status int, body string) Reply {
	r := Raw(status, http.Header{"Content-Type": {"application/json"}}, []byte(body))
	r.desc = fmt.Sprintf("HTTP %d %s", status, snippet(body))
	return r
}

// PlainText answers with a status and a text/plain body.
func PlainText(status int, body string) Reply {
	r := Raw(status, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, []byte(body))
	r.desc = fmt.Sprintf("HTTP %d %q", status, snippet(body))
	return r
}

// NotFound answers 404 with an empty body, as sqld does for unknown paths.
func NotFound() Reply { return Raw(http.StatusNotFound, nil, nil) }

// PipelineReply answers 200 with a pipeline response body.
func PipelineReply(baton string, results ...Result) Reply {
	r := JSON(http.StatusOK, string(PipelineBody(baton, results...)))
	r.desc = fmt.Sprintf("200 baton=%s, %d result(s)", showBaton(baton), len(results))
	r.ws = wsReply{kind: wsAnswer, baton: baton, results: results}
	return r
}

// ProtocolError answers as sqld does for a Hrana protocol error: 400 with
// the message as text/plain (e.g. "Received an invalid baton").
func ProtocolError(message string) Reply { return PlainText(http.StatusBadRequest, message) }

// StreamExpired answers as sqld does for a baton whose stream expired: 400
// {"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}.
func StreamExpired() Reply {
	return JSON(http.StatusBadRequest, `{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}`)
}

// HTTPError answers with sqld's generic error shape, {"error": message},
// e.g. 401 "Unauthorized: `The JWT is invalid`" or 429 "Too many concurrent
// requests".
func HTTPError(status int, message string) Reply {
	return JSON(status, string(appendString([]byte(`{"error":`), message))+"}")
}

// TooManyRequests answers as sqld does when it refuses a request it has not
// read, 429 {"error": message}, with a Retry-After header when retryAfter
// is not "" (the driver sends the request again after a wait up to 10 s).
func TooManyRequests(message, retryAfter string) Reply {
	h := http.Header{"Content-Type": {"application/json"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	r := Raw(http.StatusTooManyRequests, h, append(appendString([]byte(`{"error":`), message), '}'))
	r.desc = fmt.Sprintf("HTTP 429 %s (Retry-After %q)", snippet(message), retryAfter)
	return r
}

// CursorReply answers 200 text/plain with a cursor body: the first line
// {"baton":…,"base_url":null}, then the lines, each written and flushed on
// its own. A body without a final entry (ReplicationIndex or BatchError)
// is what sqld sends when a run fails in a way it cannot report.
func CursorReply(baton string, lines ...Line) Reply {
	head := string(appendBaton([]byte(`{"baton":`), baton)) + `,"base_url":null}`
	return Reply{desc: fmt.Sprintf("cursor baton=%s, %d line(s)", showBaton(baton), len(lines)),
		serve: func(s *Server, w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusOK)
			if _, err := io.WriteString(w, head+"\n"); err != nil {
				return
			}
			_ = rc.Flush()
			for _, l := range lines {
				switch {
				case l.pause > 0:
					if !s.wait(r.Context(), l.pause) {
						return
					}
				case l.cut:
					if conn, _, err := rc.Hijack(); err == nil {
						_ = conn.Close()
					}
					return
				default:
					if _, err := io.WriteString(w, l.text+"\n"); err != nil {
						return
					}
					_ = rc.Flush()
				}
			}
		}}
}

// Drop reads the request and closes the connection without answering.
func Drop() Reply {
	return Reply{desc: "drop the connection", ws: wsReply{kind: wsDrop}, serve: func(s *Server, w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			s.t.Errorf("fakesqld: Drop: %v", err)
			return
		}
		_ = conn.Close()
	}}
}

// Delay answers with r after d (unless the client gives up first).
func Delay(d time.Duration, r Reply) Reply {
	return Reply{desc: fmt.Sprintf("after %v: %s", d, r.desc), ws: wsReply{kind: r.ws.kind, baton: r.ws.baton, results: r.ws.results, delay: d + r.ws.delay}, serve: func(s *Server, w http.ResponseWriter, req *http.Request) {
		if s.wait(req.Context(), d) {
			r.serve(s, w, req)
		}
	}}
}

// Hang answers nothing until the client gives up (closes the connection)
// or the server is closed.
func Hang() Reply {
	return Reply{desc: "hang", ws: wsReply{kind: wsHang}, serve: func(s *Server, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-s.done:
			// Still no answer: the connection just ends.
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		}
	}}
}

// Baton returns a baton shaped like sqld's (64 characters of standard
// base64 without padding: a stream id, a sequence number and an HMAC),
// different for each n.
func Baton(n int) string {
	var b [48]byte
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	id := sha256.Sum256(b[8:16])
	copy(b[0:8], id[:]) // sqld's stream ids are random
	sum := sha256.Sum256(b[:16])
	copy(b[16:], sum[:])
	return base64.RawStdEncoding.EncodeToString(b[:])
}

// RefusedURL returns the base URL of a loopback port that nothing listens
// on: connecting to it is refused.
func RefusedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakesqld: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("fakesqld: %v", err)
	}
	return "http://" + addr
}

func showBaton(b string) string {
	switch {
	case b == "":
		return "null"
	case len(b) > 10:
		return b[:8] + "…"
	}
	return b
}

// showBody renders a body for a message: indented JSON, or quoted text.
func showBody(b []byte) string {
	if len(b) == 0 {
		return "(no body)"
	}
	var buf bytes.Buffer
	if json.Indent(&buf, b, "", "  ") == nil {
		return buf.String()
	}
	return fmt.Sprintf("%q", b)
}

func showTree(tree any, anyBody bool) string {
	if anyBody {
		return "(any)"
	}
	if tree == nil {
		return "(no body)"
	}
	return marshal(renderAny(tree), "  ")
}

// marshal writes v as JSON without escaping <, > and &.
func marshal(v any, indent string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mapSlice returns a new slice of f of each element of l, for the
// functions that rebuild a JSON tree.
func mapSlice(l []any, f func(any) any) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = f(e)
	}
	return out
}

// renderAny replaces Any by a string, for showing a tree.
func renderAny(v any) any {
	switch x := v.(type) {
	case anyValue:
		return "<any>"
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = renderAny(e)
		}
		return m
	case []any:
		return mapSlice(x, renderAny)
	}
	return v
}

// normalize applies the Hrana defaults to a JSON tree: null fields are
// dropped, as are empty args and named_args and want_rows true; blob base64
// loses its padding.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if e == nil {
				continue
			}
			if l, ok := e.([]any); ok && len(l) == 0 && (k == "args" || k == "named_args") {
				continue
			}
			if b, ok := e.(bool); ok && b && k == "want_rows" {
				continue
			}
			m[k] = normalize(e)
		}
		if m["type"] == "blob" {
			if s, ok := m["base64"].(string); ok {
				m["base64"] = strings.TrimRight(s, "=")
			}
		}
		return m
	case []any:
		return mapSlice(x, normalize)
	case int:
		return float64(x)
	}
	return v
}

// diff returns where got differs from want, or "".
func diff(want, got any, path string) string {
	if _, ok := want.(anyValue); ok {
		return ""
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: received %s, expected an object", path, compact(got))
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			we, inW := w[k]
			ge, inG := g[k]
			if _, ok := we.(anyValue); ok {
				continue
			}
			switch {
			case !inG:
				return fmt.Sprintf("%s.%s: missing, expected %s", path, k, compact(we))
			case !inW:
				return fmt.Sprintf("%s.%s: unexpected field with %s", path, k, compact(ge))
			}
			if d := diff(we, ge, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: received %s, expected an array", path, compact(got))
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			if d := diff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		if len(w) != len(g) {
			return fmt.Sprintf("%s: received %d elements, expected %d", path, len(g), len(w))
		}
		return ""
	}
	if want != got {
		return fmt.Sprintf("%s: received %s, expected %s", path, compact(got), compact(want))
	}
	return ""
}

func compact(v any) string {
	b := marshal(renderAny(v), "")
	if len(b) > 120 {
		return b[:117] + "..."
	}
	return b
}
