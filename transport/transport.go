// Package transport sends Hrana pipeline requests to libsql-server over HTTP.
//
// A Client holds one http.Client (with its own connection pool), the auth
// token, the codec and the protocol version found by probing the server. A
// Stream tracks the baton and base URL of one server-side stream:
//
//	c := transport.New(transport.Options{BaseURL: "http://127.0.0.1:8080", Codec: direct.Codec})
//	s := c.NewStream()
//	var resp codec.PipelineResponse
//	var body []byte
//	err := s.Pipeline(ctx, &codec.PipelineRequest{Requests: reqs}, &resp, &body)
//
// Nothing here retries: whether a failed request may be repeated is the
// caller's decision, helped by Error.Sent.
package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/h1"
)

// DefaultMaxResponseSize bounds a pipeline response body. sqld's own limit
// is 10 MB of result data per statement; the JSON around it is larger.
const DefaultMaxResponseSize = 64 << 20

// Options configure a Client.
type Options struct {
	// BaseURL is the server's URL without the /v3/pipeline suffix, e.g.
	// "https://db.example.com" or "http://127.0.0.1:8080/prefix".
	BaseURL string
	// AuthToken, if set, is sent as "Authorization: Bearer <token>".
	AuthToken string
	// Codec encodes requests and decodes responses.
	Codec codec.Codec
	// Timeout bounds each HTTP request, including reading its body.
	// Zero means only the caller's context bounds it.
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
	// RoundTripper, if set, replaces the Client's own transport (an
	// internal/h1 HTTP/1.1 client; tests use this to count or fault
	// requests). TLSConfig and MaxIdleConns are then ignored, and with
	// Compress it is up to the RoundTripper to ask for gzip.
	RoundTripper http.RoundTripper
}

// Version is the Hrana protocol version used for pipelines.
type Version int

// The supported protocol versions.
const (
	V2 Version = 2
	V3 Version = 3
)

// Client sends pipeline requests. It is safe for concurrent use.
type Client struct {
	base       string
	authHeader string // "Bearer <token>" or ""
	token      string
	codec      codec.Codec
	timeout    time.Duration
	maxResp    int64
	compress   bool
	hc         *http.Client
	own        *h1.Transport // nil when the caller supplied a RoundTripper

	versionMu sync.Mutex
	version   Version // 0 until probed
}

