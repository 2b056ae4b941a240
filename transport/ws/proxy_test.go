package ws

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gohrana/libsql/internal/proxytest"
)

// Sockets go through a proxy by CONNECT, ws and wss alike, to a host only
// the proxy resolves, with the proxy URL's credentials; a proxy that
// refuses says so; without the proxy the host does not resolve.
func TestProxy(t *testing.T) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "ws", true: "wss"}[secure]
		t.Run(name, func(t *testing.T) {
			f := startFake(t, secure)
			p := proxytest.New(t, f.srv.Listener.Addr().String(), "u", "p w")
			target := name + "://" + p.Host
			mod := func(proxyURL *url.URL) func(o *options) {
				return func(o *options) {
					o.URL = target
					if proxyURL != nil {
						o.Proxy = http.ProxyURL(proxyURL)
					}
					if secure {
						roots := x509.NewCertPool()
						roots.AddCert(f.srv.Certificate())
						o.TLSConfig = &tls.Config{RootCAs: roots, ServerName: "example.com"}
					}
				}
			}
			got, err := execute(context.Background(), newFakeClient(t, f, mod(p.URL)).NewStream(), "x")
			if err != nil || got[0] != "1:x" {
				t.Fatalf("through the proxy: %q, %v", got, err)
			}
			if p.Connects.Load() != 1 || p.Forwards.Load() != 0 {
				t.Fatalf("%d tunnels and %d forwards, want 1 tunnel", p.Connects.Load(), p.Forwards.Load())
			}
			noAuth := *p.URL
			noAuth.User = nil
			_, err = execute(context.Background(), newFakeClient(t, f, mod(&noAuth)).NewStream(), "x")
			if err == nil || !strings.Contains(err.Error(), "407") || !isSafe(err) {
				t.Fatalf("without credentials: %v", err)
			}
			if _, err := execute(context.Background(), newFakeClient(t, f, mod(nil)).NewStream(), "x"); err == nil || !isSafe(err) {
				t.Fatalf("without the proxy: %v", err)
			}
		})
	}
}

// The environment's HTTPS_PROXY is asked about the https URL of a wss
// server, HTTP_PROXY about the http URL of a ws one.
func TestProxyFor(t *testing.T) {
	seen := map[string]bool{}
	ask := func(r *http.Request) (*url.URL, error) {
		seen[r.URL.Scheme+"://"+r.URL.Host] = true
		return nil, nil
	}
	for _, u := range []string{"ws://a:1/", "wss://b:2/"} {
		pu, _ := url.Parse(u)
		if p, err := proxyFor(ask, pu); p != nil || err != nil {
			t.Fatal(p, err)
		}
	}
	if !seen["http://a:1"] || !seen["https://b:2"] {
		t.Fatalf("asked about %v", seen)
	}
}
