// Package http carries Hrana stream requests to libsql-server over HTTP:
// POST /v3/pipeline (/v2/pipeline on servers without Hrana 3) and /v3/cursor
// with a JSON codec, /v3-protobuf/pipeline and /v3-protobuf/cursor with the
// Protobuf one. It implements the transport contract (package transport).
//
//	t, err := http.New(transport.Options{URL: "http://127.0.0.1:8080", Codec: direct.Codec})
//	s := t.NewStream()
//	err = s.Send(ctx, reqs, true, &resp)
//
// A stream lives between requests that carry its baton and expires after
// 10 s idle on the server. Nothing here retries. Whether a request left this
// process is observed, not guessed: one for which the RoundTripper never
// obtained a connection (httptrace's GotConn, which internal/http1 calls as
// soon as it has a TCP connection) never left.
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	traceFetch func(context.Context) func(rows, bytes int, err error) // Options.TraceFetch
	hc         *http.Client
	own        *http1.Transport // nil when the caller supplied a RoundTripper

	proto atomic.Pointer[protocol] // nil until probed
}

// protocol is what a probe found: the Hrana version and the codec to speak,
// and the paths that go with them.
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

// New returns an HTTP transport for o. It sends nothing: the server is
// probed for its Hrana version and codecs by the first request.
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
		maxResp:   maxResponseSize,
		compress:  o.Compress,
		keepAlive: keepAliveInterval,
	}
	if o.AuthToken != "" {
		c.authHeader = "Bearer " + o.AuthToken
	}
	c.tokens = o.TokenSource
	c.traceFetch = o.TraceFetch
	rt := o.RoundTripper
	if rt == nil {
		// A database connection should not silently go through an HTTP
		// proxy, and sqld speaks HTTP/1.1: http1 does the exchange on the
		// caller's goroutine, without http.Transport's per-connection
		// goroutines and the wake-ups between them.
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

// NewStream returns a stream that has not been opened on the server yet;
// its first request opens it.
func (c *client) NewStream() transport.Stream { return c.newStream() }

func (c *client) newStream() *stream { return &stream{c: c, trace: newSendTrace()} }

// Close closes the idle connections of the client's own HTTP client; its
// streams stay usable.
func (c *client) Close() error {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return nil
}

// version returns the Hrana version, probing the server on first use.
func (c *client) version(ctx context.Context) (int, error) {
	w, err := c.probe(ctx)
	if err != nil {
		return 0, err
	}
	return w.version, nil
}

// codec returns the codec requests are sent with, probing the server on
// first use: Options.Codec, or Options.JSON if the server does not offer the
// former's format and Options.Fallback allows it.
func (c *client) codec(ctx context.Context) (codec.Codec, error) {
	w, err := c.probe(ctx)
	if err != nil {
		return nil, err
	}
	return w.codec, nil
}

// probe returns the wire to use, probing the server on first use. With a
// JSON codec it asks GET /v3: 2xx means Hrana 3, 404 means Hrana 2. With
// the Protobuf codec it asks GET /v3-protobuf: 2xx means Protobuf, 404
// means the server does not offer it, and then the JSON fallback is probed
// instead, or, without one, the probe fails. A failed probe is not cached.
// Concurrent first uses probe concurrently rather than queue behind one
// another's failures.
func (c *client) probe(ctx context.Context) (*protocol, error) {
	if w := c.proto.Load(); w != nil {
		return w, nil
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var w *protocol
	if c.want.Format() == codec.FormatProtobuf {
		ok, err := c.get(ctx, "/v3-protobuf")
		switch {
		case err != nil:
			return nil, err
		case ok:
			w = newProtocol(v3, c.want)
		case !c.fallback:
			return nil, &transport.Error{HTTPStatus: http.StatusNotFound, Safe: true,
				Message: "the server does not speak Hrana 3 over Protobuf; use a JSON codec"}
		}
	}
	if w == nil {
		cd := c.want
		if cd.Format() != codec.FormatJSON {
			cd = c.json
		}
		ok, err := c.get(ctx, "/v3")
		if err != nil {
			return nil, err
		}
		w = newProtocol(v2, cd)
		if ok {
			w = newProtocol(v3, cd)
		}
	}
	c.proto.Store(w)
	return w, nil
}

// get sends a probe: it reports true for a 2xx answer and false for 404;
// anything else is an error.
func (c *client) get(ctx context.Context, path string) (bool, error) {
	tr := newSendTrace()
	req, err := http.NewRequestWithContext(tr.attach(ctx), http.MethodGet, c.base+path, nil)
	if err != nil {
		return false, sendFailed(false, err)
	}
	for k, vs := range c.hdr.Header {
		req.Header[k] = vs
	}
	resp, sent, err := c.do(req, tr)
	if err != nil {
		// The request the probe is for never left, whatever became of the
		// probe itself.
		e := sendFailed(sent, err)
		e.Safe = true
		return false, e
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return true, nil
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	}
	return false, &transport.Error{HTTPStatus: resp.StatusCode, Safe: true,
		Message: fmt.Sprintf("the server failed the request for its Hrana version (GET %s)", path)}
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
