package http1

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/loopback"
)

// TestBodies: Content-Length, chunked and empty bodies from net/http's
// server, each three times on one kept-alive connection.
func TestBodies(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	tests := []struct {
		name     string
		method   string
		handler  http.HandlerFunc
		want     string
		wantLen  int64
		chunked  bool
		wantCode int
	}{
		{name: "content-length", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}, want: "hello", wantLen: 5},
		{name: "chunked", handler: func(w http.ResponseWriter, r *http.Request) {
			for i := range 5 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		}, want: "part0;part1;part2;part3;part4;", wantLen: -1, chunked: true},
		{name: "large content-length", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			io.WriteString(w, big)
		}, want: big, wantLen: int64(len(big))},
		{name: "large chunked", handler: func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < len(big); i += 100000 {
				io.WriteString(w, big[i:min(i+100000, len(big))])
				w.(http.Flusher).Flush()
			}
		}, want: big, wantLen: -1, chunked: true},
		{name: "empty 200", handler: func(w http.ResponseWriter, r *http.Request) {}, want: "", wantLen: 0},
		{name: "204", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }, want: "", wantCode: 204},
		{name: "304", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(304) }, want: "", wantCode: 304},
		{name: "HEAD", method: "HEAD", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1234")
		}, want: "", wantLen: 1234},
		{name: "error status with body", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "nope", http.StatusBadRequest)
		}, want: "nope\n", wantLen: 5, wantCode: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, conns := newServer(t, false, tc.handler)
			tr := newTestTransport(t, Options{})
			method := tc.method
			if method == "" {
				method = "POST"
			}
			for i := range 3 {
				resp, body, err := do(t, tr, newReq(t, method, srv.URL+"/x", "ping"))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if body != tc.want {
					t.Fatalf("request %d: body of %d bytes, want %d", i, len(body), len(tc.want))
				}
				code := tc.wantCode
				if code == 0 {
					code = 200
				}
				if resp.StatusCode != code || resp.Status != strconv.Itoa(code)+" "+http.StatusText(code) {
					t.Fatalf("status %d %q", resp.StatusCode, resp.Status)
				}
				if resp.Proto != "HTTP/1.1" || resp.Request == nil || resp.Close {
					t.Fatalf("proto %q, request %v, close %v", resp.Proto, resp.Request, resp.Close)
				}
				if code < 300 && resp.ContentLength != tc.wantLen {
					t.Fatalf("ContentLength %d, want %d", resp.ContentLength, tc.wantLen)
				}
				if got := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"; got != tc.chunked {
					t.Fatalf("TransferEncoding %v", resp.TransferEncoding)
				}
				if tc.chunked && resp.Header.Get("Content-Length") != "" {
					t.Fatal("Content-Length header kept on a chunked response")
				}
				if resp.Header.Get("Date") == "" {
					t.Fatalf("headers %v", resp.Header)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Fatalf("%d connections for 3 sequential requests, want 1", n)
			}
		})
	}
}

