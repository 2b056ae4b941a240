// Package http carries Hrana stream requests to libsql-server over HTTP:
// POST /v3/pipeline (/v2/pipeline on servers without Hrana 3) and /v3/cursor
// with a JSON codec, /v3-protobuf/pipeline and /v3-protobuf/cursor with the
// Protobuf one. It implements the transport contract (package transport).
//
// Nothing is probed (PROTOCOL.md §2: the protocol has no discovery): the
// first request goes out on the paths of the codec asked for, and a 404 to
// a request that opens a stream (which ran nothing) moves on to the next
// wire the options allow, kept once a request on it succeeds.
//
//	t, err := http.New(transport.Options{URL: "http://127.0.0.1:8080", Codec: direct.Codec})
//	s := t.NewStream()
//	err = s.Send(ctx, reqs, true, &resp)
//
// A stream lives between requests that carry its baton and expires after
// 10 s idle on the server. A connection's stream is kept from one unit of
// work to the next unless Options.CloseStreams (see stream). Nothing here retries. Whether a request left this
// process is observed, not guessed: one for which the RoundTripper never
// obtained a connection (httptrace's GotConn, which internal/http1 calls as
// soon as it has a TCP connection) never left.
//
// Who imports it: the driver (its default transport); no application needs to.
// It is public only because the design keeps the transports under transport/.
package http

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/http1"
	"github.com/gohrana/libsql/transport"
	"github.com/gohrana/libsql/transport/internal/headers"
)

// maxResponseSize bounds a pipeline response body by default. sqld's own
// limit is 10 MB of result data per statement; the JSON around it is larger.
const maxResponseSize = 64 << 20

// cleanupTimeout bounds the requests that clean up after a failure (closing
// an abandoned stream), which run without the caller's context.
const cleanupTimeout = 10 * time.Second

// The Hrana versions a client speaks.
const (
	v2 = 2
	v3 = 3
)

// client sends pipeline and cursor requests to one server. It is safe for
// concurrent use.
type client struct {
	base       string
	authHeader string                                // "Bearer <token>" or ""
	tokens     func(context.Context) (string, error) // Options.TokenSource
	hdr        *headers.Set
	want       codec.Codec // Options.Codec
	json       codec.Codec // Options.JSON: error bodies, and the fallback
	fallback   bool
	timeout    time.Duration
	maxResp    int64
	compress   bool
	keepAlive  time.Duration
	keep       bool                                                   // connections' streams are kept across units of work (not Options.CloseStreams)
	strain     atomic.Int64                                           // until when (Unix ns) streams are not kept: see strained
	traceFetch func(context.Context) func(rows, bytes int, err error) // Options.TraceFetch
	hc         *http.Client
	own        *http1.Transport // the client's own HTTP/1.1 client, unless a RoundTripper or a proxy took its place
	proxied    *http.Transport  // net/http's, for a server behind a proxy

	// proto is the wire requests go out on: the one Options.Codec asks for,
	// until a server's 404 to its paths, and the success of the next one,
	// say otherwise (see learn).
	proto atomic.Pointer[protocol]
}

// protocol is a wire: the Hrana version and the codec to speak, and the
// paths that go with them.
type protocol struct {
	version  int
	codec    codec.Codec
	pipeline string // "/v3/pipeline", "/v2/pipeline" or "/v3-protobuf/pipeline"
	cursor   string // "/v3/cursor" or "/v3-protobuf/cursor"; "" on Hrana 2
	ctype    string // the requests' Content-Type
}

func newProtocol(version int, cd codec.Codec) *protocol {
	if cd.Format() == codec.FormatProtobuf {
		return &protocol{version: v3, codec: cd, pipeline: "/v3-protobuf/pipeline",
			cursor: "/v3-protobuf/cursor", ctype: "application/x-protobuf"}
	}
	if version == v2 {
		return &protocol{version: v2, codec: cd, pipeline: "/v2/pipeline", ctype: "application/json"}
	}
	return &protocol{version: v3, codec: cd, pipeline: "/v3/pipeline", cursor: "/v3/cursor", ctype: "application/json"}
}

// New returns an HTTP transport for o. It sends nothing: the first request
// learns which wire the server speaks (see the package doc).
func New(o transport.Options) (transport.Transport, error) { return newClient(o) }

