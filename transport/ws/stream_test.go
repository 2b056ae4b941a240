package ws

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// TestPipelining: a Send writes open_stream and all its executes without
// waiting for any answer (the fake answers nothing until it holds them
// all), and the results come back in request order although the answers
// arrive in reverse.
func TestPipelining(t *testing.T) {
	f := newFake(t)
	var held []cmsg
	var mu sync.Mutex
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Type == "hello" {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		held = append(held, *m)
		if len(held) < 4 {
			return true
		}
		for i := len(held) - 1; i >= 0; i-- {
			fc.answer(&held[i])
		}
		held = nil
		return true
	})
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	got, err := execute(context.Background(), s, "a", "b", "c")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1:a", "1:b", "1:c"}; !slices.Equal(got, want) {
		t.Fatalf("results %q, want %q", got, want)
	}
	if want := []string{"hello", "open_stream", "execute", "execute", "execute"}; !slices.Equal(f.conn(0).received(), want) {
		t.Fatalf("the server received %q, want %q", f.conn(0).received(), want)
	}
	if !s.Open() {
		t.Fatal("the stream is open after its first Send")
	}
}

// TestStreamKeepsItsServerStream: later Sends go to the same server
// stream, with no open_stream, and a statement error is a failed result,
// not an error of the Send.
func TestStreamKeepsItsServerStream(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	for i := range 3 {
		got, err := execute(context.Background(), s, fmt.Sprint("q", i), "ERR x")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{fmt.Sprint("1:q", i), "error: no such table: ERR x"}; !slices.Equal(got, want) {
			t.Fatalf("results %q, want %q", got, want)
		}
	}
	want := []string{"hello", "open_stream", "execute", "execute", "execute", "execute", "execute", "execute"}
	if got := f.conn(0).received(); !slices.Equal(got, want) {
		t.Fatalf("the server received %q, want %q", got, want)
	}
}

// TestConcurrentStreams: many streams share one socket, their answers
// interleaved and out of order, each Send getting its own.
func TestConcurrentStreams(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })
	const streams, sends = 16, 40
	var wg sync.WaitGroup
	ids := make(chan string, streams)
	for g := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := c.NewStream()
			var id string
			for i := range sends {
				sql := fmt.Sprintf("SLEEP %d g%d-%d", rand.N(3), g, i)
				got, err := execute(context.Background(), s, sql, "x")
				if err != nil {
					t.Error(err)
					return
				}
				sid, rest, _ := strings.Cut(got[0], ":")
				if id == "" {
					id = sid
				}
				if sid != id || rest != sql || got[1] != id+":x" {
					t.Errorf("stream %s got %q for %q", id, got, sql)
					return
				}
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("stream id %s used by two streams", id)
		}
		seen[id] = true
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("%d dials, want 1", n)
	}
}

// TestSocketsSpread: with two sockets, streams go to both: a stream whose
// slot has no socket yet goes to the other's, and the slot dials meanwhile.
func TestSocketsSpread(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 2 })
	mustExecute(t, c.NewStream(), "first")
	opened := func(i int) int { return strings.Count(strings.Join(f.conn(i).received(), " "), "open_stream") }
	eventually(t, "a stream on the second socket", func() bool {
		_, err := execute(context.Background(), c.NewStream(), "x")
		return err == nil && f.live.Load() == 2 && opened(1) > 0
	})
	before := [2]int{opened(0), opened(1)}
	for i := range 8 {
		mustExecute(t, c.NewStream(), fmt.Sprint(i))
	}
	if n := f.dials.Load(); n != 2 {
		t.Fatalf("%d dials, want 2", n)
	}
	for i := range 2 {
		if n := opened(i) - before[i]; n != 4 {
			t.Errorf("socket %d got %d of 8 new streams", i, n)
		}
	}
}

