// Package http1 is the driver's lean HTTP/1.1 client: an http.RoundTripper
// that does the whole exchange (dial, write, read the headers and later the
// body) on the caller's goroutine, without net/http's per-connection
// goroutines and the hand-offs between them. docs/dev/PERF.md ("The HTTP/1.1
// client") has the measurement that justifies it.
//
// It speaks HTTP/1.1 over TCP or TLS (ALPN "http/1.1") with a LIFO pool of
// idle keep-alive connections per scheme+host:port, detects stale idle
// connections before reuse without blocking (on Linux and the BSDs), reads
// Content-Length, chunked and close-delimited bodies, decompresses gzip as
// http.Transport does (Options.Compress, when the caller did not set
// Accept-Encoding), honours the request's context at every step, retries
// once on a fresh connection when writing to a reused idle one failed before
// any byte was written, and calls httptrace's GotConn (see dialConn).
//
// It does not do proxies (the driver wants none), HTTP/2, redirects,
// informational responses other than skipping them, request bodies of
// unknown length, trailers (read and discarded), user info in URLs or
// cookies. It starts no goroutines: idle connections are checked and expired
// when the pool is next used.
package http1

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"time"
)

// Defaults for zero Options fields.
const (
	DefaultMaxIdleConnsPerHost = 64
	DefaultIdleConnTimeout     = 90 * time.Second
	DefaultDialTimeout         = 10 * time.Second
	DefaultKeepAlive           = 30 * time.Second
)

// Limits on a response's header section.
const (
	// MaxHeaderBytes bounds the status line and header lines of a response
	// (and the trailer section of a chunked body), CRLFs included.
	MaxHeaderBytes = 64 << 10
	// MaxHeaders bounds the number of header (or trailer) lines.
	MaxHeaders = 256
	// maxInformational bounds the 1xx responses skipped before the real one.
	maxInformational = 5
)

// readBufSize is the size of each connection's buffered reader; it also
// bounds one header line.
const readBufSize = 32 << 10

// maxKeptWriteBuf is the largest write buffer a connection keeps between
// requests; a larger one (a big request body) is dropped after use.
const maxKeptWriteBuf = 64 << 10

// Options configure a Transport.
type Options struct {
	// TLSConfig is used for https connections; it is cloned, ServerName is
	// set from the URL's host if empty and NextProtos is ["http/1.1"].
	TLSConfig *tls.Config
	// MaxIdleConnsPerHost bounds the idle connections kept per
	// scheme+host:port; 0 means DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
	// IdleConnTimeout is how long an idle connection may be reused; 0 means
	// DefaultIdleConnTimeout.
	IdleConnTimeout time.Duration
	// DialTimeout bounds the TCP connect and, separately, the TLS handshake;
	// 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// KeepAlive is the TCP keep-alive period; 0 means DefaultKeepAlive,
	// negative disables keep-alive probes.
	KeepAlive time.Duration
	// Compress asks for gzip ("Accept-Encoding: gzip") when the request has
	// no Accept-Encoding header, and then transparently decompresses a gzip
	// response, like http.Transport with DisableCompression false.
	Compress bool
}

// Transport is an HTTP/1.1 http.RoundTripper. It is safe for concurrent
// use. Create it with New.
type Transport struct {
	opts   Options
	dialer net.Dialer
	// dial makes the TCP connection; tests replace it.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	idle    map[poolKey][]*conn // newest last
	tlsConf map[poolKey]*tls.Config
}

// poolKey identifies the connections that may serve a request.
type poolKey struct {
	https bool
	addr  string // host:port
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport for the options.
func New(o Options) *Transport {
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	t := &Transport{
		opts:    o,
		dialer:  net.Dialer{Timeout: o.DialTimeout, KeepAlive: o.KeepAlive},
		idle:    make(map[poolKey][]*conn),
		tlsConf: make(map[poolKey]*tls.Config),
	}
	t.dial = t.dialer.DialContext
	return t
}

// ProtocolError is a response that breaks HTTP/1.1 or goes over one of the
// package's limits. Err is ErrMalformed, ErrHeaderTooLarge or
// ErrUnsupported, for errors.Is.
type ProtocolError struct {
	Err    error
	Detail string
}

func (e *ProtocolError) Error() string {
	if e.Detail == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Detail
}

// Unwrap returns the error's class.
func (e *ProtocolError) Unwrap() error { return e.Err }

// The classes of ProtocolError.
var (
	ErrMalformed      = errors.New("malformed HTTP response")
	ErrHeaderTooLarge = errors.New("HTTP response header section too large")
	ErrUnsupported    = errors.New("unsupported HTTP response")
)

// ErrBodyClosed is returned by a response body's Read after its Close.
var ErrBodyClosed = errors.New("http1: read on closed response body")

func malformed(detail string) error { return &ProtocolError{Err: ErrMalformed, Detail: detail} }

// RoundTrip sends the request and reads the response's status and headers;
// the body is read through resp.Body. See the package documentation for
// what is supported.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := requestKey(req)
	if err != nil {
		closeReqBody(req)
		return nil, err
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeReqBody(req)
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	pc := t.getIdle(key)
	if pc == nil {
		if pc, err = t.dialConn(ctx, key, req.URL.Hostname(), trace); err != nil {
			closeReqBody(req)
			return nil, err
		}
	} else if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: pc.c, Reused: true, WasIdle: true, IdleTime: time.Since(pc.idleAt)})
	}
	gz, closeAfter, err := pc.encodeRequest(req, t.opts.Compress)
	if err != nil {
		t.putIdle(pc) // nothing was written
		return nil, err
	}
	pc.watch(ctx)
	n, err := pc.c.Write(pc.wbuf)
	if err != nil && n == 0 && pc.reused && ctx.Err() == nil {
		// A reused connection the server had already closed (or reset):
		// nothing reached it, so the request may go on a fresh one.
		fresh, derr := t.dialConn(ctx, key, req.URL.Hostname(), trace)
		if derr != nil {
			pc.shut()
			return nil, derr
		}
		fresh.wbuf, pc.wbuf = pc.wbuf, nil
		pc.shut()
		pc = fresh
		pc.watch(ctx)
		_, err = pc.c.Write(pc.wbuf)
	}
	if cap(pc.wbuf) > maxKeptWriteBuf {
		pc.wbuf = nil
	}
	if err != nil {
		pc.shut()
		return nil, ctxErr(ctx, err)
	}
	resp, err := pc.readResponse(req, gz, closeAfter)
	if err != nil {
		pc.shut()
		return nil, ctxErr(ctx, err)
	}
	return resp, nil
}