// TestRequestEncoding checks what reaches the server.
func TestRequestEncoding(t *testing.T) {
	type seen struct {
		method, uri, host string
		header            http.Header
		body              string
		cl                int64
		te                []string
	}
	got := make(chan seen, 1)
	srv, _ := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header, string(b), r.ContentLength, r.TransferEncoding}
	})
	tr := newTestTransport(t, Options{})

	req := newReq(t, "POST", srv.URL+"/v3/pipeline?a=1&b=%20", `{"requests":[]}`)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	mustDo(t, tr, req)
	s := <-got
	if s.method != "POST" || s.uri != "/v3/pipeline?a=1&b=%20" || s.host != srv.Listener.Addr().String() ||
		s.body != `{"requests":[]}` || s.cl != int64(len(s.body)) || s.te != nil {
		t.Fatalf("%+v", s)
	}
	if s.header.Get("Content-Type") != "application/json" || s.header.Get("Authorization") != "Bearer secret" ||
		strings.Join(s.header["X-Multi"], ",") != "one,two" || s.header.Get("User-Agent") != defaultUserAgent ||
		s.header.Get("Accept-Encoding") != "" {
		t.Fatalf("headers %v", s.header)
	}

	// A GET without a body has no Content-Length; an escaped path and an
	// explicit Host and User-Agent pass through.
	req = newReq(t, "GET", srv.URL+"/a%20b/c%2Fd", "")
	req.Host = "example.com:1234"
	req.Header.Set("User-Agent", "mine")
	mustDo(t, tr, req)
	s = <-got
	if s.method != "GET" || s.uri != "/a%20b/c%2Fd" || s.host != "example.com:1234" || s.cl != 0 ||
		s.header.Get("Content-Length") != "" || s.header.Get("User-Agent") != "mine" {
		t.Fatalf("%+v", s)
	}
	// An empty POST says Content-Length: 0.
	mustDo(t, tr, newReq(t, "POST", srv.URL, ""))
	if s = <-got; s.header.Get("Content-Length") != "0" && s.cl != 0 {
		t.Fatalf("%+v", s)
	}
}

// TestRequestRejected: requests the transport refuses to send. Nothing
// reaches the server, the error never shows the Authorization header, and
// the transport stays usable.
func TestRequestRejected(t *testing.T) {
	const secret = "tok3n-s3cret"
	srv := newRawServer(t, scripted("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false))
	tr := newTestTransport(t, Options{})
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"CRLF in Authorization", func() *http.Request {
			r := newReq(t, "POST", srv.url, "x")
			r.Header["Authorization"] = []string{"Bearer " + secret + "\r\nX-Evil: 1"}
			return r
		}},
		{"NUL in value", func() *http.Request {
			r := newReq(t, "POST", srv.url, "x")
			r.Header.Set("X-A", "a\x00"+secret)
			return r
		}},
		{"bad field name", func() *http.Request {
			r := newReq(t, "POST", srv.url, "x")
			r.Header["Bad Name"] = []string{secret}
			return r
		}},
		{"bad method", func() *http.Request {
			r := newReq(t, "POST", srv.url, "x")
			r.Method = "PO ST"
			return r
		}},
		{"unknown length", func() *http.Request {
			r := newReq(t, "POST", srv.url, "")
			r.Body = io.NopCloser(strings.NewReader("abc"))
			r.ContentLength = -1
			return r
		}},
		{"body shorter than ContentLength", func() *http.Request {
			r := newReq(t, "POST", srv.url, "abc")
			r.ContentLength = 10
			return r
		}},
		{"body longer than ContentLength", func() *http.Request {
			r := newReq(t, "POST", srv.url, "abcdef")
			r.ContentLength = 3
			return r
		}},
		{"ftp scheme", func() *http.Request { return newReq(t, "GET", "ftp://"+srv.addr+"/", "") }},
		{"no host", func() *http.Request { return newReq(t, "GET", "http:///x", "") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req()
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", "Bearer "+secret)
			}
			_, err := tr.RoundTrip(req)
			if err == nil {
				t.Fatal("sent")
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows the secret: %v", err)
			}
			t.Log(err)
		})
	}
	if n := srv.reqs.Load(); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	if body := mustDo(t, tr, newReq(t, "POST", srv.url, "x")); body != "ok" {
		t.Fatal(body)
	}
}