// TestHelloError: a refused hello fails the requests sent with it with the
// server's authentication error: ErrAuth, Safe (the server ran none of
// them), not Resend, and without the token, although the server echoed
// it.
func TestHelloError(t *testing.T) {
	f := newFake(t)
	f.token = "the-right-token"
	c := newFakeClient(t, f, func(o *options) { o.AuthToken = "secret-token-123" })
	s := c.NewStream()
	_, err := execute(context.Background(), s, "SELECT 1")
	e := asError(t, err)
	if !isAuthError(err) || !e.Safe || e.Resend || e.Code != "AUTH_JWT_INVALID" {
		t.Fatalf("error %v: ErrAuth %t, Safe %t, Resend %t", err, isAuthError(err), e.Safe, e.Resend)
	}
	if strings.Contains(err.Error(), "secret-token-123") {
		t.Fatalf("the token is in the error: %v", err)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("the server's message is not in the error: %v", err)
	}
	// The next request dials again (the token may have been fixed), and
	// fails with that dial's refusal.
	dials := f.dials.Load()
	_, err = execute(context.Background(), s, "SELECT 1")
	if !isAuthError(err) || strings.Contains(err.Error(), "secret-token-123") {
		t.Fatalf("second error %v", err)
	}
	if f.dials.Load() != dials+1 {
		t.Fatalf("%d dials for the next request, want 1", f.dials.Load()-dials)
	}
}

// TestCancel: a Send whose context ends returns at once, without killing
// the socket: other streams go on, and the stream is Busy (refusing
// requests, Safe and Resend) until its answer arrives, after which it
// works on the same server stream.
func TestCancel(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })
	s := c.NewStream().(*stream)
	other := c.NewStream()
	mustExecute(t, s, "first")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := execute(ctx, s, "SLEEP 300 slow")
	if !errors.Is(err, context.DeadlineExceeded) || isSafe(err) {
		t.Fatalf("error %v, want a deadline that is not Safe", err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Fatalf("the cancelled Send took %v", d)
	}
	if !s.Busy() {
		t.Fatal("the stream is not Busy with its answer outstanding")
	}
	_, err = execute(context.Background(), s, "too soon")
	if e := asError(t, err); !e.Safe || !asError(t, err).Resend {
		t.Fatalf("a Busy stream's Send: %v", err)
	}
	if got, err := execute(context.Background(), other, "meanwhile"); err != nil || got[0] != "2:meanwhile" {
		t.Fatalf("another stream on the socket: %q, %v", got, err)
	}
	eventually(t, "the answer", func() bool { return !s.Busy() })
	if got, err := execute(context.Background(), s, "after"); err != nil || got[0] != "1:after" {
		t.Fatalf("after the answer: %q, %v", got, err)
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("%d dials: the cancellation killed the socket", n)
	}
}

// TestSocketDeath: what a stream's requests see when its socket dies, at
// each point.
func TestSocketDeath(t *testing.T) {
	tests := []struct {
		name string
		// run kills the socket somewhere in the life of s (opened on it
		// already) and returns the error of the request it hit.
		run           func(t *testing.T, f *fake, s *stream) error
		safe, badConn bool
	}{
		{
			// Nothing of the request was written: the stream died idle.
			name: "idle",
			run: func(t *testing.T, f *fake, s *stream) error {
				f.closeAll()
				eventually(t, "the stream to be lost", s.Lost)
				if s.Open() {
					t.Error("a lost stream is Open")
				}
				_, err := execute(context.Background(), s, "next")
				return err
			},
			safe: true, badConn: true,
		},
		{
			// The request was written; the server went away before
			// answering: it may have run.
			name: "in flight",
			run: func(t *testing.T, f *fake, s *stream) error {
				f.setHook(func(fc *fconn, m *cmsg) bool {
					if m.Request.Type == "execute" {
						fc.ws.Drop()
						return true
					}
					return false
				})
				_, err := execute(context.Background(), s, "INSERT")
				f.setHook(nil)
				return err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c := newFakeClient(t, f, func(o *options) { o.writeTimeout = 100 * time.Millisecond })
			s := c.NewStream().(*stream)
			mustExecute(t, s, "open")
			err := tt.run(t, f, s)
			if err != nil {
				e := asError(t, err)
				if e.Safe != tt.safe || e.Resend != tt.badConn {
					t.Fatalf("error %v: Safe %t, Resend %t; want %t, %t", err, e.Safe, e.Resend, tt.safe, tt.badConn)
				}
			}
			if s.Open() || s.Lost() {
				t.Fatalf("after the failure the stream is Open %t, Lost %t", s.Open(), s.Lost())
			}
			// The next request dials again and opens a new stream.
			eventually(t, "a new socket", func() bool {
				_, err := execute(context.Background(), s, "again")
				return err == nil
			})
			if !s.Open() || f.dials.Load() < 2 {
				t.Fatalf("after recovery: Open %t, %d dials", s.Open(), f.dials.Load())
			}
		})
	}
}

