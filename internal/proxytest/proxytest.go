// Package proxytest is a forward HTTP proxy for tests: a request in
// absolute form is forwarded, a CONNECT becomes a tunnel; Host, a name
// under ProxiedDomain, resolves here alone (a server only the proxy can
// reach), and a proxy with a user asks for Basic Proxy-Authorization.
package proxytest

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a running forward proxy on 127.0.0.1.
type Proxy struct {
	URL      *url.URL     // http://127.0.0.1:port, with the user if any
	Host     string       // host:port the clients ask for: the server's, known to the proxy alone
	Forwards atomic.Int32 // requests forwarded
	Connects atomic.Int32 // tunnels dug
	Refused  atomic.Int32 // requests refused for want of credentials

	server         string // the address Host stands for
	user, password string
	rt             *http.Transport
}

// ProxiedDomain is the domain of Host: no resolver knows it, so a client
// that goes around the proxy fails to look it up, and NO_PROXY can name it.
const ProxiedDomain = "proxied.test"

// New starts a proxy to the server at server (host:port), closed at the
// test's end; the clients ask for Host, sqld.proxied.test on the server's
// port. With a user, it wants Proxy-Authorization for user:password, which
// URL carries.
func New(t testing.TB, server, user, password string) *Proxy {
	t.Helper()
	_, port, err := net.SplitHostPort(server)
	if err != nil {
		t.Fatalf("proxytest: server %q: %v", server, err)
	}
	p := &Proxy{Host: net.JoinHostPort("sqld."+ProxiedDomain, port), server: server, user: user, password: password}
	d := &net.Dialer{Timeout: 5 * time.Second}
	p.rt = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, p.resolve(addr))
		},
		DisableKeepAlives: true,
	}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		p.rt.CloseIdleConnections()
	})
	u, _ := url.Parse(srv.URL)
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	p.URL = u
	return p
}

// resolve maps Host to the server's address.
func (p *Proxy) resolve(addr string) string {
	if addr == p.Host {
		return p.server
	}
	return addr
}

func (p *Proxy) authorized(r *http.Request) bool {
	if p.user == "" {
		return true
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.password))
	return r.Header.Get("Proxy-Authorization") == want
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		p.Refused.Add(1)
		w.Header().Set("Proxy-Authenticate", `Basic realm="proxytest"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	p.Forwards.Add(1)
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush() // a cursor's rows go on as they come
			}
		}
		if err != nil {
			return
		}
	}
}

// tunnel answers CONNECT: 200, then bytes both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target, err := net.DialTimeout("tcp", p.resolve(r.Host), 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.Connects.Add(1)
	hj, ok := w.(http.Hijacker)
	if !ok {
		target.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		target.Close()
		return
	}
	_, _ = client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		if n := brw.Reader.Buffered(); n > 0 {
			b, _ := brw.Reader.Peek(n)
			_, _ = target.Write(b)
		}
		_, _ = io.Copy(target, client)
		target.Close()
	}()
	_, _ = io.Copy(client, target)
	client.Close()
}
