package http

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
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

const okClose = `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`

// fakeServer answers POSTs with handler, but those under /v3/ with 404
// when v3Status is 404 (a server of Hrana 2 alone). The transport never
// probes (PROTOCOL.md §2): a GET fails the test.
func fakeServer(t *testing.T, v3Status int, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet:
			t.Errorf("GET %s: the transport probed the server", r.URL.Path)
			w.WriteHeader(http.StatusOK)
		case v3Status == http.StatusNotFound && strings.HasPrefix(r.URL.Path, "/v3/"):
			http.NotFound(w, r)
		default:
			handler(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sendClose(ctx context.Context, s transport.Stream) error {
	res := new(transport.Response)
	return s.Send(ctx, []codec.StreamRequest{{Type: codec.RequestClose}}, false, res)
}

// closeTwice sends two closes on s, to a server that answers the first
// with baton B1 and the second without one: the stream must hold the baton
// after the first and be closed after the second.
func closeTwice(t *testing.T, s transport.Stream) {
	t.Helper()
	if err := sendClose(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if !s.Open() {
		t.Fatal("the stream should hold baton B1")
	}
	if err := sendClose(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.Open() {
		t.Fatal("a null or absent baton closes the stream")
	}
}

func TestPipelineSendsTokenAndKeepsBaton(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer tok" {
			t.Errorf("Authorization = %q", got)
		}
		if r.URL.Path != "/v3/pipeline" {
			t.Errorf("path = %q", r.URL.Path)
		}
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) == 1 {
			if !strings.Contains(string(body), `"baton":null`) {
				t.Errorf("first request body %s", body)
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"baton":"B1","base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`)
			return
		}
		if !strings.Contains(string(body), `"baton":"B1"`) {
			t.Errorf("second request body %s", body)
		}
		_, _ = io.WriteString(w, okClose)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL + "/", AuthToken: "tok", Codec: direct.Codec})
	closeTwice(t, c.NewStream())
}

// A server of Hrana 2 alone answers /v3/pipeline 404: the request goes
// again on /v2/pipeline, and later ones go there at once. One built for
// Hrana 3 (get_autocommit) is not sent there: a close finds out that the
// server speaks Hrana 2, and the request is to be built again (Resend).
func TestFallsBackToV2(t *testing.T) {
	for _, v3only := range []bool{false, true} {
		var paths []string
		var mu sync.Mutex
		srv := fakeServer(t, http.StatusNotFound, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			if r.URL.Path != "/v2/pipeline" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, okClose)
		})
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
		if v, _ := c.version(context.Background()); v != v3 {
			t.Fatalf("version %d before any request, want 3", v)
		}
		req := []codec.StreamRequest{{Type: codec.RequestClose}}
		if v3only {
			req = []codec.StreamRequest{{Type: codec.RequestGetAutocommit}}
		}
		err := c.NewStream().Send(context.Background(), req, false, new(transport.Response))
		var e *transport.Error
		switch {
		case !v3only && err != nil:
			t.Fatal(err)
		case v3only && (!errors.As(err, &e) || !e.Safe || !e.Resend || !strings.Contains(e.Message, "Hrana 2")):
			t.Fatalf("got %#v, want a Safe Resend error", err)
		}
		if v, _ := c.version(context.Background()); v != v2 {
			t.Fatalf("version %d, want 2", v)
		}
		if err := sendClose(context.Background(), c.NewStream()); err != nil {
			t.Fatal(err)
		}
		want := []string{"/v2/pipeline", "/v2/pipeline"} // after /v3/pipeline's 404, which fakeServer answers
		if !slices.Equal(paths, want) {
			t.Fatalf("v3only=%v: paths %v, want %v", v3only, paths, want)
		}
	}
}

// A 404 on every path (a database the server does not have) teaches
// nothing: the error is the first path's, safe (nothing ran), and the next
// request starts from Hrana 3 again.
func TestNotFoundEverywhereLearnsNothing(t *testing.T) {
	var posts atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Namespace `+"`nope`"+` doesn't exist"}`)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	for i := 1; i <= 2; i++ {
		err := sendClose(context.Background(), c.NewStream())
		var e *transport.Error
		if !errors.As(err, &e) || e.HTTPStatus != http.StatusNotFound || !e.Safe || !strings.Contains(e.Message, "doesn't exist") {
			t.Fatalf("got %#v", err)
		}
		if v, _ := c.version(context.Background()); v != v3 {
			t.Fatalf("version %d, want 3", v)
		}
		if n := posts.Load(); n != int32(2*i) {
			t.Fatalf("%d requests, want 2 per call (v3, then v2)", n)
		}
	}
}

