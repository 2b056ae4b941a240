package ws

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/session"
)

// Defaults of Options.
const (
	// DefaultSockets is how many sockets a Client opens at most.
	DefaultSockets = 2
	// DefaultPingInterval is how long a socket may go without receiving
	// anything before it is pinged.
	DefaultPingInterval = 15 * time.Second
	// DefaultPingTimeout bounds the wait for a ping's pong.
	DefaultPingTimeout = 10 * time.Second
	// DefaultDialTimeout bounds a dial: TCP, TLS and the WebSocket handshake.
	DefaultDialTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds the write of one burst of messages.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultReadLimit bounds one server message. sqld's own limit is 10 MB
	// of result data per response (--max-response-size); its encoding is
	// larger.
	DefaultReadLimit = 64 << 20
	// DefaultCursorBatch is the max_count of a cursor's fetches (sqld also
	// stops a fetch at an eighth of its response limit in bytes).
	DefaultCursorBatch = 1000
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// socket slot dials again after failing.
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
)

// The Hrana versions a Client speaks.
const (
	V2 = 2
	V3 = 3
)

// The WebSocket subprotocols of Hrana.
const (
	subprotoHrana2   = "hrana2"
	subprotoHrana3   = "hrana3"
	subprotoProtobuf = "hrana3-protobuf"
)

// The headers that name the namespace (database) on a sqld that serves
// several; sqld 0.24 reads the second (see transport.NamespaceBinHeader).
const (
	namespaceHeader    = "X-Namespace"
	namespaceBinHeader = "X-Namespace-Bin"
)

