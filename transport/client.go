// Package transport carries Hrana stream requests to libsql-server over
// HTTP: POST /v3/pipeline (or /v2/pipeline on servers without Hrana 3) and
// POST /v3/cursor with a JSON codec, POST /v3-protobuf/pipeline and
// /v3-protobuf/cursor with the Protobuf one. It implements
// session.Transport and session.Stream; the driver reaches it only through
// package session.
//
// A Client holds one HTTP client with its connection pool (by default the
// lean HTTP/1.1 client of internal/h1), the auth token, the codec and the
// protocol version found by probing the server. A Stream tracks the baton
// and base URL of one server stream:
//
//	c := transport.New(transport.Options{BaseURL: "http://127.0.0.1:8080", Codec: direct.Codec})
//	conn := session.NewConn(c.NewStream())
//
// Nothing here retries. Every failure is a *session.Error that says whether
// the request certainly never left this process (Safe and BadConn), as
// observed, not guessed from error types: a request for which the
// RoundTripper never obtained a connection (net/http/httptrace's GotConn,
// which internal/h1 calls as soon as it has a TCP connection) never left.
package transport

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/h1"
	"github.com/gohrana/libsql/session"
)

// DefaultMaxResponseSize bounds a pipeline response body. sqld's own limit
// is 10 MB of result data per statement; the JSON around it is larger.
const DefaultMaxResponseSize = 64 << 20

// CleanupTimeout bounds the requests that clean up after a failure (closing
// an abandoned stream), which run without the caller's context.
const CleanupTimeout = 10 * time.Second

// Options configure a Client.
type Options struct {
	// BaseURL is the server's URL without the /v3/pipeline suffix, e.g.
	// "https://db.example.com" or "http://127.0.0.1:8080/prefix".
	BaseURL string
	// AuthToken, if set, is sent as "Authorization: Bearer <token>".
	AuthToken string
	// Headers are sent with every request (for instance Turso's
	// x-turso-encryption-key). Content-Type, Accept-Encoding and
	// Authorization are the client's own and override them. Their values
	// are treated as secrets: removed from any text the server echoes.
	Headers http.Header
	// Namespace, if set, is sent in the namespace headers: the database
	// of a sqld that serves several (--enable-namespaces).
	Namespace string
	// Codec encodes requests and decodes responses. Its Format decides the
	// endpoints: /v3 (or /v2) for JSON, /v3-protobuf for Protobuf.
	Codec codec.Codec
	// Fallback, if set, is the codec to use instead of Codec when the
	// server does not offer Codec's format (GET /v3-protobuf answers 404),
	// found by the first probe. It must be a JSON codec.
	Fallback codec.Codec
	// Timeout bounds each HTTP request, including reading its body (for a
	// cursor, its first line). Zero means only the caller's context bounds it.
	Timeout time.Duration
	// TLSConfig, if set, is used for https connections (e.g. a custom CA).
	TLSConfig *tls.Config
	// MaxIdleConns is the number of idle HTTP connections kept per host.
	MaxIdleConns int
	// MaxResponseSize bounds a pipeline response body; 0 means
	// DefaultMaxResponseSize.
	MaxResponseSize int64
	// Compress asks the server to gzip pipeline responses. It saves
	// bandwidth on slow links and costs CPU (and, on a fast link, time) to
	// decompress.
	Compress bool
	// CursorKeepAlive is how often a cursor touches its stream while its
	// body is read; 0 means KeepAliveInterval.
	CursorKeepAlive time.Duration
	// RoundTripper, if set, replaces the Client's own transport (an
	// internal/h1 HTTP/1.1 client; tests use this to count or fault
	// requests). TLSConfig and MaxIdleConns are then ignored, and with
	// Compress it is up to the RoundTripper to ask for gzip.
	RoundTripper http.RoundTripper
}

// The headers that name the namespace (database) of a request to a sqld
// that serves several. sqld 0.24 reads only NamespaceBinHeader, the name
// in unpadded standard base64; later versions and Turso document
// NamespaceHeader, the name as is. Both are sent.
const (
	NamespaceHeader    = "X-Namespace"
	NamespaceBinHeader = "X-Namespace-Bin"
)

// The Hrana versions a Client speaks.
const (
	V2 = 2
	V3 = 3
)

var _ session.Transport = (*Client)(nil)

// Client sends pipeline and cursor requests to one server. It is safe for
// concurrent use.
type Client struct {
	base       string
	authHeader string // "Bearer <token>" or ""
	token      string
	headers    http.Header
	secrets    []string    // the token and header values, redacted from echoed text
	want       codec.Codec // Options.Codec
	fallback   codec.Codec // Options.Fallback, or nil
	timeout    time.Duration
	maxResp    int64
	compress   bool
	keepAlive  time.Duration
	hc         *http.Client
	own        *h1.Transport // nil when the caller supplied a RoundTripper

	wire atomic.Pointer[wire] // nil until probed
}

// wire is what a probe found: the Hrana version and the codec to speak, and
// the paths that go with them.
type wire struct {
	version  int
	codec    codec.Codec
	pipeline string // "/v3/pipeline", "/v2/pipeline" or "/v3-protobuf/pipeline"
	cursor   string // "/v3/cursor" or "/v3-protobuf/cursor"; "" on Hrana 2
	ctype    string // the requests' Content-Type
}

func newWire(version int, cd codec.Codec) *wire {
	if cd.Format() == codec.FormatProtobuf {
		return &wire{version: V3, codec: cd, pipeline: "/v3-protobuf/pipeline",
			cursor: "/v3-protobuf/cursor", ctype: "application/x-protobuf"}
	}
	if version == V2 {
		return &wire{version: V2, codec: cd, pipeline: "/v2/pipeline", ctype: "application/json"}
	}
	return &wire{version: V3, codec: cd, pipeline: "/v3/pipeline", cursor: "/v3/cursor", ctype: "application/json"}
}