// TestGzip: with Compress the transport asks for gzip and decompresses;
// a caller's own Accept-Encoding turns that off; without Compress bodies
// pass untouched.
func TestGzip(t *testing.T) {
	const text = `{"baton":null,"results":[]}`
	srv, _ := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Got-Accept-Encoding", r.Header.Get("Accept-Encoding"))
		if r.URL.Query().Get("gzip") == "always" || strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			if r.URL.Query().Get("empty") != "" {
				w.(http.Flusher).Flush() // chunked, with no data
				return
			}
			zw := gzip.NewWriter(w)
			io.WriteString(zw, text)
			zw.Close()
			return
		}
		io.WriteString(w, text)
	})
	tests := []struct {
		name, query, callerAE string
		compress, wantGzipped bool
		wantAE                string
		wantUncompressed      bool
		wantBody              string
	}{
		{name: "compress", compress: true, wantAE: "gzip", wantUncompressed: true, wantBody: text},
		{name: "compress, empty gzip body", query: "?gzip=always&empty=1", compress: true, wantAE: "gzip", wantUncompressed: true},
		{name: "compress, caller asks identity", compress: true, callerAE: "identity", wantAE: "identity", wantBody: text},
		{name: "compress, caller asks gzip", compress: true, callerAE: "gzip", wantAE: "gzip", wantGzipped: true},
		{name: "no compress", wantAE: "", wantBody: text},
		{name: "no compress, gzip anyway", query: "?gzip=always", wantAE: "", wantGzipped: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTransport(t, Options{Compress: tc.compress})
			for range 2 {
				req := newReq(t, "POST", srv.URL+"/"+tc.query, "x")
				if tc.callerAE != "" {
					req.Header.Set("Accept-Encoding", tc.callerAE)
				}
				resp, body, err := do(t, tr, req)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Header.Get("X-Got-Accept-Encoding"); got != tc.wantAE {
					t.Fatalf("server saw Accept-Encoding %q, want %q", got, tc.wantAE)
				}
				if resp.Uncompressed != tc.wantUncompressed {
					t.Fatalf("Uncompressed %v", resp.Uncompressed)
				}
				if tc.wantUncompressed && (resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Length") != "" || resp.ContentLength != -1) {
					t.Fatalf("headers %v, length %d", resp.Header, resp.ContentLength)
				}
				if tc.wantGzipped {
					if resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(body, "\x1f\x8b") {
						t.Fatalf("want the gzip body untouched, got %q", body)
					}
				} else if body != tc.wantBody {
					t.Fatalf("body %q", body)
				}
			}
			if n := tr.idleCount(); n != 1 {
				t.Fatalf("%d idle connections after reading gzip bodies to the end, want 1", n)
			}
		})
	}
}

// TestKeepAlive: sequential requests share a connection; a body closed
// before its end closes its connection; one read to the end without Close
// is pooled; Connection: close is honoured both ways.
func TestKeepAlive(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	srv, conns := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, "ok")
	})
	tr := newTestTransport(t, Options{})
	for range 20 {
		mustDo(t, tr, newReq(t, "POST", srv.URL, "x"))
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 20 sequential requests", n)
	}

	// Closed early: the connection goes.
	resp, err := tr.RoundTrip(newReq(t, "GET", srv.URL+"/big", ""))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tr.idleCount() != 0 {
		t.Fatal("a connection with an unread body was pooled")
	}
	mustDo(t, tr, newReq(t, "GET", srv.URL, ""))
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}

	// Read to the end, never closed: pooled anyway.
	resp, err = tr.RoundTrip(newReq(t, "GET", srv.URL+"/big", ""))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != len(big) {
		t.Fatal(len(b), err)
	}
	if tr.idleCount() != 1 {
		t.Fatal("a body read to its end did not pool its connection")
	}
	mustDo(t, tr, newReq(t, "GET", srv.URL, ""))
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}

	// The server says close.
	resp, _, err = do(t, tr, newReq(t, "GET", srv.URL+"/close", ""))
	if err != nil || !resp.Close {
		t.Fatalf("%v, Close=%v", err, resp != nil && resp.Close)
	}
	if tr.idleCount() != 0 {
		t.Fatal("pooled after Connection: close")
	}
	// The request says close.
	req := newReq(t, "GET", srv.URL, "")
	req.Close = true
	mustDo(t, tr, req)
	req = newReq(t, "GET", srv.URL, "")
	req.Header.Set("Connection", "close")
	mustDo(t, tr, req)
	if tr.idleCount() != 0 {
		t.Fatal("pooled after a request asked to close")
	}
	if n := conns.Load(); n != 4 {
		t.Fatalf("%d connections, want 4", n)
	}
}