// ctxErr reports a failure caused by the context's end as the context's
// error.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// requestKey checks the request's URL and returns its pool key.
func requestKey(req *http.Request) (poolKey, error) {
	u := req.URL
	if u == nil {
		return poolKey{}, errors.New("http1: request has no URL")
	}
	var key poolKey
	var port string
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		key.https, port = true, "443"
	default:
		return poolKey{}, fmt.Errorf("http1: unsupported URL scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return poolKey{}, errors.New("http1: URL has no host")
	}
	if u.Port() != "" {
		key.addr = u.Host
	} else {
		key.addr = net.JoinHostPort(u.Hostname(), port)
	}
	return key, nil
}

// dialConn opens a new connection for key, with TLS for https. Of trace it
// calls GotConn as soon as the TCP connection exists, before the TLS
// handshake (unlike net/http, which calls it after): a caller that takes
// GotConn to mean "the request may have left" is then never told a request
// certainly stayed home when it reached a server, even one that is not
// what it seems.
func (t *Transport) dialConn(ctx context.Context, key poolKey, host string, trace *httptrace.ClientTrace) (*conn, error) {
	raw, err := t.dial(ctx, "tcp", key.addr)
	if err != nil {
		// A dial cut short by the context's deadline fails as an i/o
		// timeout; say which deadline it was, keeping the *net.OpError
		// that tells the caller nothing was sent.
		// (The dialer's deadline may fire a moment before the context's
		// timer.)
		cerr := ctx.Err()
		if d, ok := ctx.Deadline(); ok && cerr == nil && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(d) {
			cerr = context.DeadlineExceeded
		}
		var op *net.OpError
		if cerr != nil && !errors.Is(err, cerr) && errors.As(err, &op) {
			e := *op
			e.Err = cerr
			return nil, &e
		}
		return nil, err
	}
	pc := &conn{t: t, key: key, raw: raw, c: raw}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: raw})
	}
	if key.https {
		tc := tls.Client(raw, t.tlsConfig(key, host))
		hctx, cancel := context.WithTimeout(ctx, t.opts.DialTimeout)
		err := tc.HandshakeContext(hctx)
		timedOut := hctx.Err() != nil
		cancel()
		if err != nil {
			_ = raw.Close()
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			if timedOut {
				return nil, fmt.Errorf("TLS handshake timed out after %v: %w", t.opts.DialTimeout, err)
			}
			return nil, err
		}
		pc.c = tc
	}
	pc.initReader()
	pc.initAlive()
	pc.abortFn = pc.abort
	return pc, nil
}

// tlsConfig returns the TLS configuration for key, made once per key.
func (t *Transport) tlsConfig(key poolKey, host string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg := t.tlsConf[key]; cfg != nil {
		return cfg
	}
	var cfg *tls.Config
	if t.opts.TLSConfig != nil {
		cfg = t.opts.TLSConfig.Clone()
	} else {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	t.tlsConf[key] = cfg
	return cfg
}

// getIdle takes the newest usable idle connection for key, closing the
// expired and dead ones it meets.
func (t *Transport) getIdle(key poolKey) *conn {
	for {
		t.mu.Lock()
		list := t.idle[key]
		if len(list) == 0 {
			t.mu.Unlock()
			return nil
		}
		pc := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		t.mu.Unlock()
		if time.Since(pc.idleAt) < t.opts.IdleConnTimeout && pc.alive() {
			return pc
		}
		pc.closeIdle()
	}
}

// putIdle adds pc to its pool, evicting the oldest idle connection when the
// pool is full and dropping expired ones.
func (t *Transport) putIdle(pc *conn) {
	now := time.Now()
	pc.idleAt = now
	pc.reused = true
	var evict []*conn
	t.mu.Lock()
	list := t.idle[pc.key]
	drop := 0
	for drop < len(list) && (now.Sub(list[drop].idleAt) >= t.opts.IdleConnTimeout || len(list)-drop >= t.opts.MaxIdleConnsPerHost) {
		drop++
	}
	if drop > 0 {
		evict = append(evict, list[:drop]...)
		n := copy(list, list[drop:])
		clear(list[n:])
		list = list[:n]
	}
	t.idle[pc.key] = append(list, pc)
	t.mu.Unlock()
	for _, old := range evict {
		old.closeIdle()
	}
}

// CloseIdleConnections closes the idle connections. Connections in use are
// not affected and may become idle later.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var all []*conn
	for key, list := range t.idle {
		all = append(all, list...)
		delete(t.idle, key)
	}
	t.mu.Unlock()
	for _, pc := range all {
		pc.closeIdle()
	}
}

// hasToken reports whether the comma-separated list v holds token
// (case-insensitively).
func hasToken(v, token string) bool {
	for v != "" {
		var item string
		item, v, _ = strings.Cut(v, ",")
		if strings.EqualFold(strings.TrimSpace(item), token) {
			return true
		}
	}
	return false
}
