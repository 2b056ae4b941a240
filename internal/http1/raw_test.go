package http1

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRawResponses: responses net/http's server does not send (HTTP/1.0,
// close-delimited, chunk extensions and trailers, 1xx, bare LF, lowercase
// names) parse right, and the connection is pooled only when it may be.
func TestRawResponses(t *testing.T) {
	tests := []struct {
		name     string
		resp     string
		want     string
		wantLen  int64
		pooled   bool
		header   string // a header that must be there, "Key: value"
		wantCode int
	}{
		{name: "chunk extensions and trailers", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5;name=value\r\nhello\r\n1;x\r\n!\r\n0\r\nX-Trailer: t\r\nY: z\r\n\r\n", want: "hello!", wantLen: -1, pooled: true},
		{name: "chunked, upper-case hex", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
			want: "0123456789", wantLen: -1, pooled: true},
		{name: "chunked and Content-Length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
			want: "abc", wantLen: -1, pooled: true},
		{name: "HTTP/1.0 close-delimited", resp: "HTTP/1.0 200 OK\r\n\r\nuntil close", want: "until close", wantLen: -1},
		{name: "HTTP/1.0 with length", resp: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", want: "ok", wantLen: 2},
		{name: "HTTP/1.1 close-delimited", resp: "HTTP/1.1 200 OK\r\n\r\nuntil close", want: "until close", wantLen: -1},
		{name: "Connection: close", resp: "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok", want: "ok", wantLen: 2},
		{name: "100 Continue skipped", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			want: "ok", wantLen: 2, pooled: true},
		{name: "bare LF, lowercase names, spaces", resp: "HTTP/1.1 200 OK\ncontent-length:  2 \nx-some-thing:\tv \n\nok",
			want: "ok", wantLen: 2, pooled: true, header: "X-Some-Thing: v"},
		{name: "no reason phrase", resp: "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", want: "ok", wantLen: 2, pooled: true},
		{name: "repeated equal Content-Length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
			want: "ok", wantLen: 2, pooled: true},
		{name: "repeated header", resp: "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 0\r\nx-a: 2\r\n\r\n", wantLen: 0, pooled: true, header: "X-A: 1,2"},
		{name: "non-standard status", resp: "HTTP/1.1 599 Whatever Man\r\nContent-Length: 0\r\n\r\n", wantLen: 0, pooled: true, wantCode: 599},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			closeAfter := !tc.pooled
			srv := newRawServer(t, scripted(tc.resp, closeAfter))
			tr := newTestTransport(t, Options{})
			for i := range 2 {
				resp, body, err := do(t, tr, newReq(t, "POST", srv.url, "x"))
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if body != tc.want || resp.ContentLength != tc.wantLen {
					t.Fatalf("body %q, length %d", body, resp.ContentLength)
				}
				code := tc.wantCode
				if code == 0 {
					code = 200
				}
				if resp.StatusCode != code {
					t.Fatal(resp.Status)
				}
				if tc.header != "" {
					k, v, _ := strings.Cut(tc.header, ": ")
					if got := strings.Join(resp.Header.Values(k), ","); got != v {
						t.Fatalf("%s: %q, header %v", k, got, resp.Header)
					}
				}
				if resp.Close == tc.pooled {
					t.Fatalf("Close=%v", resp.Close)
				}
				if got := tr.idleCount() == 1; got != tc.pooled {
					t.Fatalf("pooled=%v, want %v", got, tc.pooled)
				}
			}
			want := int32(1)
			if !tc.pooled {
				want = 2
			}
			if n := srv.conns.Load(); n != want {
				t.Fatalf("%d connections, want %d", n, want)
			}
		})
	}
}

