package loopback

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestRefusedAddr: an address on 127.0.0.1 whose dial is refused.
func TestRefusedAddr(t *testing.T) {
	addr, err := RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	if host, port, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("RefusedAddr() = %q (%v)", addr, err)
	}
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Skip("something took the closed port")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want ECONNREFUSED", addr, err)
	}
}