// TestWriteStall: a write that cannot finish within the write timeout (the
// server stopped reading and the buffers are full) kills the socket; the
// request fails not Safe, since part of it left, and a request that was
// waiting on the socket fails too.
func TestWriteStall(t *testing.T) {
	f := newFake(t)
	stop := make(chan struct{})
	defer close(stop)
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Request.Type == "execute" && *m.Request.Stmt.SQL == "block" {
			<-stop // stop reading: the client's writes fill the buffers
			return true
		}
		return false
	})
	c := newFakeClient(t, f, func(o *options) {
		o.Sockets = 1
		o.writeTimeout = 100 * time.Millisecond
	})
	blocked, big := c.NewStream().(*stream), c.NewStream()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := execute(ctx, blocked, "block"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the blocked request: %v", err)
	}
	_, err := execute(context.Background(), big, "SELECT '"+strings.Repeat("x", 32<<20)+"'")
	if e := asError(t, err); e.Safe || e.Resend || !strings.Contains(err.Error(), "write failed") {
		t.Fatalf("the stalled write: %v (Safe %t, Resend %t)", err, e.Safe, e.Resend)
	}
	eventually(t, "the blocked stream's answer to fail", func() bool { return !blocked.Busy() })
	if _, err := execute(context.Background(), blocked, "x"); !asError(t, err).Resend || !isSafe(err) {
		t.Fatalf("the next request of the stream that waited: %v", err)
	}
}

// TestUnopenedStreamSurvivesSocketDeath: a stream that never opened loses
// nothing when the socket dies: its first request just dials.
func TestUnopenedStreamSurvivesSocketDeath(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })
	mustExecute(t, c.NewStream(), "one")
	fresh := c.NewStream()
	f.closeAll()
	eventually(t, "the socket to die", func() bool { return f.dials.Load() == 1 && len(f.conns) == 0 })
	eventually(t, "a request on a new socket", func() bool {
		_, err := execute(context.Background(), fresh, "two")
		return err == nil
	})
}

// TestReconnectBackoff: concurrent requests share one dial per slot; after
// a failed dial the next request dials again at once, within its own
// context, and fails with that dial's error, never an older one (the first
// request after a server comes back connects); only dials no request
// waits for (a kick) keep the backoff.
func TestReconnectBackoff(t *testing.T) {
	f := newFake(t)
	f.reject.Store(2)
	// The first refusal waits until all ten requests have surely reached
	// the dial it answers, however slow the machine.
	f.rejectAfter.Store(int64(300 * time.Millisecond))
	c := newFakeClient(t, f, func(o *options) {
		o.Sockets = 1
		o.MinBackoff = 5 * time.Second
		o.MaxBackoff = 10 * time.Second
		o.Headers = map[string][]string{"X-Secret": {"header-secret-value"}}
	})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := execute(context.Background(), c.NewStream(), "x")
			e := asError(t, err)
			if !e.Safe || e.HTTPStatus != 503 || asError(t, err).Resend {
				t.Errorf("error %v: Safe %t, status %d", err, e.Safe, e.HTTPStatus)
			}
			if strings.Contains(err.Error(), "header-secret-value") {
				t.Errorf("a header's value is in the error: %v", err)
			}
		}()
	}
	wg.Wait()
	f.rejectAfter.Store(0)
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("%d dials for concurrent requests, want 1", n)
	}
	if !c.backingOff() {
		t.Fatal("no backoff after a failed dial")
	}
	// Within the backoff (5 s or more) a request dials: refused again.
	_, err := execute(context.Background(), c.NewStream(), "x")
	if e := asError(t, err); e.HTTPStatus != 503 || f.dials.Load() != 2 {
		t.Fatalf("within the backoff: %v, %d dials, want the second dial's refusal", err, f.dials.Load())
	}
	// A kick does not dial while the client backs off.
	c.slots[0].kick()
	if n := f.dials.Load(); n != 2 {
		t.Fatalf("a kick dialed within the backoff: %d dials", n)
	}
	// The server is back: the next request connects at once.
	start := time.Now()
	if _, err := execute(context.Background(), c.NewStream(), "x"); err != nil {
		t.Fatalf("the first request after the server came back: %v", err)
	}
	if n := f.dials.Load(); n != 3 {
		t.Fatalf("%d dials, want 3", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the first request after the server came back took %v", d)
	}
}

