package latency

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
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

func startProxy(t *testing.T, target string, delay time.Duration) *Proxy {
	t.Helper()
	p, err := Start(target, delay)
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
// server: the answer must be intact and come no sooner than twice the
// delay, once per direction.
func TestRoundTrip(t *testing.T) {
	const delay = 50 * time.Millisecond
	p := startProxy(t, echoServer(t), delay)
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
		if rtt := time.Since(start); rtt < 2*delay {
			t.Errorf("round trip %d took %v, want at least %v", i, rtt, 2*delay)
		}
		if !bytes.Equal(got, msg) {
			t.Errorf("round trip %d: got %q, want %q", i, got, msg)
		}
	}
}

// TestBulk echoes 4 MiB, far more than one read: the bytes arrive intact
// and in order, the half-close gets through (the echo server closes only
// after it), and the delay is paid once per direction, not once per read.
func TestBulk(t *testing.T) {
	const delay = 100 * time.Millisecond
	p := startProxy(t, echoServer(t), delay)
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
	if elapsed < 2*delay {
		t.Errorf("took %v, want at least %v", elapsed, 2*delay)
	}
	// 4 MiB are at least 128 reads of 32 KiB each way: delays added up
	// would take over 25 s.
	if elapsed > 5*time.Second {
		t.Errorf("took %v: the delay adds up over reads", elapsed)
	}
}

// TestClose ends open connections and refuses new ones.
func TestClose(t *testing.T) {
	p, err := Start(echoServer(t), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a connection open")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes after Close, want the connection closed", n)
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		c2.Close()
		t.Error("a new connection was accepted after Close")
	}
}