// TestBodyCalls: Read and Close after the end or after Close, and the
// connection pooled exactly once.
func TestBodyCalls(t *testing.T) {
	srv, conns := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	})
	tr := newTestTransport(t, Options{})
	resp, err := tr.RoundTrip(newReq(t, "GET", srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "hello" {
		t.Fatal(string(b), err)
	}
	for range 3 {
		if n, err := resp.Body.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Fatalf("Read after EOF: %d, %v", n, err)
		}
		if err := resp.Body.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := tr.idleCount(); n != 1 {
		t.Fatalf("%d idle connections, want 1", n)
	}
	// The pooled connection serves the next request while the old body is
	// touched again: nothing changes for the new one.
	resp2, err := tr.RoundTrip(newReq(t, "GET", srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp.Body.Read(make([]byte, 1))
	if b, err := io.ReadAll(resp2.Body); err != nil || string(b) != "hello" {
		t.Fatal(string(b), err)
	}
	if conns.Load() != 1 || tr.idleCount() != 1 {
		t.Fatalf("%d connections, %d idle", conns.Load(), tr.idleCount())
	}

	// Closed before the end: Read says so, the connection is gone.
	resp, err = tr.RoundTrip(newReq(t, "GET", srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 10)); !errors.Is(err, ErrBodyClosed) {
		t.Fatal(err)
	}
	if tr.idleCount() != 0 {
		t.Fatal("pooled after an early Close")
	}
}

// TestTLS: https with the test server's CA, one handshake for many
// requests, ALPN http/1.1; failures keep their TLS error types.
func TestTLS(t *testing.T) {
	srv, conns := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.TLS.NegotiatedProtocol, r.TLS.ServerName)
	})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	url := srv.URL // the certificate is for 127.0.0.1 and example.com
	tr := newTestTransport(t, Options{TLSConfig: &tls.Config{RootCAs: pool}})
	for range 5 {
		if got := mustDo(t, tr, newReq(t, "POST", url, "x")); got != "http/1.1 " {
			t.Fatalf("got %q", got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections", n)
	}
	// The server drops its idle connections: the next request notices and
	// dials.
	srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	mustDo(t, tr, newReq(t, "POST", url, "x"))
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}

	t.Run("ServerName from the config", func(t *testing.T) {
		tr := newTestTransport(t, Options{TLSConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}})
		if got := mustDo(t, tr, newReq(t, "POST", url, "x")); got != "http/1.1 example.com" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("unknown authority", func(t *testing.T) {
		tr := newTestTransport(t, Options{})
		_, err := tr.RoundTrip(newReq(t, "GET", url, ""))
		var ua x509.UnknownAuthorityError
		var cv *tls.CertificateVerificationError
		if !errors.As(err, &ua) || !errors.As(err, &cv) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("wrong host", func(t *testing.T) {
		tr := newTestTransport(t, Options{TLSConfig: &tls.Config{RootCAs: pool, ServerName: "other.test"}})
		_, err := tr.RoundTrip(newReq(t, "GET", url, ""))
		var he x509.HostnameError
		if !errors.As(err, &he) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("plain http server", func(t *testing.T) {
		plain, _ := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {})
		tr := newTestTransport(t, Options{})
		_, err := tr.RoundTrip(newReq(t, "GET", strings.Replace(plain.URL, "http:", "https:", 1), ""))
		var re tls.RecordHeaderError
		if !errors.As(err, &re) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the caller's config is not changed", func(t *testing.T) {
		cfg := &tls.Config{RootCAs: pool}
		tr := newTestTransport(t, Options{TLSConfig: cfg})
		mustDo(t, tr, newReq(t, "GET", url, ""))
		if cfg.ServerName != "" || cfg.NextProtos != nil {
			t.Fatalf("%+v", cfg)
		}
	})
}

// TestConcurrent: 16 goroutines share the transport; every response
// belongs to its request.
func TestConcurrent(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			srv, conns := newServer(t, useTLS, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.URL.Query().Get("chunked") != "" {
					w.Write(b[:1])
					w.(http.Flusher).Flush()
					w.Write(b[1:])
					return
				}
				w.Write(b)
			})
			var o Options
			if useTLS {
				pool := x509.NewCertPool()
				pool.AddCert(srv.Certificate())
				o.TLSConfig = &tls.Config{RootCAs: pool}
			}
			tr := newTestTransport(t, o)
			const workers, each = 16, 50
			var wg sync.WaitGroup
			var failed atomic.Int32
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						want := fmt.Sprintf("worker %d request %d", w, i)
						url := srv.URL
						if i%2 == 1 {
							url += "?chunked=1"
						}
						_, body, err := do(t, tr, newReq(t, "POST", url, want))
						if err != nil || body != want {
							t.Errorf("got %q, %v; want %q", body, err, want)
							failed.Add(1)
							return
						}
					}
				}()
			}
			wg.Wait()
			if n := conns.Load(); n > workers {
				t.Fatalf("%d connections for %d workers", n, workers)
			}
			if n := tr.idleCount(); n > workers {
				t.Fatalf("%d idle connections", n)
			}
		})
	}
}