// TestDialRefused: a server that is not there fails requests Safe and
// Resend.
func TestDialRefused(t *testing.T) {
	f := newFake(t)
	f.srv.Close()
	c := newFakeClient(t, f, nil)
	_, err := execute(context.Background(), c.NewStream(), "x")
	if e := asError(t, err); !e.Safe || !asError(t, err).Resend {
		t.Fatalf("error %v", err)
	}
	// In the user's terms, without the websocket library's steps.
	if msg := err.Error(); !strings.HasPrefix(msg, "cannot connect to the server: dial tcp ") || strings.Contains(msg, "WebSocket") {
		t.Fatalf("error %q", msg)
	}
}

// TestPing: an idle socket is pinged and lives on; one whose server stops
// answering is found dead within the ping interval and timeout, and its
// streams are lost.
func TestPing(t *testing.T) {
	f := newFake(t)
	freeze := make(chan struct{})
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Type == "request" && m.Request.Type == "execute" && *m.Request.Stmt.SQL == "freeze" {
			<-freeze // stop reading, so pongs stop too
			return true
		}
		return false
	})
	c := newFakeClient(t, f, func(o *options) {
		o.pingInterval = 40 * time.Millisecond
		o.pingTimeout = 60 * time.Millisecond
	})
	s := c.NewStream().(*stream)
	mustExecute(t, s, "open")
	time.Sleep(200 * time.Millisecond)
	if !s.Open() {
		t.Fatal("an idle socket that answers pings died")
	}
	start := time.Now()
	_, err := execute(context.Background(), s, "freeze")
	close(freeze)
	if err == nil || isSafe(err) {
		t.Fatalf("a request on a frozen server: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the dead socket was found after %v", d)
	}
}

// TestReset: Reset closes the server stream; the next request opens a new
// one.
func TestReset(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	if got, _ := execute(context.Background(), s, "a"); got[0] != "1:a" {
		t.Fatalf("got %q", got)
	}
	s.Reset()
	if s.Open() {
		t.Fatal("Open after Reset")
	}
	if got, _ := execute(context.Background(), s, "b"); got[0] != "2:b" {
		t.Fatalf("after Reset got %q", got)
	}
	want := []string{"hello", "open_stream", "execute", "close_stream", "open_stream", "execute"}
	if got := f.conn(0).received(); !slices.Equal(got, want) {
		t.Fatalf("the server received %q, want %q", got, want)
	}
}

// TestPingRequest: a Send of no requests (session's Ping) makes a round
// trip on an open stream too.
func TestPingRequest(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	res := new(transport.Response)
	for range 2 {
		if err := s.Send(context.Background(), nil, true, res); err != nil {
			t.Fatal(err)
		}
		if len(res.Pipeline.Results) != 0 {
			t.Fatalf("%d results for no request", len(res.Pipeline.Results))
		}
	}
	if got, want := f.conn(0).received(), []string{"hello", "open_stream", "get_autocommit"}; !slices.Equal(got, want) {
		t.Fatalf("the server received %q, want %q", got, want)
	}
}

// TestStoredSQL: stored SQL ids are the stream's own, though the server
// keeps them per socket: two streams storing id 1 do not clash.
func TestStoredSQL(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })
	run := func(s transport.Stream, sql string) string {
		reqs := []codec.StreamRequest{
			{Type: codec.RequestStoreSQL, SQLID: 1, SQL: sql},
			{Type: codec.RequestExecute, Stmt: codec.Stmt{SQLID: 1, HasSQLID: true, WantRows: true}},
		}
		res := new(transport.Response)
		// With end, on the shared socket (without, each would get one of
		// its own).
		if err := s.Send(context.Background(), reqs, true, res); err != nil {
			t.Fatal(err)
		}
		return string(res.Pipeline.Results[1].Response.Result.Values[0].Bytes)
	}
	a, b := c.NewStream(), c.NewStream()
	if got := run(a, "from a"); got != "1:from a" {
		t.Fatalf("a got %q", got)
	}
	if got := run(b, "from b"); got != "2:from b" {
		t.Fatalf("b got %q", got)
	}
	// An id the stream never stored is refused before it is sent.
	_, err := execute(context.Background(), a, "x")
	if err != nil {
		t.Fatal(err)
	}
	res := new(transport.Response)
	err = c.NewStream().Send(context.Background(), []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQLID: 1, HasSQLID: true}}}, false, res)
	if !isSafe(err) {
		t.Fatalf("an unknown SQL id: %v", err)
	}
	a.Reset()
	b.Reset()
	fc := f.conn(0)
	eventually(t, "the closes", func() bool {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return len(fc.sqls) == 0 && len(fc.streams) == 0
	})
}

