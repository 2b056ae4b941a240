package http1

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContextCancelConnect: the context ends a TCP connect that hangs (a
// listener on 127.0.0.1 whose accept queue is full drops the SYNs), with a
// dial error, which the driver reports as not sent.
func TestContextCancelConnect(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skip(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Skip(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the accept queue until a connect hangs.
	full := false
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			full = true
			break
		}
		defer c.Close()
	}
	if !full {
		t.Skip("connects to a full listener do not hang here")
	}
	tr := newTestTransport(t, Options{})
	for _, how := range []string{"cancel", "deadline"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel, want := endingContext(how, 100*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/", strings.NewReader("x"))
			start := time.Now()
			_, err := tr.RoundTrip(req)
			var op *net.OpError
			if !errors.Is(err, want) || !errors.As(err, &op) || op.Op != "dial" {
				t.Fatalf("got %#v, want a dial error with %v", err, want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}