// New returns a Client for the given options.
func New(o Options) *Client {
	c := &Client{
		base:     strings.TrimRight(o.BaseURL, "/"),
		codec:    o.Codec,
		timeout:  o.Timeout,
		maxResp:  o.MaxResponseSize,
		compress: o.Compress,
	}
	if c.maxResp <= 0 {
		c.maxResp = DefaultMaxResponseSize
	}
	if o.AuthToken != "" {
		c.token = o.AuthToken
		c.authHeader = "Bearer " + o.AuthToken
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

// Codec returns the client's codec.
func (c *Client) Codec() codec.Codec { return c.codec }

// CloseIdleConnections closes idle HTTP connections of the client's own
// transport.
func (c *Client) CloseIdleConnections() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// Version returns the protocol version, probing the server on first use
// (GET /v3: 2xx means Hrana 3, 404 means fall back to Hrana 2). A failed
// probe is not cached.
func (c *Client) Version(ctx context.Context) (Version, error) {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if c.version != 0 {
		return c.version, nil
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v3", nil)
	if err != nil {
		return 0, &Error{Op: "probe", Err: err}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, &Error{Op: "probe", Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		c.version = V3
	case resp.StatusCode == http.StatusNotFound:
		c.version = V2
	default:
		return 0, &Error{Op: "probe", Status: resp.StatusCode,
			Message: fmt.Sprintf("GET /v3 answered HTTP %d", resp.StatusCode)}
	}
	return c.version, nil
}

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return ctx, func() {}
}

// Stream is the client side of one server stream: its baton and base URL.
// A Stream is not safe for concurrent use; Hrana requires requests on a
// stream to be serial anyway.
type Stream struct {
	c       *Client
	baton   string
	baseURL string
	reqBuf  []byte
}

// NewStream returns a Stream that has not been opened on the server yet; its
// first request opens it.
func (c *Client) NewStream() *Stream { return &Stream{c: c} }

// Open reports whether the server holds a stream for s (it has a baton).
func (s *Stream) Open() bool { return s.baton != "" }

// Forget drops the stream's baton without telling the server, e.g. after a
// failure that killed it.
func (s *Stream) Forget() {
	s.baton = ""
	s.baseURL = ""
}

// Pipeline sends the requests on the stream and decodes the response into
// resp, reading the body into *body (reused across calls; resp may
// reference it, so keep it until resp is no longer used). req.Baton is set
// from the stream. On success the stream takes the new baton. After an HTTP
// error status the server has dropped the stream, so s forgets it; after a
// network failure or cancellation s keeps the baton it sent, which is still
// current if the request never reached the server, so that the caller can
// try to close the stream rather than leave it (and any transaction and
// lock it holds) until it expires.
func (s *Stream) Pipeline(ctx context.Context, req *codec.PipelineRequest, resp *codec.PipelineResponse, body *[]byte) error {
	c := s.c
	v, err := c.Version(ctx)
	if err != nil {
		return err
	}
	req.Baton = s.baton
	s.reqBuf, err = c.codec.AppendPipelineRequest(s.reqBuf[:0], req)
	if err != nil {
		return err
	}
	endpoint := s.endpoint("/v3/pipeline")
	if v == V2 {
		endpoint = s.endpoint("/v2/pipeline")
	}
	err = c.post(ctx, endpoint, s.reqBuf, body)
	if err != nil {
		s.failed(err)
		return err
	}
	if err := c.codec.DecodePipelineResponse(*body, resp); err != nil {
		s.Forget()
		return &Error{Op: "decode", Sent: true, Err: err}
	}
	if len(resp.Results) != len(req.Requests) {
		s.Forget()
		return &Error{Op: "decode", Sent: true, Message: fmt.Sprintf(
			"server sent %d results for %d requests", len(resp.Results), len(req.Requests))}
	}
	s.baton = resp.Baton
	s.baseURL = resp.BaseURL
	if s.baton == "" {
		s.baseURL = ""
	}
	return nil
}

// endpoint returns the URL of path ("/v3/pipeline") for the stream: under
// the base_url the server gave it, or the client's base URL.
func (s *Stream) endpoint(path string) string {
	if s.baseURL != "" {
		return strings.TrimRight(s.baseURL, "/") + path
	}
	return s.c.base + path
}

func (c *Client) setHeaders(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	if !c.compress {
		// Explicit, so that a caller's RoundTripper does not ask for gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	if c.authHeader != "" {
		req.Header.Set("Authorization", c.authHeader)
	}
}

// failed updates the stream after a failed request: see Pipeline.
func (s *Stream) failed(err error) {
	var te *Error
	if errors.As(err, &te) && te.Status == 0 && te.Op == "request" {
		return
	}
	s.Forget()
}

// post sends one request and reads a 2xx body into *body; anything else
// becomes an *Error.
func (c *Client) post(ctx context.Context, endpoint string, payload []byte, body *[]byte) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return &Error{Op: "request", Err: err}
	}
	c.setHeaders(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return &Error{Op: "request", Sent: mayHaveBeenSent(err), Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp)
	}
	if resp.ContentLength > c.maxResp {
		return &Error{Op: "read", Sent: true, Err: fmt.Errorf("%w: the server announced %d bytes, over the limit of %d",
			ErrResponseTooLarge, resp.ContentLength, c.maxResp)}
	}
	if n := resp.ContentLength; n > 0 && int64(cap(*body)) <= n {
		// One allocation of the right size; +1 leaves room to see EOF.
		*body = make([]byte, 0, n+1)
	}
	*body, err = readLimited((*body)[:0], resp.Body, c.maxResp)
	if err != nil {
		return &Error{Op: "read", Sent: true, Err: err}
	}
	return nil
}

// ErrResponseTooLarge is returned (wrapped) for a body over the limit.
var ErrResponseTooLarge = errors.New("response body too large")

// readLimited appends r to dst, failing once more than limit bytes arrive.
// When dst's capacity runs out it reads into fixed-size blocks and joins
// them at the end: a body the limit rejects then costs the limit, not the
// chain of ever larger copies that growing one slice leaves behind.
func readLimited(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	var blocks blockBuffer
	buf := dst
	total := int64(len(dst))
	for {
		if len(buf) == cap(buf) {
			blocks.add(buf)
			buf = make([]byte, 0, blockSize)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		total += int64(n)
		if total > limit {
			return dst[:0], fmt.Errorf("%w: over %d bytes", ErrResponseTooLarge, limit)
		}
		if err == io.EOF {
			if blocks.len() == 0 {
				return buf, nil
			}
			blocks.add(buf)
			return blocks.join(), nil
		}
		if err != nil {
			return dst[:0], err
		}
	}
}

// blockSize is the unit in which large bodies and lines are collected.
const blockSize = 1 << 20

// blockBuffer collects bytes in separate blocks, joined once at the end.
type blockBuffer struct {
	blocks [][]byte
	n      int
}

func (b *blockBuffer) add(p []byte) {
	if len(p) > 0 {
		b.blocks = append(b.blocks, p)
		b.n += len(p)
	}
}

func (b *blockBuffer) len() int { return b.n }

// join returns the bytes in one new slice of exactly their length.
func (b *blockBuffer) join() []byte {
	out := make([]byte, 0, b.n)
	for _, p := range b.blocks {
		out = append(out, p...)
	}
	*b = blockBuffer{}
	return out
}

// statusError turns a non-2xx response into an *Error, decoding the three
// body shapes sqld uses: text/plain, {"message","code"} and {"error"}.
func (c *Client) statusError(resp *http.Response) error {
	raw, _ := readLimited(nil, resp.Body, 64<<10)
	e := &Error{Op: "request", Sent: true, Status: resp.StatusCode}
	ct := resp.Header.Get("Content-Type")
	var he codec.Error
	switch {
	case strings.HasPrefix(ct, "application/json") && c.codec.DecodeError(raw, &he) == nil && he.Message != "":
		e.Code, e.Message = he.Code, he.Message
	case strings.HasPrefix(ct, "text/plain") && len(raw) > 0:
		e.Message = strings.TrimSpace(string(raw))
	default:
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.Message, e.Code = c.redact(e.Message), c.redact(e.Code)
	if len(e.Message) > 1024 {
		e.Message = e.Message[:1024] + "..."
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		// sqld rejects these before running anything; a proxy might not,
		// so only 429 from the server is treated as unsent.
		e.Sent = resp.StatusCode != http.StatusTooManyRequests
	}
	return e
}

// redact removes the client's own token from text the server or a proxy
// sent back (some echo request headers in their error pages).
func (c *Client) redact(s string) string {
	if c.token == "" || !strings.Contains(s, c.token) {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[REDACTED]")
}

// Error is a failed HTTP exchange with the server.
type Error struct {
	Op      string // "probe", "request", "read", "decode"
	Status  int    // HTTP status, 0 if none was received
	Code    string // Hrana error code from the body, if any (e.g. STREAM_EXPIRED)
	Message string // server's message, or a description
	// Sent is false only when the request certainly did not reach the
	// server (it failed to connect), so repeating it is safe.
	Sent bool
	Err  error // underlying network or decoding error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("libsql: ")
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "HTTP %d", e.Status)
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
		if e.Code != "" {
			b.WriteString(" (" + e.Code + ")")
		}
	default:
		b.WriteString(e.Op)
		b.WriteString(" failed")
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// mayHaveBeenSent is false only for failures before a connection existed.
func mayHaveBeenSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns)
}

// unwrapURLError drops *url.Error, whose text repeats the URL; the caller's
// message says what failed.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