// TestRefusedBeforeSending: requests the server would take for protocol
// violations, closing the socket, fail Safe with nothing sent.
func TestRefusedBeforeSending(t *testing.T) {
	later := &codec.BatchCond{Type: codec.CondOK, Step: 1}
	tests := []struct {
		name   string
		protos []string
		req    codec.StreamRequest
	}{
		{"condition on a later step", nil, codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Condition: later, Stmt: codec.Stmt{SQL: "a"}}, {Stmt: codec.Stmt{SQL: "b"}}}}}},
		{"get_autocommit on hrana2", []string{"hrana2"}, codec.StreamRequest{Type: codec.RequestGetAutocommit}},
		{"is_autocommit on hrana2", []string{"hrana2"}, codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Condition: &codec.BatchCond{Type: codec.CondIsAutocommit}, Stmt: codec.Stmt{SQL: "a"}}}}}},
		{"close not last", nil, codec.StreamRequest{Type: codec.RequestClose}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if tt.protos != nil {
				f.protos = tt.protos
			}
			c := newFakeClient(t, f, nil)
			s := c.NewStream()
			mustExecute(t, s, "open")
			reqs := []codec.StreamRequest{tt.req}
			if tt.req.Type == codec.RequestClose {
				reqs = append(reqs, codec.StreamRequest{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "x"}})
			}
			res := new(transport.Response)
			err := s.Send(context.Background(), reqs, false, res)
			if e := asError(t, err); !e.Safe {
				t.Fatalf("error %v is not Safe", err)
			}
			if got := f.conn(0).received(); len(got) != 3 {
				t.Fatalf("the server received %q", got)
			}
			mustExecute(t, s, "still")
		})
	}
}

// TestHrana2: against a server that offers only hrana2 the version is 2.
func TestHrana2(t *testing.T) {
	f := newFake(t)
	f.protos = []string{"hrana2"}
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	if v, err := s.Version(context.Background()); err != nil || v != 2 {
		t.Fatalf("Version %d, %v", v, err)
	}
	_, err := s.OpenCursor(context.Background(), &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "ROWS 1"}}}}, true, nil)
	if !isSafe(err) {
		t.Fatalf("a cursor on hrana2: %v", err)
	}
}

// TestProtobufNeedsServerSupport: with the Protobuf codec and no fallback a
// server without hrana3-protobuf is an error; with a JSON fallback the
// client speaks JSON to it.
func TestProtobufNeedsServerSupport(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Codec = protobufCodec })
	if _, err := execute(context.Background(), c.NewStream(), "x"); !isSafe(err) || !strings.Contains(err.Error(), "subprotocol") {
		t.Fatalf("no hrana3-protobuf: %v", err)
	}
	c = newFakeClient(t, f, func(o *options) {
		o.Codec = protobufCodec
		o.JSON = jsonCodec
		o.Fallback = true
	})
	s := c.NewStream()
	if got, err := execute(context.Background(), s, "x"); err != nil || got[0] != "1:x" {
		t.Fatalf("with a fallback: %q, %v", got, err)
	}
	if v, _ := s.Version(context.Background()); v != 3 {
		t.Fatalf("Version %d", v)
	}
	if _, err := newClient(options{Options: transport.Options{URL: f.url(), Codec: protobufCodec, JSON: protobufCodec, Fallback: true}}); err == nil {
		t.Fatal("a Protobuf fallback was taken")
	}
}