// PROTOCOL.md §4.6: a non-null base_url moves the stream's requests to it;
// a null one keeps them where they go (not back to the first URL), on the
// pipeline and the cursor endpoints alike; a closed stream starts over at
// the client's URL.
func TestBaseURLRedirectsStream(t *testing.T) {
	var origin, sticky atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sticky.Add(1)
		switch r.URL.Path {
		case "/sticky/v3/pipeline":
			_, _ = io.WriteString(w, `{"baton":"B","base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`)
		case "/sticky/v3/cursor":
			_, _ = io.WriteString(w, `{"baton":"C","base_url":null}`+"\n"+`{"type":"step_begin","step":0,"cols":[]}`+"\n"+
				`{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`+"\n"+`{"type":"replication_index","replication_index":null}`+"\n")
		default:
			t.Errorf("path %q", r.URL.Path)
		}
	}))
	defer other.Close()
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		origin.Add(1)
		_, _ = io.WriteString(w, `{"baton":"B","base_url":"`+other.URL+`/sticky/","results":[{"type":"ok","response":{"type":"close"}}]}`)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := sendClose(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := s.OpenCursor(ctx, &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT 1"}}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	readCursor(t, cur)
	cur.Close()
	if err := sendClose(ctx, s); err != nil {
		t.Fatal(err)
	}
	if origin.Load() != 1 || sticky.Load() != 4 {
		t.Fatalf("origin served %d requests, the sticky node %d; want 1 and 4", origin.Load(), sticky.Load())
	}
	s.Reset() // closes the stream on the sticky node
	if err := sendClose(ctx, s); err != nil {
		t.Fatal(err)
	}
	if origin.Load() != 2 {
		t.Fatalf("a new stream went to the sticky node: origin served %d", origin.Load())
	}
}

func TestHTTPErrorShapes(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantCode    string
		wantMsg     string
		wantSent    bool
	}{
		{"text", 400, "text/plain; charset=utf-8", "Received an invalid baton\n", "", "Received an invalid baton", true},
		// sqld checks the baton before anything else: an expired stream ran
		// nothing.
		{"hrana", 400, "application/json", `{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}`, "STREAM_EXPIRED", "The stream has expired due to inactivity", false},
		{"sqld", 401, "application/json", `{"error":"Unauthorized: The JWT is invalid"}`, "", "The JWT is invalid", true},
		{"sqld quoted", 401, "application/json", "{\"error\":\"Unauthorized: `The JWT is invalid`\"}", "", "The JWT is invalid", true},
		{"plain quoted", 401, "text/plain", "Unauthorized: `The JWT is invalid`\n", "", "The JWT is invalid", true},
		// PROTOCOL.md §9.3: a path, database or stream the server does not
		// have; nothing ran.
		{"status only", 404, "text/plain", "Not Found", "", "Not Found", false},
		{"html", 502, "text/html", "<html><body>Bad Gateway</body></html>", "", "Bad Gateway", true},
		{"overloaded", 429, "application/json", `{"error":"Too many concurrent requests"}`, "", "Too many concurrent requests", false},
		{"garbage json", 500, "application/json", `{not json`, "", "Internal Server Error", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, AuthToken: "SECRET", Codec: direct.Codec})
			err := sendClose(context.Background(), c.NewStream())
			var te *transport.Error
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want *transport.Error", err)
			}
			if te.HTTPStatus != tt.status || te.Code != tt.wantCode || te.Message != tt.wantMsg || te.Safe == tt.wantSent || te.Resend {
				t.Fatalf("got %+v", te)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error leaks the token: %v", err)
			}
		})
	}
}

