package http

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/transport"
)

// A refusal that ran nothing and asks to come back later (429; 503 with
// Retry-After) is sent again after the wait asked, within the context;
// anything else, or a wait over the cap or past the deadline, is returned
// at once (PROTOCOL.md §9.3).
func TestRetryAfter(t *testing.T) {
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		status   int
		header   string // Retry-After; "" for none
		refusals int32  // answers refused before a 200
		deadline time.Duration
		requests int32
		ok       bool
	}{
		{"429 without Retry-After", 429, "", 1, 0, 2, true},
		{"429 Retry-After 0", 429, "0", 2, 0, 3, true},
		{"429 Retry-After date", 429, past, 1, 0, 2, true},
		{"503 Retry-After 0", 503, "0", 1, 0, 2, true},
		{"503 without Retry-After", 503, "", 1, 0, 1, false},
		{"500", 500, "0", 1, 0, 1, false},
		{"wait over the cap", 429, "60", 1, 0, 1, false},
		{"wait past the deadline", 429, "1", 1, 200 * time.Millisecond, 1, false},
		{"bad Retry-After", 429, "soon", 1, 0, 1, false},
		{"always refused", 429, "0", 100, 0, maxRetries + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			var batons []string
			srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				batons = append(batons, string(body))
				if n.Add(1) <= tt.refusals {
					if tt.header != "" {
						w.Header().Set("Retry-After", tt.header)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.status)
					_, _ = io.WriteString(w, `{"error":"busy"}`)
					return
				}
				_, _ = io.WriteString(w, okClose)
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
			s := c.newStream()
			s.baton = "B7" // a refusal keeps the stream: the retry carries the same baton
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			err := sendClose(ctx, s)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			var e *transport.Error
			if err != nil && (!errors.As(err, &e) || e.HTTPStatus != tt.status || !strings.Contains(e.Message, "busy")) {
				t.Fatalf("got %#v", err)
			}
			if n.Load() != tt.requests {
				t.Fatalf("%d requests, want %d", n.Load(), tt.requests)
			}
			for i, b := range batons {
				if !strings.Contains(b, `"baton":"B7"`) {
					t.Fatalf("request %d: %s", i+1, b)
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"Sat, 05 Dec 2026 03:00:30 GMT", 30 * time.Second, true},
		{"Sat, 05 Dec 2026 02:00:00 GMT", 0, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
	} {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
