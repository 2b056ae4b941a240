package fakesqld

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// protocol holds the client to the rules of PROTOCOL.md (Turso's
// serverless/PROTOCOL.md) that a server sees, over HTTP, whatever the
// script: no empty pipeline (§5.1), and no request on a stream while
// another is in flight on it (§4.4), a cursor's until its body is written.
// A stream is known by the batons issued for it: a request's baton names
// the stream of the answer that issued it, and the baton its answer issues
// names the same stream.
type protocol struct {
	streams map[string]int        // baton -> stream
	busy    map[int]chan struct{} // streams with a request in flight -> closed when it ends
	nextID  int
}

// abortGrace is how long a request on a busy stream waits for the request
// in flight to end before it counts as breaking §4.4: a client that cut
// the earlier answer off (closed its connection) has ended it, and the
// server notices a moment later.
const abortGrace = 200 * time.Millisecond

// begin records a request (body, on path) going in; it returns the stream
// it runs on, and the rules it breaks. mu is held, and released while
// begin waits for a busy stream.
func (p *protocol) begin(mu *sync.Mutex, path string, body []byte) (stream int, broken []string) {
	if !strings.HasSuffix(path, "/pipeline") && !strings.HasSuffix(path, "/cursor") || strings.HasPrefix(path, "/v3-protobuf") {
		return 0, nil
	}
	var req struct {
		Baton    *string           `json:"baton"`
		Requests []json.RawMessage `json:"requests"`
	}
	if json.Unmarshal(body, &req) != nil {
		return 0, nil
	}
	if strings.HasSuffix(path, "/pipeline") && req.Requests != nil && len(req.Requests) == 0 {
		broken = append(broken, "PROTOCOL.md §5.1: a pipeline with no requests")
	}
	if p.streams == nil {
		p.streams, p.busy = map[string]int{}, map[int]chan struct{}{}
	}
	if req.Baton != nil && *req.Baton != "" {
		stream = p.streams[*req.Baton]
	}
	if stream == 0 {
		p.nextID++
		stream = p.nextID
	}
	if done, ok := p.busy[stream]; ok {
		mu.Unlock()
		select {
		case <-done:
		case <-time.After(abortGrace):
		}
		mu.Lock()
		if _, ok := p.busy[stream]; ok {
			broken = append(broken, "PROTOCOL.md §4.4: a request on a stream that has one in flight")
		}
	}
	p.busy[stream] = make(chan struct{})
	return stream, broken
}

// issued records the baton an answer issued for stream.
func (p *protocol) issued(stream int, baton string) {
	if stream != 0 && baton != "" {
		p.streams[baton] = stream
	}
}

// end records the end of a request on stream: its answer written, or cut
// off by the client.
func (p *protocol) end(stream int) {
	if done, ok := p.busy[stream]; ok && stream != 0 {
		close(done)
		delete(p.busy, stream)
	}
}

// batonWriter passes an answer through, reading the baton its first JSON
// line issues (a pipeline's whole body, a cursor's first line) as soon as
// that line is out.
type batonWriter struct {
	http.ResponseWriter
	head   []byte
	done   bool
	issued func(baton string)
}

func (w *batonWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.head = append(w.head, b...)
		if i := bytes.IndexByte(w.head, '\n'); i >= 0 {
			w.finish(w.head[:i])
		}
	}
	return w.ResponseWriter.Write(b)
}

// finish reads the baton of the answer's first line (or whole body).
func (w *batonWriter) finish(line []byte) {
	if w.done {
		return
	}
	w.done = true
	var h struct {
		Baton *string `json:"baton"`
	}
	if json.Unmarshal(line, &h) == nil && h.Baton != nil {
		w.issued(*h.Baton)
	}
}

func (w *batonWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *batonWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
