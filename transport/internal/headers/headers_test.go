package headers

import (
	"errors"
	"net/http"
	"testing"
)

func TestSet(t *testing.T) {
	extra := http.Header{"X-Turso-Encryption-Key": {"key-0123456789"}, "X-Flag": {"1"}}
	s := New("tok-secret-value", extra, "tenant")
	extra.Set("X-Later", "added after New") // New copied extra
	if s.Header.Get("X-Later") != "" {
		t.Fatal("the Set shares the caller's header")
	}
	if s.Header.Get(Namespace) != "tenant" || s.Header.Get(Namespace64) != "dGVuYW50" {
		t.Fatalf("namespace headers: %v", s.Header)
	}
	got := s.Redact("echo tok-secret-value key-0123456789 1 tenant")
	if want := "echo [REDACTED] [REDACTED] 1 tenant"; got != want {
		t.Fatalf("Redact = %q, want %q (short values and the namespace are not secrets)", got, want)
	}
	cause := errors.New("proxy said tok-secret-value")
	if err := s.Scrub(cause); err.Error() != "proxy said [REDACTED]" {
		t.Fatalf("Scrub = %v", err)
	}
	plain := errors.New("nothing secret")
	if err := s.Scrub(plain); err != plain {
		t.Fatal("Scrub replaced an error that holds no secret")
	}
	if empty := New("", nil, ""); empty.Header != nil || empty.Scrub(cause) != cause {
		t.Fatal("a Set of nothing sends and redacts nothing")
	}
}