// newClient is New, returning the client itself for this package's tests.
func newClient(o transport.Options) (*client, error) {
	if o.Codec == nil {
		return nil, errors.New("Options.Codec is required")
	}
	if o.JSON == nil && o.Codec.Format() == codec.FormatJSON {
		o.JSON = o.Codec
	}
	if o.JSON == nil || o.JSON.Format() != codec.FormatJSON {
		return nil, errors.New("Options.JSON must be a JSON codec")
	}
	c := &client{
		base:      strings.TrimRight(o.URL, "/"),
		hdr:       headers.New(o.AuthToken, o.Headers, o.Namespace),
		want:      o.Codec,
		json:      o.JSON,
		fallback:  o.Fallback,
		timeout:   o.Timeout,
		keep:      !o.CloseStreams,
		maxResp:   maxResponseSize,
		compress:  o.Compress,
		keepAlive: keepAliveInterval,
	}
	c.proto.Store(newProtocol(v3, o.Codec))
	if o.AuthToken != "" {
		c.authHeader = "Bearer " + o.AuthToken
	}
	c.tokens = o.TokenSource
	c.traceFetch = o.TraceFetch
	rt := o.RoundTripper
	if rt == nil && o.Proxy != nil {
		base, err := url.Parse(c.base)
		if err != nil {
			return nil, fmt.Errorf("invalid URL: %w", err)
		}
		p, err := o.Proxy(&http.Request{Method: http.MethodPost, URL: base, Host: base.Host, Header: http.Header{}})
		if err != nil {
			return nil, fmt.Errorf("the proxy setting: %w", err)
		}
		if p != nil {
			// Through a proxy, net/http does what users expect of one:
			// forward requests to http servers, CONNECT to https ones,
			// Proxy-Authorization from the proxy URL. A forwarding proxy
			// may close a kept connection whenever it likes (tinyproxy
			// does after every answer, saying nothing), which would leave
			// a request sent on it with no answer and an unknown outcome:
			// forwarded requests each take a connection of their own. A
			// CONNECT tunnel is kept.
			c.proxied = &http.Transport{
				DisableKeepAlives:   base.Scheme == "http",
				Proxy:               o.Proxy,
				DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				TLSClientConfig:     o.TLSConfig,
				TLSHandshakeTimeout: 10 * time.Second,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     90 * time.Second,
				DisableCompression:  !o.Compress,
			}
			rt = c.proxied
		}
	}
	if rt == nil {
		// sqld speaks HTTP/1.1: http1 does the exchange on the caller's
		// goroutine, without http.Transport's per-connection goroutines
		// and the wake-ups between them.
		c.own = http1.New(http1.Options{
			TLSConfig:           o.TLSConfig,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			DialTimeout:         10 * time.Second,
			KeepAlive:           30 * time.Second,
			Compress:            o.Compress,
		})
		rt = c.own
	}
	c.hc = &http.Client{
		Transport: rt,
		// A redirect would resend a POST body to another place; refuse it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// strainWindow is how long after a 429 the client keeps no stream.
const strainWindow = 10 * time.Second

// strained records a 429: the server is out of connections (sqld answers
// so when a new stream waited too long for one of its
// --max-concurrent-connections, 128 by default) or of request slots. Each
// kept stream holds one of its connections, so for strainWindow the
// streams end with their units of work again, and give theirs back.
func (c *client) strained() { c.strain.Store(time.Now().Add(strainWindow).UnixNano()) }

// keeps reports whether streams are kept now (see strained).
func (c *client) keeps() bool { return c.keep && time.Now().UnixNano() > c.strain.Load() }

// NewStream returns a stream that has not been opened on the server yet;
// its first request opens it. Unless Options.CloseStreams, it keeps its
// server stream from one unit of work to the next (see stream).
func (c *client) NewStream() transport.Stream {
	s := c.newStream()
	s.keep = c.keep
	return s
}

func (c *client) newStream() *stream { return &stream{c: c, trace: newSendTrace()} }

// Close closes the idle connections of the client's own HTTP client; its
// streams stay usable.
func (c *client) Close() error {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	if c.proxied != nil {
		c.proxied.CloseIdleConnections()
	}
	return nil
}

// version returns the Hrana version requests are sent with: 3 until a
// server has shown that it speaks only Hrana 2.
func (c *client) version(context.Context) (int, error) { return c.proto.Load().version, nil }

// codec returns the codec requests are sent with: Options.Codec, or
// Options.JSON once the server has shown that it does not speak the
// former's format and Options.Fallback allows it.
func (c *client) codec(context.Context) (codec.Codec, error) { return c.proto.Load().codec, nil }

// fallbackFrom returns the wire to try when w's paths answered 404 to a
// request that opened a stream, or nil: Protobuf falls back to the JSON
// codec if Options.Fallback allows it, Hrana 3 over JSON to Hrana 2.
func (c *client) fallbackFrom(w *protocol) *protocol {
	switch {
	case w.codec.Format() == codec.FormatProtobuf && c.fallback:
		return newProtocol(v3, c.json)
	case w.codec.Format() == codec.FormatJSON && w.version == v3:
		return newProtocol(v2, w.codec)
	}
	return nil
}

// learn is what a request that opened a stream does when w's paths
// answered it 404 (err): it tries the wires after w in turn, with try, and
// keeps the first that answers, for every later request. A 404 from all of
// them is the server's answer, not a missing path (an unknown database, a
// wrong URL): the first error is returned and nothing is learned. A 404
// ran nothing (PROTOCOL.md §9.3), so trying again is safe.
func (c *client) learn(w *protocol, err error, try func(*protocol) error) error {
	for next := c.fallbackFrom(w); next != nil; next = c.fallbackFrom(next) {
		nerr := try(next)
		if isStatus(nerr, http.StatusNotFound) {
			continue
		}
		if nerr == nil {
			c.proto.CompareAndSwap(w, next)
		}
		return nerr
	}
	if w.codec.Format() == codec.FormatProtobuf && !c.fallback {
		var e *transport.Error
		if errors.As(err, &e) {
			cp := *e
			cp.Message += " (the server may not speak Hrana 3 over Protobuf: try a JSON codec)"
			return &cp
		}
	}
	return err
}

func (c *client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return ctx, func() {}
}

func (c *client) setHeaders(req *http.Request, w *protocol) error {
	for k, vs := range c.hdr.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", w.ctype)
	if !c.compress {
		// Explicit, so that a caller's RoundTripper does not ask for gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	auth := c.authHeader
	if c.tokens != nil {
		tok, err := c.tokens(req.Context())
		if err != nil {
			return &transport.Error{Message: "the auth token source failed", Safe: true, Err: err}
		}
		auth = ""
		if tok != "" {
			auth = "Bearer " + tok
			c.hdr.Remember(tok)
		}
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return nil
}
