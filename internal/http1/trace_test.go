package http1

import (
	"net/http"
	"net/http/httptrace"
	"testing"

	"github.com/gohrana/libsql/internal/loopback"
)

// TestGotConn: the GotConn hook fires once per request as soon as a TCP
// connection is in hand (Reused for an idle one, and before a new one's
// TLS handshake, so that a handshake failure counts as "may have left"),
// and never when no connection was made.
func TestGotConn(t *testing.T) {
	withTrace := func(req *http.Request, got *[]httptrace.GotConnInfo) *http.Request {
		tr := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { *got = append(*got, i) }}
		return req.WithContext(httptrace.WithClientTrace(req.Context(), tr))
	}
	srv, _ := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {})
	tr := newTestTransport(t, Options{})
	var got []httptrace.GotConnInfo
	mustDo(t, tr, withTrace(newReq(t, "GET", srv.URL, ""), &got))
	mustDo(t, tr, withTrace(newReq(t, "GET", srv.URL, ""), &got))
	if len(got) != 2 || got[0].Reused || !got[1].Reused || got[0].Conn == nil {
		t.Fatalf("GotConn calls %+v, want a new connection then the same one reused", got)
	}

	addr, err := loopback.RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	if _, _, err := do(t, tr, withTrace(newReq(t, "GET", "http://"+addr, ""), &got)); err == nil || len(got) != 0 {
		t.Fatalf("refused dial: err %v, GotConn calls %d", err, len(got))
	}

	// A plain HTTP server behind an https URL: the handshake fails after
	// the TCP connection was made.
	got = nil
	if _, _, err := do(t, tr, withTrace(newReq(t, "GET", "https"+srv.URL[len("http"):], ""), &got)); err == nil || len(got) != 1 {
		t.Fatalf("failed handshake: err %v, GotConn calls %d", err, len(got))
	}
}
