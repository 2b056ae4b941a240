package delayproxy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers every connection with what it receives, then closes
// it once the client has half-closed.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// startProxy starts a proxy to upstream that adds rtt, closed when the
// test ends.
func startProxy(t *testing.T, upstream string, rtt time.Duration) *Proxy {
	t.Helper()
	p, err := New(upstream, rtt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// dial connects to the proxy p; the connection is closed when the test
// ends.
func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRoundTrip sends a short message through the proxy to an echo
// server: the answer must be intact and come no sooner than the round
// trip, half of it per direction.
func TestRoundTrip(t *testing.T) {
	const rtt = 100 * time.Millisecond
	p := startProxy(t, echoServer(t), rtt)
	c := dial(t, p)
	for i := range 3 { // the first on a new connection, then on the same one
		msg := []byte("ping " + string(rune('a'+i)))
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < rtt {
			t.Errorf("round trip %d took %v, want at least %v", i, took, rtt)
		}
		if !bytes.Equal(got, msg) {
			t.Errorf("round trip %d: got %q, want %q", i, got, msg)
		}
	}
}

// TestBulk echoes 4 MiB, far more than one read: the bytes arrive intact
// and in order, the half-close gets through (the echo server closes only
// after it), and the round trip is paid once, not once per read.
func TestBulk(t *testing.T) {
	const rtt = 200 * time.Millisecond
	p := startProxy(t, echoServer(t), rtt)
	c := dial(t, p)
	want := make([]byte, 4<<20)
	for i := range want {
		want[i] = byte(rand.Uint32())
	}
	start := time.Now()
	go func() {
		_, _ = c.Write(want)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c) // until the echo server's close, passed on
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, not the %d sent", len(got), len(want))
	}
	if elapsed < rtt {
		t.Errorf("took %v, want at least %v", elapsed, rtt)
	}
	// 4 MiB are at least 128 reads of 32 KiB each way: delays added up
	// would take over 25 s.
	if elapsed > 5*time.Second {
		t.Errorf("took %v: the delay adds up over reads", elapsed)
	}
}

// echo writes msg on c and reads its echo back.
func echo(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, len(msg))); err != nil {
		t.Fatal(err)
	}
}

// TestCounts counts connections, the request lines that go up and the
// bytes both ways, and Minus gives what one more connection added, as the
// benchmarks measure one run. The proxy has counted what it read before
// the echo comes back, so the counts are exact.
func TestCounts(t *testing.T) {
	p := startProxy(t, echoServer(t), 0)
	if u := p.URL(); u != "http://"+p.Addr() || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("URL %q, Addr %q", u, p.Addr())
	}
	two := "POST /v2/pipeline HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\n\r\n"
	echo(t, dial(t, p), two)
	if got, want := p.Counts(), (Counts{Conns: 1, Requests: 2, Bytes: 2 * int64(len(two))}); got != want {
		t.Errorf("after one connection: %+v, want %+v", got, want)
	}
	before := p.Counts()
	one := "GET /v2 HTTP/1.1\r\n\r\n"
	echo(t, dial(t, p), one)
	if got, want := p.Counts().Minus(before), (Counts{Conns: 1, Requests: 1, Bytes: 2 * int64(len(one))}); got != want {
		t.Errorf("the second connection: %+v, want %+v", got, want)
	}
}

// TestCountRequests counts the request lines that begin in one read: at
// its start or after a newline, never in the middle of a line.
func TestCountRequests(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"POST /v2/pipeline HTTP/1.1\r\n", 1},
		{"GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\n\r\n{}POST /c", 2},
		{"body\nGET /x HTTP/1.1\r\n", 1},
		{`{"sql":"POST / and GET /"}`, 0},
		{"PUT /x HTTP/1.1\r\n", 0},
	} {
		if got := countRequests([]byte(tt.in)); got != tt.want {
			t.Errorf("countRequests(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
