package harness

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// CountingProxy is a reverse proxy on 127.0.0.1 in front of a server that
// counts the requests it passes, streaming answers as they come (a
// cursor's rows, a long poll).
type CountingProxy struct {
	srv *httptest.Server
	n   atomic.Int64
}

// NewCountingProxy starts a CountingProxy in front of base (http://host:port).
func NewCountingProxy(base string) (*CountingProxy, error) {
	target, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	p := &CountingProxy{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	return p, nil
}

// URL is the proxy's base URL.
func (p *CountingProxy) URL() string { return p.srv.URL }

// Requests returns the requests passed since the start or the last Reset.
func (p *CountingProxy) Requests() int64 { return p.n.Load() }

// Reset starts the count again from zero.
func (p *CountingProxy) Reset() { p.n.Store(0) }

// Close stops the proxy.
func (p *CountingProxy) Close() { p.srv.Close() }
