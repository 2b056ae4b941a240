package neterr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/gohrana/libsql/internal/loopback"
)

func TestDial(t *testing.T) {
	addr, err := loopback.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, refused := (&net.Dialer{}).DialContext(context.Background(), "tcp", addr)
	if refused == nil {
		t.Skip("something listens on the closed port")
	}
	wrapped := fmt.Errorf("failed to WebSocket dial: failed to send handshake request: %w", refused)
	if op := Dial(wrapped); op == nil || op.Op != "dial" {
		t.Fatalf("Dial(%v) = %v", wrapped, op)
	}
	if op := Dial(&net.DNSError{Err: "no such host", Name: "nowhere.invalid"}); op == nil {
		t.Fatal("a name that does not resolve is a failed dial")
	}
	readErr := &net.OpError{Op: "read", Net: "tcp", Err: io.EOF}
	for _, err := range []error{io.EOF, readErr, errors.New("x")} {
		if op := Dial(err); op != nil {
			t.Errorf("Dial(%v) = %v, want nil", err, op)
		}
	}
}

func TestRoot(t *testing.T) {
	inner := io.EOF
	chain := fmt.Errorf("failed to get reader: %w", fmt.Errorf("failed to read frame header: %w", inner))
	if got := Root(chain); got != inner {
		t.Fatalf("Root = %v", got)
	}
	if got := Root(errors.Join(chain, errors.New("other"))); got != inner {
		t.Fatalf("Root of joined = %v", got)
	}
	if got := Root(inner); got != inner {
		t.Fatalf("Root of a root = %v", got)
	}
}

func TestStatusMessage(t *testing.T) {
	tests := []struct {
		body   string
		status int
		want   string
	}{
		{"Unauthorized: `The JWT is invalid`\n", 401, "The JWT is invalid"},
		{"Unauthorized", 401, "Unauthorized"},
		{"Forbidden: `a` and `b`", 403, "`a` and `b`"},
		{"Internal Error", 500, "Internal Error"},
		{"  ", 500, ""},
	}
	for _, tt := range tests {
		if got := StatusMessage(tt.body, tt.status); got != tt.want {
			t.Errorf("StatusMessage(%q, %d) = %q, want %q", tt.body, tt.status, got, tt.want)
		}
	}
}