// TestDialError: a refused connection is a *net.OpError with Op "dial",
// which the driver reports as not sent.
func TestDialError(t *testing.T) {
	addr, err := loopback.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	tr := newTestTransport(t, Options{})
	_, err = tr.RoundTrip(newReq(t, "POST", "http://"+addr+"/x", "x"))
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("got %#v", err)
	}
}

// TestPoolLimits: idle timeout, MaxIdleConnsPerHost, CloseIdleConnections,
// and pools kept apart per host:port.
func TestPoolLimits(t *testing.T) {
	release := make(chan struct{})
	var inside sync.WaitGroup
	srv, conns := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			inside.Done()
			<-release
		}
		io.WriteString(w, "ok")
	})
	other, otherConns := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {})
	tr := newTestTransport(t, Options{MaxIdleConnsPerHost: 2, IdleConnTimeout: 200 * time.Millisecond})

	// Four at once: four connections, two kept.
	var wg sync.WaitGroup
	inside.Add(4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := do(t, tr, newReq(t, "GET", srv.URL+"/wait", "")); err != nil {
				t.Error(err)
			}
		}()
	}
	inside.Wait()
	close(release)
	wg.Wait()
	if conns.Load() != 4 || tr.idleCount() != 2 {
		t.Fatalf("%d connections, %d idle; want 4, 2", conns.Load(), tr.idleCount())
	}
	mustDo(t, tr, newReq(t, "GET", other.URL, ""))
	if otherConns.Load() != 1 || tr.idleCount() != 3 {
		t.Fatalf("other host: %d connections, %d idle", otherConns.Load(), tr.idleCount())
	}

	// Expired: a new connection.
	time.Sleep(300 * time.Millisecond)
	mustDo(t, tr, newReq(t, "GET", srv.URL, ""))
	if n := conns.Load(); n != 5 {
		t.Fatalf("%d connections after the idle timeout, want 5", n)
	}

	tr.CloseIdleConnections()
	if n := tr.idleCount(); n != 0 {
		t.Fatalf("%d idle after CloseIdleConnections", n)
	}
	mustDo(t, tr, newReq(t, "GET", srv.URL, ""))
	if n := conns.Load(); n != 6 {
		t.Fatalf("%d connections after CloseIdleConnections, want 6", n)
	}
}

// TestThroughHTTPClient: the transport under an http.Client, as the
// driver uses it, with redirects refused.
func TestThroughHTTPClient(t *testing.T) {
	srv, _ := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, r.URL.Path)
	})
	tr := newTestTransport(t, Options{})
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(newReq(t, "GET", srv.URL+"/redirect", ""))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatal(resp.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	if _, err := hc.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}