// TestMalformed: broken responses fail with a typed error, in time, and
// their connection is never pooled.
func TestMalformed(t *testing.T) {
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	isGzip := func(err error) bool { return errors.Is(err, gzip.ErrHeader) }
	lines := func(n, size int) string {
		return strings.Repeat("X-Filler: "+strings.Repeat("f", size)+"\r\n", n)
	}
	const ok = "HTTP/1.1 200 OK\r\n"
	tests := []struct {
		name     string
		resp     string
		compress bool
		inBody   bool // fails while reading the body, not in RoundTrip
		eof      bool // the server closes the connection after resp
		framedOK bool // the HTTP framing is right: the connection may be pooled
		match    func(error) bool
		words    string
	}{
		{name: "not HTTP", resp: "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", match: is(ErrMalformed), words: "malformed HTTP"},
		{name: "closed without a response", eof: true, resp: "", match: is(io.EOF), words: "EOF"},
		{name: "partial status line", eof: true, resp: "HTTP/1.1 20", match: is(io.ErrUnexpectedEOF)},
		{name: "letters in status code", resp: "HTTP/1.1 2x0 OK\r\n\r\n", match: is(ErrMalformed)},
		{name: "status code below 100", resp: "HTTP/1.1 099 Low\r\n\r\n", match: is(ErrMalformed)},
		{name: "four-digit status", resp: "HTTP/1.1 2000 OK\r\n\r\n", match: is(ErrMalformed)},
		{name: "HTTP/2 status line", resp: "HTTP/2 200\r\n\r\n", match: is(ErrMalformed)},
		{name: "HTTP/1.2", resp: "HTTP/1.2 200 OK\r\n\r\n", match: is(ErrUnsupported)},
		{name: "lowercase protocol", resp: "http/1.1 200 OK\r\n\r\n", match: is(ErrMalformed)},
		{name: "control character in reason", resp: "HTTP/1.1 200 O\x00K\r\n\r\n", match: is(ErrMalformed)},
		{name: "101 Switching Protocols", resp: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", match: is(ErrUnsupported)},
		{name: "too many 1xx", resp: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + ok + "\r\n", match: is(ErrMalformed)},
		{name: "header without colon", resp: ok + "foo\r\n\r\n", match: is(ErrMalformed)},
		{name: "header with empty name", resp: ok + ": v\r\n\r\n", match: is(ErrMalformed)},
		{name: "space before colon", resp: ok + "Content-Length : 2\r\n\r\nok", match: is(ErrMalformed)},
		{name: "folded header", resp: ok + "X-A: 1\r\n  2\r\n\r\n", match: is(ErrMalformed)},
		{name: "NUL in value", resp: ok + "X-A: a\x00b\r\n\r\n", match: is(ErrMalformed)},
		{name: "bare CR in value", resp: ok + "X-A: a\rb\r\n\r\n", match: is(ErrMalformed)},
		{name: "Content-Length with letters", resp: ok + "Content-Length: 12a\r\n\r\n", match: is(ErrMalformed)},
		{name: "negative Content-Length", resp: ok + "Content-Length: -1\r\n\r\n", match: is(ErrMalformed)},
		{name: "empty Content-Length", resp: ok + "Content-Length: \r\n\r\n", match: is(ErrMalformed)},
		{name: "huge Content-Length", resp: ok + "Content-Length: 99999999999999999999\r\n\r\n", match: is(ErrMalformed)},
		{name: "conflicting Content-Length", resp: ok + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello", match: is(ErrMalformed)},
		{name: "Content-Length list", resp: ok + "Content-Length: 5, 5\r\n\r\nhello", match: is(ErrMalformed)},
		{name: "unsupported transfer encoding", resp: ok + "Transfer-Encoding: gzip, chunked\r\n\r\n", match: is(ErrUnsupported)},
		{name: "headers cut off", eof: true, resp: ok + "Content-Type: text/pl", match: is(io.ErrUnexpectedEOF)},
		{name: "no blank line", eof: true, resp: ok + "Content-Type: text/plain\r\n", match: is(io.ErrUnexpectedEOF)},
		{name: "header section over 64 KiB", resp: ok + lines(70, 1000) + "\r\n", match: is(ErrHeaderTooLarge)},
		{name: "one header line over 32 KiB", resp: ok + lines(1, 40<<10) + "\r\n", match: is(ErrHeaderTooLarge)},
		{name: "too many headers", resp: ok + lines(300, 1) + "\r\n", match: is(ErrHeaderTooLarge)},
		{name: "status line over the limit", resp: "HTTP/1.1 200 " + strings.Repeat("A", 40<<10) + "\r\n\r\n", match: is(ErrHeaderTooLarge)},

		{name: "short Content-Length body", eof: true, resp: ok + "Content-Length: 10\r\n\r\nabc", inBody: true, match: is(io.ErrUnexpectedEOF), words: "unexpected EOF"},
		{name: "chunk cut off", eof: true, resp: ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nab", inBody: true, match: is(io.ErrUnexpectedEOF)},
		{name: "no last chunk", eof: true, resp: ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", inBody: true, match: is(io.ErrUnexpectedEOF)},
		{name: "chunk-size line cut off", eof: true, resp: ok + "Transfer-Encoding: chunked\r\n\r\n5", inBody: true, match: is(io.ErrUnexpectedEOF)},
		{name: "trailers cut off", eof: true, resp: ok + "Transfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n", inBody: true, match: is(io.ErrUnexpectedEOF)},
		{name: "chunk size not hex", resp: ok + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "negative chunk size", resp: ok + "Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "empty chunk size", resp: ok + "Transfer-Encoding: chunked\r\n\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "chunk size overflow", resp: ok + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "chunk longer than its size", resp: ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "chunk-size line over 32 KiB", resp: ok + "Transfer-Encoding: chunked\r\n\r\n5;" + strings.Repeat("e", 40<<10) + "\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "bare LF in chunked framing", resp: ok + "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "bare LF after chunk data", resp: ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "bad trailer", resp: ok + "Transfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n", inBody: true, match: is(ErrMalformed)},
		{name: "gzip body that is not gzip", resp: ok + "Content-Encoding: gzip\r\nContent-Length: 23\r\n\r\nhello, this is not gzip", compress: true, inBody: true, framedOK: true, match: isGzip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
				if _, _, err := s.readRequest(br); err != nil {
					return
				}
				io.WriteString(c, tc.resp)
				if tc.eof {
					return // closes the connection
				}
				io.Copy(io.Discard, br) // keep the connection open
			})
			tr := newTestTransport(t, Options{Compress: tc.compress})
			req := newReq(t, "POST", srv.url, "x")
			req.Header.Set("Authorization", "Bearer s3cr3t")
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if tc.inBody {
				if err != nil {
					t.Fatalf("RoundTrip: %v", err)
				}
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			} else if err == nil {
				resp.Body.Close()
				t.Fatalf("accepted: %d %v", resp.StatusCode, resp.Header)
			}
			if err == nil || !tc.match(err) {
				t.Fatalf("got %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
			if tc.words != "" && !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("message %q", err)
			}
			if strings.Contains(err.Error(), "s3cr3t") || len(err.Error()) > 200 {
				t.Fatalf("message %q", err)
			}
			if tr.idleCount() != 0 && !tc.framedOK {
				t.Fatal("a connection that failed was pooled")
			}
			if n := srv.reqs.Load(); n != 1 {
				t.Fatalf("%d requests reached the server", n)
			}
			t.Log(err)
		})
	}
}

// TestStaleIdleConn: the server closes a kept-alive connection (without
// saying so) or writes to it while it is idle. The next request must
// succeed on a new connection, and no request may reach the server twice.
func TestStaleIdleConn(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	for _, mode := range []string{"close", "reset", "stray bytes"} {
		t.Run(mode, func(t *testing.T) {
			srv := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
				if _, _, err := s.readRequest(br); err != nil {
					return
				}
				io.WriteString(c, resp)
				time.Sleep(20 * time.Millisecond)
				switch mode {
				case "reset":
					c.(*net.TCPConn).SetLinger(0)
				case "stray bytes":
					io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\n\r\n")
					s.readRequest(br) // counted if it ever came
				}
			})
			tr := newTestTransport(t, Options{})
			for i := range 5 {
				if body := mustDo(t, tr, newReq(t, "POST", srv.url, "x")); body != "ok" {
					t.Fatal(body)
				}
				time.Sleep(100 * time.Millisecond)
				if n := srv.reqs.Load(); n != int32(i+1) {
					t.Fatalf("%d requests served after %d", n, i+1)
				}
			}
			if n := srv.conns.Load(); n != 5 {
				t.Fatalf("%d connections, want 5", n)
			}
		})
	}
}

