// Package proxy tunnels a connection through an HTTP proxy with CONNECT
// (RFC 9110 §9.3.6), as browsers route WebSocket through a proxy: the
// WebSocket transport dials its sockets through it. The HTTP transport
// leaves proxies to net/http.
package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Error is a proxy's refusal of a CONNECT: its status and reason.
type Error struct {
	Proxy  string // the proxy's host:port
	Status string // "403 Forbidden"
}

func (e *Error) Error() string {
	return fmt.Sprintf("the proxy %s refused to connect: %s", e.Proxy, e.Status)
}

// Dial connects to the proxy at proxyURL (over TLS if its scheme is
// https, verified with tlsConf's roots) and asks it to CONNECT to addr
// (host:port), with the URL's user information as Basic
// Proxy-Authorization. The connection it returns carries the bytes to and
// from addr; a refusal is an *Error. ctx bounds the whole exchange.
func Dial(ctx context.Context, d *net.Dialer, proxyURL *url.URL, addr string, tlsConf *tls.Config) (net.Conn, error) {
	paddr := proxyURL.Host
	if proxyURL.Port() == "" {
		port := "80"
		if proxyURL.Scheme == "https" {
			port = "443"
		}
		paddr = net.JoinHostPort(proxyURL.Hostname(), port)
	}
	conn, err := d.DialContext(ctx, "tcp", paddr)
	if err != nil {
		return nil, err
	}
	if proxyURL.Scheme == "https" {
		cfg := &tls.Config{}
		if tlsConf != nil {
			cfg = tlsConf.Clone()
		}
		cfg.ServerName = proxyURL.Hostname()
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS to the proxy %s: %w", paddr, err)
		}
		conn = tc
	}
	// The exchange is bounded by ctx: a deadline of its own, or a close
	// when ctx ends first.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	tunnel, err := connect(conn, proxyURL, addr, paddr)
	if !stop() || err != nil {
		conn.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return tunnel, nil
}

// connect sends the CONNECT request on conn and reads the proxy's answer.
func connect(conn net.Conn, proxyURL *url.URL, addr, paddr string) (net.Conn, error) {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if u := proxyURL.User; u != nil {
		pw, _ := u.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("the proxy %s answered CONNECT with no HTTP response: %w", paddr, err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &Error{Proxy: paddr, Status: strings.TrimSpace(resp.Status)}
	}
	if br.Buffered() > 0 {
		// The server's first bytes came with the answer: read them first.
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn reads what a reader buffered before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
