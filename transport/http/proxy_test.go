package http

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/proxytest"
	"github.com/gohrana/libsql/transport"
)

// Requests go through a proxy as net/http sends them, to a host only the
// proxy resolves: forwarded to an http server, tunnelled (CONNECT) to an
// https one, with the proxy URL's credentials; without the proxy the host
// does not resolve.
func TestProxy(t *testing.T) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "https"}[secure]
		t.Run(name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				_, _ = io.WriteString(w, okClose)
			})
			srv := httptest.NewUnstartedServer(h)
			if secure {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			p := proxytest.New(t, srv.Listener.Addr().String(), "u", "p w")
			o := transport.Options{URL: name + "://" + p.Host, Codec: direct.Codec}
			if secure {
				roots := x509.NewCertPool()
				roots.AddCert(srv.Certificate())
				o.TLSConfig = &tls.Config{RootCAs: roots, ServerName: "example.com"}
			}
			withProxy := func(u *url.URL) transport.Options {
				o := o
				if u != nil {
					o.Proxy = http.ProxyURL(u)
				}
				return o
			}
			c := newTestClient(t, withProxy(p.URL))
			for range 2 {
				if err := sendClose(context.Background(), c.NewStream()); err != nil {
					t.Fatal(err)
				}
			}
			if secure && (p.Connects.Load() != 1 || p.Forwards.Load() != 0) || !secure && p.Forwards.Load() != 2 {
				t.Fatalf("%d tunnels, %d forwards", p.Connects.Load(), p.Forwards.Load())
			}
			noAuth := *p.URL
			noAuth.User = nil
			err := sendClose(context.Background(), newTestClient(t, withProxy(&noAuth)).NewStream())
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "proxy authentication required") {
				t.Fatalf("without credentials: %v", err)
			}
			err = sendClose(context.Background(), newTestClient(t, withProxy(nil)).NewStream())
			if err == nil || !strings.Contains(err.Error(), "no such host") && !strings.Contains(err.Error(), "lookup") {
				t.Fatalf("without the proxy: %v", err)
			}
		})
	}
}

// A proxy that does not apply to the URL (NO_PROXY, or none) leaves the
// requests to the transport's own client.
func TestProxyNotApplied(t *testing.T) {
	c := newTestClient(t, transport.Options{URL: "http://127.0.0.1:1", Codec: direct.Codec,
		Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
	if c.own == nil || c.proxied != nil {
		t.Fatal("a proxy that applies to nothing replaced the client's own HTTP client")
	}
}
