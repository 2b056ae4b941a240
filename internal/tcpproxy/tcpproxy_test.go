package tcpproxy

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// server listens on 127.0.0.1 and passes every connection it accepts to
// the test, which closes it.
func server(t *testing.T) (addr string, accepted <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	return ln.Addr().String(), conns
}

// copyBoth forwards both ways unchanged until the server's side ends.
func copyBoth(client, server net.Conn) {
	go func() { _, _ = io.Copy(server, client) }()
	_, _ = io.Copy(client, server)
}

// proxyConn starts a proxy to upstream with handle and connects to it;
// both are closed when the test ends.
func proxyConn(t *testing.T, upstream string, handle func(client, server net.Conn)) (*Proxy, net.Conn) {
	t.Helper()
	p, err := Start(upstream, handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return p, c
}

// TestForward hands the handler the client's connection and one to the
// server, and closes the client's when the handler returns.
func TestForward(t *testing.T) {
	addr, accepted := server(t)
	_, c := proxyConn(t, addr, copyBoth)
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	defer s.Close()
	got := make([]byte, 4)
	if _, err := io.ReadFull(s, got); err != nil || string(got) != "ping" {
		t.Fatalf("the server read %q, %v", got, err)
	}
	if _, err := io.WriteString(s, "pong"); err != nil {
		t.Fatal(err)
	}
	s.Close() // ends copyBoth
	if b, err := io.ReadAll(c); err != nil || string(b) != "pong" {
		t.Errorf("the client read %q, %v; want pong, then the connection closed", b, err)
	}
}

// TestDialFails closes a client whose server cannot be reached, without
// calling the handler.
func TestDialFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, c := proxyConn(t, addr, func(net.Conn, net.Conn) { t.Error("the handler ran without a server") })
	if n, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("read %d bytes, %v; want the connection closed", n, err)
	}
}

// TestClose ends open connections, both ways, and refuses new ones.
func TestClose(t *testing.T) {
	addr, accepted := server(t)
	p, c := proxyConn(t, addr, copyBoth)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	defer s.Close()
	if _, err := io.ReadFull(s, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a connection open")
	}
	if n, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("the client read %d bytes, %v after Close; want the connection closed", n, err)
	}
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := s.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("the server read %d bytes, %v after Close; want the connection closed", n, err)
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		c2.Close()
		t.Error("a new connection was accepted after Close")
	}
}

// isTimeout reports whether err is a deadline's, not the peer's close.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