// TestStaleIdleConnUnchecked: where the idle check cannot look (here: a
// connection that hides its socket), a request on a connection the server
// closed fails, and is not repeated, because it may have reached the
// server. The next one works.
func TestStaleIdleConnUnchecked(t *testing.T) {
	srv := newRawServer(t, scripted("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true))
	tr := newTestTransport(t, Options{})
	var dials atomic.Int32
	tr.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		c, err := tr.dialer.DialContext(ctx, network, addr)
		return struct{ net.Conn }{c}, err
	}
	mustDo(t, tr, newReq(t, "POST", srv.url, "x"))
	time.Sleep(50 * time.Millisecond)
	_, _, err := do(t, tr, newReq(t, "POST", srv.url, "x"))
	if err == nil {
		t.Fatal("a request on a closed connection succeeded")
	}
	t.Log(err)
	if dials.Load() != 1 || srv.reqs.Load() != 1 {
		t.Fatalf("%d dials, %d requests served: the request was retried", dials.Load(), srv.reqs.Load())
	}
	mustDo(t, tr, newReq(t, "POST", srv.url, "x"))
	if srv.reqs.Load() != 2 {
		t.Fatal(srv.reqs.Load())
	}
}

// TestWriteFailure: a write that fails before any byte on a reused
// connection is retried once on a fresh one; any other write failure is
// returned and never retried.
func TestWriteFailure(t *testing.T) {
	tests := []struct {
		name      string
		reused    bool
		written   int32 // bytes written before the failure; <= 0: none
		wantRetry bool
	}{
		{"reused, nothing written", true, 0, true},
		{"reused, part written", true, 10, false},
		{"fresh, nothing written", false, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, scripted("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false))
			tr := newTestTransport(t, Options{})
			var conns []*faultConn
			arm := false
			tr.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := tr.dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				fc := &faultConn{Conn: c}
				fc.failWrite.Store(tc.written)
				if arm {
					fc.armed.Store(true)
					arm = false
				}
				conns = append(conns, fc)
				return fc, nil
			}
			if tc.reused {
				mustDo(t, tr, newReq(t, "POST", srv.url, "x"))
				conns[0].armed.Store(true)
			} else {
				arm = true
			}
			_, body, err := do(t, tr, newReq(t, "POST", srv.url, "payload"))
			if tc.wantRetry {
				if err != nil || body != "ok" {
					t.Fatalf("%q, %v", body, err)
				}
			} else if !errors.Is(err, errInjected) {
				t.Fatalf("got %v, want the write error", err)
			}
			wantConns, wantReqs := 1, int32(0)
			if tc.reused {
				wantReqs = 1
			}
			if tc.wantRetry {
				wantConns, wantReqs = 2, 2
			}
			time.Sleep(50 * time.Millisecond)
			if len(conns) != wantConns || srv.reqs.Load() != wantReqs {
				t.Fatalf("%d connections, %d requests served; want %d, %d", len(conns), srv.reqs.Load(), wantConns, wantReqs)
			}
		})
	}
}