// TestCloseIdle: CloseIdle closes sockets that carry no stream.
func TestCloseIdle(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })
	s := c.NewStream()
	mustExecute(t, s, "x")
	c.CloseIdle()
	time.Sleep(20 * time.Millisecond)
	if !s.Open() || f.live.Load() != 1 {
		t.Fatal("CloseIdle closed a socket that carries a stream")
	}
	s.Reset()
	eventually(t, "the idle socket to close", func() bool {
		c.CloseIdle() // once the close_stream is answered, the socket is idle
		return f.live.Load() == 0
	})
	if _, err := execute(context.Background(), c.NewStream(), "y"); err != nil || f.dials.Load() != 2 {
		t.Fatalf("after CloseIdle: %v, %d dials", err, f.dials.Load())
	}
}

// TestTimeout: Options.Timeout ends a request's wait as a deadline would.
func TestTimeout(t *testing.T) {
	f := newFake(t)
	// 150 ms: a quick answer gets through on a loaded machine (30 ms did
	// not, at a load average of 8 on 2 cores).
	c := newFakeClient(t, f, func(o *options) { o.Timeout = 150 * time.Millisecond })
	s := c.NewStream().(*stream)
	mustExecute(t, s, "SLEEP 1 quick")
	_, err := execute(context.Background(), s, "SLEEP 600 slow")
	if !errors.Is(err, context.DeadlineExceeded) || isSafe(err) || !s.Busy() {
		t.Fatalf("error %v, Busy %t", err, s.Busy())
	}
	eventually(t, "the answer", func() bool { return !s.Busy() })
	mustExecute(t, s, "again")
}

// TestTLSAndHeaders: a wss:// server is verified against Options.TLSConfig;
// the handshake carries the headers and the namespace.
func TestTLSAndHeaders(t *testing.T) {
	f := startFake(t, true)
	if _, err := execute(context.Background(), newFakeClient(t, f, nil).NewStream(), "x"); err == nil || !isSafe(err) {
		t.Fatalf("an unknown CA: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(f.srv.Certificate())
	c := newFakeClient(t, f, func(o *options) {
		o.TLSConfig = &tls.Config{RootCAs: roots}
		o.Headers = map[string][]string{"X-Turso-Encryption-Key": {"k"}}
		o.Namespace = "tenant"
	})
	if got, err := execute(context.Background(), c.NewStream(), "x"); err != nil || got[0] != "1:x" {
		t.Fatalf("over TLS: %q, %v", got, err)
	}
	f.mu.Lock()
	h := f.header
	f.mu.Unlock()
	if h.Get("X-Turso-Encryption-Key") != "k" || h.Get("X-Namespace") != "tenant" || h.Get("X-Namespace-Bin") != "dGVuYW50" {
		t.Fatalf("handshake headers %v", h)
	}
	if !strings.Contains(h.Get("Sec-Websocket-Protocol"), "hrana3") {
		t.Fatalf("subprotocols offered: %q", h.Get("Sec-Websocket-Protocol"))
	}
}

// TestTokenSource: with a TokenSource, each socket says hello with its
// token, and a token that changed goes first in the next burst in a new
// hello on the same socket: no dial, and the stream (with its state) lives
// on. A failing source fails the request Safe, before anything is sent.
func TestTokenSource(t *testing.T) {
	f := newFake(t)
	var tok atomic.Value
	tok.Store("token-one")
	var fail atomic.Bool
	c := newFakeClient(t, f, func(o *options) {
		o.Sockets = 1
		o.AuthToken = ""
		o.TokenSource = func(context.Context) (string, error) {
			if fail.Load() {
				return "", errors.New("no token today")
			}
			return tok.Load().(string), nil
		}
	})
	s := c.NewStream()
	for range 2 {
		mustExecute(t, s, "x")
	}
	tok.Store("token-two")
	mustExecute(t, s, "y")
	fc := f.conn(0)
	if got := fc.hellos(); !slices.Equal(got, []string{"token-one", "token-two"}) {
		t.Fatalf("hellos %q, want one per token", got)
	}
	if n := f.dials.Load(); n != 1 {
		t.Fatalf("%d dials, want the one socket", n)
	}
	if got := fc.received(); got[len(got)-2] != "hello" || got[len(got)-1] != "execute" {
		t.Fatalf("the new hello does not precede the burst: %q", got)
	}
	fail.Store(true)
	_, err := execute(context.Background(), s, "z")
	if e := asError(t, err); !e.Safe || !strings.Contains(err.Error(), "no token today") {
		t.Fatalf("a failing source: %v", err)
	}
}