// New returns a Client for the given options.
func New(o Options) *Client {
	c := &Client{
		base:      strings.TrimRight(o.BaseURL, "/"),
		want:      o.Codec,
		fallback:  o.Fallback,
		timeout:   o.Timeout,
		maxResp:   o.MaxResponseSize,
		compress:  o.Compress,
		keepAlive: o.CursorKeepAlive,
	}
	if c.keepAlive <= 0 {
		c.keepAlive = KeepAliveInterval
	}
	if c.maxResp <= 0 {
		c.maxResp = DefaultMaxResponseSize
	}
	if o.AuthToken != "" {
		c.token = o.AuthToken
		c.authHeader = "Bearer " + o.AuthToken
		c.secrets = append(c.secrets, o.AuthToken)
	}
	if len(o.Headers) > 0 || o.Namespace != "" {
		c.headers = o.Headers.Clone()
		if c.headers == nil {
			c.headers = http.Header{}
		}
		if o.Namespace != "" {
			// Not a secret: an error naming the namespace must keep it.
			c.headers.Set(NamespaceHeader, o.Namespace)
			c.headers.Set(NamespaceBinHeader, base64.RawStdEncoding.EncodeToString([]byte(o.Namespace)))
		}
		for k, vs := range c.headers {
			if k == NamespaceHeader || k == NamespaceBinHeader {
				continue
			}
			for _, v := range vs {
				// Short values (a "1" flag) would redact half a message.
				if len(v) >= 8 {
					c.secrets = append(c.secrets, v)
				}
			}
		}
	}
	rt := o.RoundTripper
	if rt == nil {
		idle := o.MaxIdleConns
		if idle <= 0 {
			idle = 64
		}
		// A database connection should not silently go through an HTTP
		// proxy, and sqld speaks HTTP/1.1: h1 does the exchange on the
		// caller's goroutine, without http.Transport's per-connection
		// goroutines and the wake-ups between them.
		c.own = h1.New(h1.Options{
			TLSConfig:           o.TLSConfig,
			MaxIdleConnsPerHost: idle,
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
	return c
}

// NewStream returns a Stream that has not been opened on the server yet;
// its first request opens it.
func (c *Client) NewStream() session.Stream { return c.newStream() }

func (c *Client) newStream() *Stream { return &Stream{c: c, trace: newSendTrace()} }

// CloseIdle closes idle HTTP connections of the client's own transport.
func (c *Client) CloseIdle() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// Version returns the Hrana version, probing the server on first use.
func (c *Client) Version(ctx context.Context) (int, error) {
	w, err := c.probe(ctx)
	if err != nil {
		return 0, err
	}
	return w.version, nil
}

// Codec returns the codec requests are sent with, probing the server on
// first use: Options.Codec, or Options.Fallback if the server does not
// offer the former's format.
func (c *Client) Codec(ctx context.Context) (codec.Codec, error) {
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
func (c *Client) probe(ctx context.Context) (*wire, error) {
	if w := c.wire.Load(); w != nil {
		return w, nil
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var w *wire
	if c.want.Format() == codec.FormatProtobuf {
		ok, err := c.get(ctx, "/v3-protobuf")
		switch {
		case err != nil:
			return nil, err
		case ok:
			w = newWire(V3, c.want)
		case c.fallback == nil:
			return nil, &session.Error{HTTPStatus: http.StatusNotFound, Safe: true,
				Message: "the server does not offer Hrana 3 over Protobuf (GET /v3-protobuf answered HTTP 404); use a JSON codec"}
		}
	}
	if w == nil {
		cd := c.want
		if cd.Format() != codec.FormatJSON {
			cd = c.fallback
		}
		ok, err := c.get(ctx, "/v3")
		if err != nil {
			return nil, err
		}
		w = newWire(V2, cd)
		if ok {
			w = newWire(V3, cd)
		}
	}
	c.wire.Store(w)
	return w, nil
}

// get sends a probe: it reports true for a 2xx answer and false for 404;
// anything else is an error.
func (c *Client) get(ctx context.Context, path string) (bool, error) {
	tr := newSendTrace()
	req, err := http.NewRequestWithContext(tr.attach(ctx), http.MethodGet, c.base+path, nil)
	if err != nil {
		return false, &session.Error{Message: "probe failed", Safe: true, Err: err}
	}
	for k, vs := range c.headers {
		req.Header[k] = vs
	}
	resp, sent, err := c.do(req, tr)
	if err != nil {
		// The pipeline request itself never left either way.
		return false, &session.Error{Message: "probe failed", Safe: true, BadConn: !sent && !isContextErr(err), Err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return true, nil
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	}
	return false, &session.Error{HTTPStatus: resp.StatusCode, Safe: true,
		Message: fmt.Sprintf("GET %s answered HTTP %d", path, resp.StatusCode)}
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return ctx, func() {}
}

func (c *Client) setHeaders(req *http.Request, w *wire) {
	for k, vs := range c.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", w.ctype)
	if !c.compress {
		// Explicit, so that a caller's RoundTripper does not ask for gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	if c.authHeader != "" {
		req.Header.Set("Authorization", c.authHeader)
	}
}

// redact removes the client's own token and header values from text the
// server or a proxy sent back (some echo request headers in their error
// pages).
func (c *Client) redact(s string) string {
	for _, secret := range c.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	return s
}