// TestContextCancel: the request's context ends a blocked dial, handshake,
// header read or body read promptly with the context's error, and the
// connection is not pooled.
func TestContextCancel(t *testing.T) {
	tests := []struct {
		name   string
		https  bool
		serve  func(*rawServer, net.Conn, *bufio.Reader)
		inBody bool
	}{
		{name: "TLS handshake", https: true, serve: func(s *rawServer, c net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) }},
		{name: "headers", serve: hang("")},
		{name: "half the headers", serve: hang("HTTP/1.1 200 OK\r\nContent-")},
		{name: "body", serve: hang("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"), inBody: true},
		{name: "chunked body", serve: hang("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"), inBody: true},
		{name: "close-delimited body", serve: hang("HTTP/1.1 200 OK\r\n\r\nabc"), inBody: true},
	}
	for _, tc := range tests {
		for _, how := range []string{"cancel", "deadline"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				srv := newRawServer(t, tc.serve)
				tr := newTestTransport(t, Options{})
				url := srv.url
				if tc.https {
					url = "https://" + srv.addr
				}
				ctx, cancel, want := endingContext(how, 100*time.Millisecond)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader("x"))
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if tc.inBody {
					if err != nil {
						t.Fatal(err)
					}
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if !errors.Is(err, want) {
					t.Fatalf("got %v, want %v", err, want)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Fatalf("took %v", d)
				}
				if tr.idleCount() != 0 {
					t.Fatal("pooled after a cancellation")
				}
			})
		}
	}

	t.Run("already canceled", func(t *testing.T) {
		srv := newRawServer(t, hang(""))
		tr := newTestTransport(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.url, strings.NewReader("x"))
		if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if srv.conns.Load() != 0 {
			t.Fatal("dialed for a canceled request")
		}
	})

	t.Run("canceled after the body", func(t *testing.T) {
		// The context ends after the exchange: the pooled connection
		// must survive it.
		srv := newRawServer(t, scripted("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false))
		tr := newTestTransport(t, Options{})
		for range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.url, strings.NewReader("x"))
			mustDo(t, tr, req)
			cancel()
			time.Sleep(10 * time.Millisecond)
		}
		if n := srv.conns.Load(); n != 1 {
			t.Fatalf("%d connections, want 1", n)
		}
	})
}