func TestResponseTooLarge(t *testing.T) {
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"baton":null,"results":[`+strings.Repeat(" ", 4096)+`]}`)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec}, func(c *client) { c.maxResp = 1024 })
	err := sendClose(context.Background(), c.NewStream())
	if !errors.Is(err, transport.ErrResponseTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func TestResultCountMismatch(t *testing.T) {
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"baton":null,"results":[]}`)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	if err := sendClose(context.Background(), c.NewStream()); err == nil || !strings.Contains(err.Error(), "0 results for 1 requests") {
		t.Fatalf("got %v", err)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, Timeout: 50 * time.Millisecond})
	start := time.Now()
	err := sendClose(context.Background(), c.NewStream())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sendClose(ctx, c.NewStream()); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestUnreachableIsUnsent(t *testing.T) {
	addr, err := loopback.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, transport.Options{URL: "http://" + addr, Codec: direct.Codec})
	err = sendClose(context.Background(), c.NewStream())
	var te *transport.Error
	if !errors.As(err, &te) || !te.Safe || !te.Resend {
		t.Fatalf("got %#v, want an unsent *transport.Error", err)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	err := sendClose(context.Background(), c.NewStream())
	var te *transport.Error
	if !errors.As(err, &te) || te.HTTPStatus != http.StatusTemporaryRedirect {
		t.Fatalf("got %v, want the 307 as an error", err)
	}
}

// TestStreamKeepsBatonAfterNetworkFailure: a cancelled request may never
// have reached the server, so the stream keeps its baton for a close; an
// HTTP error means the server dropped the stream, so it is forgotten.
func TestStreamKeepsBatonAfterNetworkFailure(t *testing.T) {
	var mode atomic.Int32
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 0:
			_, _ = io.WriteString(w, `{"baton":"B1","base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`)
		case 1:
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
			<-r.Context().Done()
		default:
			http.Error(w, "Received an invalid baton", http.StatusBadRequest)
		}
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	s := c.NewStream()
	if err := sendClose(context.Background(), s); err != nil || !s.Open() {
		t.Fatalf("open: %v", err)
	}
	mode.Store(1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := sendClose(ctx, s); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if !s.Open() {
		t.Fatal("the stream forgot a baton that may still be current")
	}
	mode.Store(2)
	if err := sendClose(context.Background(), s); err == nil {
		t.Fatal("want the 400")
	}
	if s.Open() {
		t.Fatal("the stream kept a baton the server rejected")
	}
}

// TestOwnTransport: the client's own transport keeps connections alive,
// CloseIdleConnections drops them, and Compress asks for gzip and
// decompresses it while the default asks for identity.
func TestOwnTransport(t *testing.T) {
	var conns atomic.Int32
	var lastAE atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		lastAE.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, okClose)
			_ = zw.Close()
			return
		}
		_, _ = io.WriteString(w, okClose)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	for _, compress := range []bool{false, true} {
		conns.Store(0)
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, Compress: compress})
		for range 3 {
			if err := sendClose(context.Background(), c.NewStream()); err != nil {
				t.Fatal(err)
			}
		}
		want := "identity"
		if compress {
			want = "gzip"
		}
		if got := lastAE.Load(); got != want {
			t.Fatalf("compress=%v: Accept-Encoding %q", compress, got)
		}
		if n := conns.Load(); n != 1 {
			t.Fatalf("compress=%v: %d connections for sequential requests", compress, n)
		}
		_ = c.Close()
		if err := sendClose(context.Background(), c.NewStream()); err != nil {
			t.Fatal(err)
		}
		if n := conns.Load(); n != 2 {
			t.Fatalf("compress=%v: %d connections after CloseIdleConnections, want 2", compress, n)
		}
		_ = c.Close()
	}
}

// newTestClient returns a client for o, with direct as its JSON codec unless
// o names one, adjusted by the tweaks.
func newTestClient(t testing.TB, o transport.Options, tweaks ...func(*client)) *client {
	t.Helper()
	if o.JSON == nil {
		o.JSON = direct.Codec
	}
	c, err := newClient(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tweak := range tweaks {
		tweak(c)
	}
	return c
}

// TestTokenSource: every request carries the source's current token, and
// a failing source fails the request Safe before anything is sent.
func TestTokenSource(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`)
	})
	tokens := []string{"one", "two"}
	var fail bool
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, TokenSource: func(context.Context) (string, error) {
		if fail {
			return "", errors.New("no token today")
		}
		tok := tokens[0]
		if len(tokens) > 1 {
			tokens = tokens[1:]
		}
		return tok, nil
	}})
	for range 3 {
		if err := sendClose(context.Background(), c.NewStream()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"Bearer one", "Bearer two", "Bearer two"}; !slices.Equal(got, want) {
		t.Fatalf("Authorization headers %q, want %q", got, want)
	}
	fail = true
	err := sendClose(context.Background(), c.NewStream())
	if !isSafeErr(err) || !strings.Contains(err.Error(), "no token today") || len(got) != 3 {
		t.Fatalf("a failing source: %v (%d requests)", err, len(got))
	}
}

func isSafeErr(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.Safe
}