// Options configure a Client. Zero values mean the defaults.
type Options struct {
	// URL is the server's WebSocket URL: ws://host:port or wss://host, with
	// a path if a proxy serves it under one (sqld serves GET /). http and
	// https mean ws and wss.
	URL string
	// AuthToken, if set, is the JWT sent in each socket's hello message.
	AuthToken string
	// Codec encodes the messages. A JSON codec speaks the subprotocol
	// hrana3, or hrana2 if the server offers only that; the Protobuf codec
	// hrana3-protobuf.
	Codec codec.SocketCodec
	// Fallback, if set with a Protobuf Codec, is a JSON codec to speak
	// instead when the server does not offer hrana3-protobuf. Without it
	// such a server is an error.
	Fallback codec.SocketCodec
	// Headers are sent with the WebSocket handshake. Their values are
	// treated as secrets: removed from any text the server echoes.
	Headers http.Header
	// Namespace, if set, names the database of a sqld that serves several
	// (--enable-namespaces), in the handshake's namespace headers.
	Namespace string
	// TLSConfig, if set, is used for wss connections (a custom CA, say).
	TLSConfig *tls.Config
	// Sockets is how many sockets the Client opens at most; the streams of
	// all its Conns share them. 0 means DefaultSockets.
	Sockets int
	// PingInterval is how long a socket may receive nothing before it is
	// pinged; a ping that gets no pong within PingTimeout kills the socket,
	// so a dead connection is found within their sum even when idle. A
	// negative PingInterval turns pings off.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// Timeout, if set, bounds each request's wait for its answers (and a
	// cursor's for its opening), as a context deadline would: the request
	// fails, and its stream is Busy until the answers arrive.
	Timeout time.Duration
	// DialTimeout bounds a dial, WriteTimeout the write of one burst of
	// messages (a socket whose writes stall that long is killed).
	DialTimeout  time.Duration
	WriteTimeout time.Duration
	// ReadLimit bounds one server message; a larger one kills its socket.
	ReadLimit int64
	// CursorBatch is how many entries a cursor asks for at a time.
	CursorBatch int
	// MinBackoff and MaxBackoff bound the wait, doubling with each failure,
	// before a socket slot whose dial failed (or whose socket died before
	// the server accepted its hello) dials again. Meanwhile its requests
	// fail at once with the last error, unless another socket is up.
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

var _ session.Transport = (*Client)(nil)

// Client carries the streams of many Conns over a few WebSocket sockets to
// one server. It is safe for concurrent use.
type Client struct {
	url       string
	token     string
	headers   http.Header
	secrets   []string
	tls       *tls.Config
	want      codec.SocketCodec
	fallback  codec.SocketCodec
	subprotos []string

	timeout      time.Duration
	pingInterval time.Duration
	pingTimeout  time.Duration
	dialTimeout  time.Duration
	writeTimeout time.Duration
	readLimit    int64
	cursorBatch  uint32
	minBackoff   time.Duration
	maxBackoff   time.Duration

	slots   []slot
	next    atomic.Uint32 // round robin over slots
	version atomic.Int32  // of the last socket that connected; 0 before
	closed  atomic.Bool

	// The backoff is the Client's, not a slot's: every slot dials the same
	// server, so one failure says the others would fail too.
	mu       sync.Mutex
	failures int       // consecutive: failed dials and sockets refused at hello
	retryAt  time.Time // no dial before
	lastErr  *session.Error
}

// New returns a Client for the given options. It dials nothing: sockets
// connect when streams first need them.
func New(o Options) (*Client, error) {
	if o.Codec == nil {
		return nil, errors.New("ws: Options.Codec is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("ws: invalid URL: %w", err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("ws: URL scheme %q is not ws, wss, http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, errors.New("ws: the URL must not carry credentials; use AuthToken")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	c := &Client{
		url:          u.String(),
		token:        o.AuthToken,
		want:         o.Codec,
		timeout:      max(o.Timeout, 0),
		pingInterval: o.PingInterval,
		pingTimeout:  o.PingTimeout,
		dialTimeout:  o.DialTimeout,
		writeTimeout: o.WriteTimeout,
		readLimit:    o.ReadLimit,
		minBackoff:   o.MinBackoff,
		maxBackoff:   o.MaxBackoff,
	}
	switch {
	case o.Codec.Format() == codec.FormatJSON:
		c.subprotos = []string{subprotoHrana3, subprotoHrana2}
	case o.Fallback != nil && o.Fallback.Format() == codec.FormatJSON:
		c.fallback = o.Fallback
		c.subprotos = []string{subprotoProtobuf, subprotoHrana3, subprotoHrana2}
	case o.Fallback != nil:
		return nil, errors.New("ws: Options.Fallback must be a JSON codec")
	default:
		c.subprotos = []string{subprotoProtobuf}
	}
	if o.TLSConfig != nil {
		c.tls = o.TLSConfig.Clone()
	} else {
		c.tls = &tls.Config{}
	}
	// The WebSocket handshake is an HTTP/1.1 upgrade.
	c.tls.NextProtos = []string{"http/1.1"}
	if c.token != "" {
		c.secrets = append(c.secrets, c.token)
	}
	if len(o.Headers) > 0 || o.Namespace != "" {
		c.headers = o.Headers.Clone()
		if c.headers == nil {
			c.headers = http.Header{}
		}
		for _, vs := range c.headers {
			for _, v := range vs {
				// Short values (a "1" flag) would redact half a message.
				if len(v) >= 8 {
					c.secrets = append(c.secrets, v)
				}
			}
		}
		if o.Namespace != "" {
			// Not a secret: an error naming the namespace must keep it.
			c.headers.Set(namespaceHeader, o.Namespace)
			c.headers.Set(namespaceBinHeader, base64.RawStdEncoding.EncodeToString([]byte(o.Namespace)))
		}
	}
	setDefault(&c.pingTimeout, DefaultPingTimeout)
	setDefault(&c.pingInterval, DefaultPingInterval)
	setDefault(&c.dialTimeout, DefaultDialTimeout)
	setDefault(&c.writeTimeout, DefaultWriteTimeout)
	setDefault(&c.minBackoff, DefaultMinBackoff)
	setDefault(&c.maxBackoff, DefaultMaxBackoff)
	c.maxBackoff = max(c.maxBackoff, c.minBackoff)
	if c.readLimit <= 0 {
		c.readLimit = DefaultReadLimit
	}
	c.cursorBatch = DefaultCursorBatch
	if o.CursorBatch > 0 {
		c.cursorBatch = uint32(min(o.CursorBatch, 1<<20))
	}
	n := o.Sockets
	if n <= 0 {
		n = DefaultSockets
	}
	c.slots = make([]slot, n)
	for i := range c.slots {
		c.slots[i].c = c
	}
	return c, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// NewStream returns a Stream that has no server stream yet: its first
// request opens one, on one of the Client's sockets.
func (c *Client) NewStream() session.Stream { return &Stream{c: c} }

// CloseIdle closes the sockets that carry no open stream and wait for no
// answer; the next stream that needs one dials again.
func (c *Client) CloseIdle() {
	for i := range c.slots {
		if k := c.slots[i].live(); k != nil {
			go k.close(true)
		}
	}
}

// Close closes every socket (sending the close frame, within a bounded
// time), which ends the server streams on them and rolls back their
// transactions. Streams fail afterwards.
func (c *Client) Close() error {
	c.closed.Store(true)
	var wg sync.WaitGroup
	for i := range c.slots {
		if k := c.slots[i].live(); k != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k.close(false)
			}()
		}
	}
	wg.Wait()
	return nil
}

var errClosed = &session.Error{Message: "the client is closed", Safe: true}

// Version returns the Hrana version the server speaks, from the
// subprotocol negotiated by the last socket that connected, dialing one if
// none has yet.
func (c *Client) Version(ctx context.Context) (int, error) {
	if v := c.version.Load(); v != 0 {
		return int(v), nil
	}
	k, err := c.acquire(ctx)
	if err != nil {
		return 0, err
	}
	return k.version, nil
}

// acquire returns a live socket for a new server stream. The slot is chosen
// round robin, so that streams spread over the sockets; a slot that has no
// socket yet dials one, and meanwhile the stream goes to another slot's
// live socket if there is one, or waits for the dial. One dial at a time
// runs per slot; after a failure the slot waits (see Options.MinBackoff)
// before dialing again. A request that meets the backoff waits it out
// when little of it is left (up to backoffWait, and within its context),
// so that the first requests after a server comes back do not fail with
// the error of a dial made while it was down; otherwise it fails at once
// with that error (and always after a refused hello).
func (c *Client) acquire(ctx context.Context) (*socket, error) {
	k, backedOff, err := c.acquireOnce(ctx)
	// A refused hello will be refused again: no waiting for that.
	if err == nil || !backedOff || errors.Is(err, session.ErrAuth) || !c.shortBackoff(ctx) {
		return k, err
	}
	k, _, err = c.acquireOnce(ctx)
	return k, err
}

// backoffWait is the most of a backoff a request waits out (see acquire).
const backoffWait = time.Second

// shortBackoff waits until the Client's backoff has passed and reports
// true, if it ends within backoffWait and ctx's deadline; otherwise it
// reports false at once.
func (c *Client) shortBackoff(ctx context.Context) bool {
	c.mu.Lock()
	wait := time.Until(c.retryAt)
	c.mu.Unlock()
	if wait <= 0 || wait > backoffWait {
		return false
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// acquireOnce is one attempt of acquire; backedOff reports that it failed
// for the backoff, without dialing or waiting for a dial.
func (c *Client) acquireOnce(ctx context.Context) (k *socket, backedOff bool, err error) {
	if c.closed.Load() {
		return nil, false, errClosed
	}
	n := len(c.slots)
	start := int(c.next.Add(1) % uint32(n))
	for i := range n {
		if k := c.slots[(start+i)%n].live(); k != nil {
			if i > 0 {
				c.slots[start].kick()
			}
			return k, false, nil
		}
	}
	var backoffErr error
	for i := range n {
		sl := &c.slots[(start+i)%n]
		done, err := sl.dial()
		if err != nil {
			if backoffErr == nil {
				backoffErr = err
			}
			continue
		}
		select {
		case <-done:
		case <-ctx.Done():
			return nil, false, &session.Error{Message: "dial failed", Safe: true, Err: ctx.Err()}
		}
		if k := sl.live(); k != nil {
			return k, false, nil
		}
		// One failed dial is enough: the others would meet the same server.
		return nil, false, c.failure()
	}
	return nil, true, backoffErr
}

// redact removes the token and header values from text the server or a
// proxy sent back.
func (c *Client) redact(s string) string {
	for _, secret := range c.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	return s
}

// scrub returns err, or an error of the same text redacted if it holds a
// secret (its chain is then lost, which only a proxy that echoes
// credentials costs).
func (c *Client) scrub(err error) error {
	if err == nil || len(c.secrets) == 0 {
		return err
	}
	if s := err.Error(); c.redact(s) != s {
		return errors.New(c.redact(s))
	}
	return err
}

// backoff is the wait after the nth consecutive failure of a slot: doubling
// from MinBackoff up to MaxBackoff, each drawn from its upper half so that
// clients that failed together do not dial again together.
func (c *Client) backoff(n int) time.Duration {
	d := c.minBackoff
	for i := 1; i < n && d < c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// failed records a failed dial, or a socket that died before the server
// accepted its hello: no slot dials again before the backoff has passed.
func (c *Client) failed(err *session.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	c.lastErr = err
	c.retryAt = time.Now().Add(c.backoff(c.failures))
}

// accepted records that the server accepted a socket's hello.
func (c *Client) accepted() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = 0
}

// backingOff returns the last failure, marked with the wait left, while
// the Client backs off; nil when a dial may go ahead.
func (c *Client) backingOff() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	wait := time.Until(c.retryAt)
	if wait <= 0 || c.lastErr == nil {
		return nil
	}
	e := *c.lastErr
	e.Message += fmt.Sprintf(" (next dial in %v)", wait.Round(time.Millisecond))
	return &e
}

// failure returns the last failure.
func (c *Client) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil {
		return &session.Error{Message: "dial failed", Safe: true, BadConn: true}
	}
	return c.lastErr
}

// A slot holds at most one socket and dials it when needed, one dial at a
// time.
type slot struct {
	c *Client

	mu      sync.Mutex
	sock    *socket       // live, or nil
	dialing chan struct{} // closed when the dial under way ends; nil if none
}

// live returns the slot's socket if it is alive.
func (sl *slot) live() *socket {
	sl.mu.Lock()
	k := sl.sock
	sl.mu.Unlock()
	if k != nil && k.alive() {
		return k
	}
	return nil
}

// dial returns a channel closed when the slot's dial (started now if none
// is under way) ends, or the last failure while the Client backs off.
func (sl *slot) dial() (<-chan struct{}, error) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.dialing != nil {
		return sl.dialing, nil
	}
	if k := sl.sock; k != nil && k.alive() {
		done := make(chan struct{})
		close(done)
		return done, nil
	}
	if err := sl.c.backingOff(); err != nil {
		return nil, err
	}
	sl.dialing = make(chan struct{})
	go sl.run(sl.dialing)
	return sl.dialing, nil
}

// kick starts a dial if the slot has no socket and may dial, without
// waiting for it.
func (sl *slot) kick() { _, _ = sl.dial() }

func (sl *slot) run(done chan struct{}) {
	k, err := sl.c.dial(sl)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.dialing = nil
	close(done)
	if err != nil {
		sl.c.failed(err)
		return
	}
	if sl.c.closed.Load() {
		go k.close(false)
		return
	}
	sl.c.version.Store(int32(k.version))
	if k.alive() { // not refused at hello already
		sl.sock = k
	}
}

// died forgets k, which has died.
func (sl *slot) died(k *socket) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.sock == k {
		sl.sock = nil
	}
}