// TestBodyCloseConcurrent: Close from another goroutine while Read is
// blocked (database/sql does this on cancellation) ends the Read promptly.
func TestBodyCloseConcurrent(t *testing.T) {
	for _, tc := range []struct{ name, prefix string }{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nabc"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"},
		{"close-delimited", "HTTP/1.1 200 OK\r\n\r\nabc"},
	} {
		for _, useTLS := range []bool{false, true} {
			name := tc.name
			if useTLS {
				name += "/tls"
			}
			t.Run(name, func(t *testing.T) {
				srv := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
					if useTLS {
						tconn := tls.Server(c, testServerTLS(t))
						defer tconn.Close()
						c, br = tconn, bufio.NewReader(tconn)
					}
					hang(tc.prefix)(s, c, br)
				})
				o, url := Options{}, srv.url
				if useTLS {
					o.TLSConfig, url = &tls.Config{InsecureSkipVerify: true}, "https://"+srv.addr
				}
				tr := newTestTransport(t, o)
				resp, err := tr.RoundTrip(newReq(t, "POST", url, "x"))
				if err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 3)
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					t.Fatal(err)
				}
				done := make(chan error)
				go func() {
					_, err := resp.Body.Read(make([]byte, 100))
					done <- err
				}()
				time.Sleep(50 * time.Millisecond)
				start := time.Now()
				if err := resp.Body.Close(); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					if !errors.Is(err, ErrBodyClosed) {
						t.Fatalf("Read: %v", err)
					}
				case <-time.After(2 * time.Second):
					t.Fatal("Read still blocked after Close")
				}
				if d := time.Since(start); d > time.Second {
					t.Fatalf("Close took %v", d)
				}
				resp.Body.Close()
				if _, err := resp.Body.Read(buf); !errors.Is(err, ErrBodyClosed) {
					t.Fatal(err)
				}
				if tr.idleCount() != 0 {
					t.Fatal("pooled")
				}
			})
		}
	}
}
