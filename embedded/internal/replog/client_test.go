package replog

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
)

// replay is a server that answers each method with a recorded body or
// recorded status headers, and keeps the headers of the last request.
type replay struct {
	t       *testing.T
	answers map[string]string // method -> testdata file (.body or .headers)
	hold    bool              // keep BatchLogEntries answers open, as sqld does
	last    http.Header
}

func (rp *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rp.last = r.Header.Clone()
	name := rp.answers[strings.TrimPrefix(r.URL.Path, service)]
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		http.Error(w, "no answer", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", grpcweb.ContentType)
	if strings.HasSuffix(name, ".headers") {
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if k, v, ok := strings.Cut(line, ": "); ok {
				w.Header().Set(k, v)
			}
		}
		return
	}
	w.Write(b)
	if rp.hold && strings.HasSuffix(r.URL.Path, "BatchLogEntries") {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func newReplay(t *testing.T, answers map[string]string) (*replay, *Client) {
	rp := &replay{t: t, answers: answers, hold: true}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	c := NewClient(Config{URL: srv.URL + "/", AuthToken: "tok", Namespace: "ns1", Client: srv.Client()})
	return rp, c
}

func TestClientSession(t *testing.T) {
	rp, c := newReplay(t, map[string]string{
		"Hello":           "hello.body",
		"BatchLogEntries": "batch.body",
		"Snapshot":        "snapshot.body",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := c.Hello(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rp.last.Get("X-Authorization"); got != "Bearer tok" {
		t.Errorf("x-authorization %q", got)
	}
	if got := rp.last.Get("X-Namespace-Bin"); got != base64.RawStdEncoding.EncodeToString([]byte("ns1")) {
		t.Errorf("x-namespace-bin %q", got)
	}
	if rp.last.Get("X-Session-Token") != "" {
		t.Error("hello sent a session token")
	}

	// The answer never ends; BatchLogEntries returns after its message.
	msg, err := c.BatchLogEntries(ctx, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rp.last.Get("X-Session-Token"); got != string(h.SessionToken) {
		t.Errorf("x-session-token %q, want %q", got, h.SessionToken)
	}
	n := 0
	if err := FramesEach(msg, func([]byte) error { n++; return nil }); err != nil || n != 4 {
		t.Errorf("%d frames, %v", n, err)
	}

	n = 0
	if err := c.Snapshot(ctx, 0, func([]byte) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("snapshot: %d frames, %v", n, err)
	}
	stop := errors.New("stop")
	if err := c.Snapshot(ctx, 0, func([]byte) error { return stop }); err != stop {
		t.Errorf("snapshot callback error: %v", err)
	}

	c.ForgetSession()
	if _, err := c.BatchLogEntries(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	if rp.last.Get("X-Session-Token") != "" {
		t.Error("a token after ForgetSession")
	}
}

func TestClientStatus(t *testing.T) {
	tests := []struct {
		file string
		want error
		code grpcweb.Code
	}{
		{"no_hello.headers", ErrNoHello, grpcweb.FailedPrecondition},
		{"need_snapshot.headers", ErrNeedSnapshot, grpcweb.FailedPrecondition},
		{"snapshot_pending.headers", ErrSnapshotPending, grpcweb.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, c := newReplay(t, map[string]string{"BatchLogEntries": tt.file})
			_, err := c.BatchLogEntries(context.Background(), 0, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			var e *Error
			for _, other := range []error{ErrNoHello, ErrNeedSnapshot, ErrSnapshotPending} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
			if !errors.As(err, &e) || e.Unreachable() || e.Status.Code != tt.code {
				t.Errorf("error %#v", err)
			}
		})
	}
}

func TestClientFailures(t *testing.T) {
	_, c := newReplay(t, map[string]string{})
	_, err := c.Hello(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != http.StatusNotFound {
		t.Errorf("unknown method: %v", err)
	}
	if strings.Contains(err.Error(), "tok") {
		t.Errorf("error text has the token: %v", err)
	}

	dead := NewClient(Config{URL: "http://127.0.0.1:1"})
	_, err = dead.Hello(context.Background())
	if !errors.As(err, &e) || !e.Unreachable() {
		t.Errorf("refused connection: %v", err)
	}

	// A body cut inside a message is a clear error, not a hang.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", grpcweb.ContentType)
		w.Write([]byte{0, 0, 0, 0, 9, 1, 2})
	}))
	defer srv.Close()
	c = NewClient(Config{URL: srv.URL, Client: srv.Client()})
	if _, err := c.Hello(context.Background()); !errors.As(err, &e) {
		t.Errorf("cut body: %v", err)
	}
}
