package ws

import (
	"context"
	"crypto/tls"
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
	"github.com/gohrana/libsql/transport"
	"github.com/gohrana/libsql/transport/internal/headers"
)

// Defaults of the options.
const (
	// defaultSockets is how many sockets a client opens at most.
	defaultSockets = 2
	// defaultPingInterval is how long a socket may go without receiving
	// anything before it is pinged.
	defaultPingInterval = 15 * time.Second
	// defaultPingTimeout bounds the wait for a ping's pong.
	defaultPingTimeout = 10 * time.Second
	// defaultDialTimeout bounds a dial: TCP, TLS and the WebSocket handshake.
	defaultDialTimeout = 10 * time.Second
	// defaultWriteTimeout bounds the write of one burst of messages.
	defaultWriteTimeout = 10 * time.Second
	// defaultReadLimit bounds one server message. sqld's own limit is 10 MB
	// of result data per response (--max-response-size); its encoding is
	// larger.
	defaultReadLimit = 64 << 20
	// defaultCursorBatch is the max_count of a cursor's fetches (sqld also
	// stops a fetch at an eighth of its response limit in bytes).
	defaultCursorBatch = 1000
	// defaultCursorAhead is how many fetches a cursor keeps asked for
	// beyond the one being read.
	defaultCursorAhead = 2
	// defaultMinBackoff and defaultMaxBackoff bound the wait before a
	// socket slot dials again after failing.
	defaultMinBackoff = 100 * time.Millisecond
	defaultMaxBackoff = 5 * time.Second
)

// The Hrana versions a client speaks.
const (
	v2 = 2
	v3 = 3
)

// The WebSocket subprotocols of Hrana.
const (
	subprotoHrana2   = "hrana2"
	subprotoHrana3   = "hrana3"
	subprotoProtobuf = "hrana3-protobuf"
)

// options are transport.Options and the settings this package's tests turn.
// Zero values mean the defaults.
type options struct {
	transport.Options
	// pingInterval is how long a socket may receive nothing before it is
	// pinged; a ping that gets no pong within pingTimeout kills the socket,
	// so a dead connection is found within their sum even when idle. A
	// negative pingInterval turns pings off.
	pingInterval, pingTimeout time.Duration
	// dialTimeout bounds a dial, writeTimeout the write of one burst of
	// messages (a socket whose writes stall that long is killed).
	dialTimeout, writeTimeout time.Duration
	// readLimit bounds one server message; a larger one kills its socket.
	readLimit int64
	// cursorBatch is how many entries a cursor asks for at a time, and
	// cursorAhead how many fetches it keeps asked for ahead of reading.
	cursorBatch, cursorAhead int
}

var _ transport.Transport = (*client)(nil)

// client carries the streams of many sessions over a few WebSocket sockets
// to one server. It is safe for concurrent use.
type client struct {
	url       string
	token     string
	tokens    func(context.Context) (string, error) // transport.Options.TokenSource
	hdr       *headers.Set
	tls       *tls.Config
	proxy     *url.URL // the proxy sockets are tunnelled through; nil: none
	want      codec.SocketCodec
	json      codec.SocketCodec // nil: no fallback from want's Protobuf
	subprotos []string

	timeout      time.Duration
	pingInterval time.Duration
	pingTimeout  time.Duration
	dialTimeout  time.Duration
	writeTimeout time.Duration
	readLimit    int64
	cursorBatch  uint32
	cursorAhead  int
	minBackoff   time.Duration
	maxBackoff   time.Duration

	// traceFetch is transport.Options.TraceFetch.
	traceFetch func(context.Context) func(rows, bytes int, err error)

	perStream bool          // each stream has a socket of its own (Options.Sockets < 0)
	slots     []slot        // shared by the streams outside a transaction
	own       ownSockets    // one per stream in a transaction (see own.go)
	next      atomic.Uint32 // round robin over slots
	version   atomic.Int32  // of the last socket that connected; 0 before
	closed    atomic.Bool

	// The backoff is the client's, not a slot's: every slot dials the same
	// server, so one failure says the others would fail too.
	mu       sync.Mutex
	failures int       // consecutive: failed dials and sockets refused at hello
	retryAt  time.Time // no kick dials before
}

// New returns a WebSocket transport for o. It dials nothing: sockets connect
// when streams first need them.
func New(o transport.Options) (transport.Transport, error) { return newClient(options{Options: o}) }

func newClient(o options) (*client, error) {
	sc, ok := o.Codec.(codec.SocketCodec)
	if !ok {
		return nil, errors.New("the codec cannot speak Hrana over WebSocket")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("URL scheme %q is not ws, wss, http or https", u.Scheme)
	}
	if u.User != nil {
		return nil, errors.New("the URL must not carry credentials; use AuthToken")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	proxy, err := proxyFor(o.Proxy, u)
	if err != nil {
		return nil, err
	}
	c := &client{
		url:          u.String(),
		proxy:        proxy,
		token:        o.AuthToken,
		tokens:       o.TokenSource,
		hdr:          headers.New(o.AuthToken, o.Headers, o.Namespace),
		want:         sc,
		timeout:      max(o.Timeout, 0),
		pingInterval: o.pingInterval,
		pingTimeout:  o.pingTimeout,
		dialTimeout:  o.dialTimeout,
		writeTimeout: o.writeTimeout,
		readLimit:    o.readLimit,
		minBackoff:   o.MinBackoff,
		maxBackoff:   o.MaxBackoff,
	}
	switch {
	case sc.Format() == codec.FormatJSON:
		c.subprotos = []string{subprotoHrana3, subprotoHrana2}
	case o.Fallback:
		js, ok := o.JSON.(codec.SocketCodec)
		if !ok || js.Format() != codec.FormatJSON {
			return nil, errors.New("Options.JSON must be a JSON codec that speaks Hrana over WebSocket")
		}
		c.json = js
		c.subprotos = []string{subprotoProtobuf, subprotoHrana3, subprotoHrana2}
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
	setDefault(&c.pingTimeout, defaultPingTimeout)
	setDefault(&c.pingInterval, defaultPingInterval)
	setDefault(&c.dialTimeout, defaultDialTimeout)
	setDefault(&c.writeTimeout, defaultWriteTimeout)
	setDefault(&c.minBackoff, defaultMinBackoff)
	setDefault(&c.maxBackoff, defaultMaxBackoff)
	c.maxBackoff = max(c.maxBackoff, c.minBackoff)
	if c.readLimit <= 0 {
		c.readLimit = defaultReadLimit
	}
	c.cursorBatch = defaultCursorBatch
	if o.cursorBatch > 0 {
		c.cursorBatch = uint32(min(o.cursorBatch, 1<<20))
	}
	c.cursorAhead = defaultCursorAhead
	if o.cursorAhead > 0 {
		c.cursorAhead = min(o.cursorAhead, 16)
	}
	c.traceFetch = o.TraceFetch
	n := o.Sockets
	if n < 0 {
		c.perStream = true
	}
	if n <= 0 {
		n = defaultSockets
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

// NewStream returns a stream that has no server stream yet: its first
// request opens one, on one of the client's sockets.
func (c *client) NewStream() transport.Stream { return &stream{c: c, own: c.perStream} }

// CloseIdle closes the sockets that carry no open stream and wait for no
// answer; the next stream that needs one dials again.
func (c *client) CloseIdle() {
	for i := range c.slots {
		if sk := c.slots[i].live(); sk != nil {
			go sk.close(true)
		}
	}
	c.own.closeIdle()
}

// Close closes every socket (sending the close frame, within a bounded
// time), which ends the server streams on them and rolls back their
// transactions. Streams fail afterwards.
func (c *client) Close() error {
	c.closed.Store(true)
	var wg sync.WaitGroup
	closeSocket := func(sk *socket) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sk.close(false)
		}()
	}
	for i := range c.slots {
		if sk := c.slots[i].live(); sk != nil {
			closeSocket(sk)
		}
	}
	for _, sk := range c.own.sockets() {
		closeSocket(sk)
	}
	wg.Wait()
	return nil
}

var errClosed = &transport.Error{Message: "the client is closed", Safe: true}

// Version returns the Hrana version the server speaks, from the
// subprotocol negotiated by the last socket that connected, dialing one if
// none has yet.
func (c *client) Version(ctx context.Context) (int, error) {
	if v := c.version.Load(); v != 0 {
		return int(v), nil
	}
	if c.perStream {
		sk, err := c.acquireOwn(ctx)
		if err != nil {
			return 0, err
		}
		c.putOwn(sk) // for the stream that asks next
		return sk.version, nil
	}
	sk, err := c.acquire(ctx)
	if err != nil {
		return 0, err
	}
	return sk.version, nil
}

// acquire returns a live socket for a new server stream. The slot is chosen
// round robin, so that streams spread over the sockets; a slot that has no
// socket yet dials one, and meanwhile the stream goes to another slot's
// live socket if there is one, or waits for the dial, within ctx. One dial
// at a time runs per slot, and a request that finds one under way waits
// for it. A request dials whatever the client's backoff says: the backoff
// spaces out only the dials no request waits for (kick), so the first
// request after a server comes back connects, and a failure is always that
// of a dial made for the request, never an older one.
func (c *client) acquire(ctx context.Context) (*socket, error) {
	if c.closed.Load() {
		return nil, errClosed
	}
	n := len(c.slots)
	start := int(c.next.Add(1) % uint32(n))
	for i := range n {
		if sk := c.slots[(start+i)%n].live(); sk != nil {
			if i > 0 {
				c.slots[start].kick()
			}
			return sk, nil
		}
	}
	sl := &c.slots[start]
	done := sl.dial(true)
	select {
	case <-done:
	case <-ctx.Done():
		return nil, &transport.Error{Message: "cannot connect to the server", Safe: true, Err: ctx.Err()}
	}
	return sl.result()
}

// backoff is the wait after the nth consecutive failure of a slot: doubling
// from MinBackoff up to MaxBackoff, each drawn from its upper half so that
// clients that failed together do not dial again together.
func (c *client) backoff(n int) time.Duration {
	d := c.minBackoff
	for i := 1; i < n && d < c.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// failed records a failed dial, or a socket that died before the server
// accepted its hello: no kick dials again before the backoff has passed.
func (c *client) failed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	c.retryAt = time.Now().Add(c.backoff(c.failures))
}

// accepted records that the server accepted a socket's hello.
func (c *client) accepted() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = 0
}

// backingOff reports whether the client backs off after failures.
func (c *client) backingOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures > 0 && time.Until(c.retryAt) > 0
}

// A slot holds at most one socket and dials it when needed, one dial at a
// time.
type slot struct {
	c   *client
	own bool // dialed for one stream (see acquireOwn)

	mu      sync.Mutex
	sock    *socket          // live, or nil
	dialing chan struct{}    // closed when the dial under way ends; nil if none
	err     *transport.Error // how the last dial failed; nil if it did not
	dialed  *socket          // what the last dial connected, even once dead
}

// live returns the slot's socket if it is alive.
func (sl *slot) live() *socket {
	sl.mu.Lock()
	sk := sl.sock
	sl.mu.Unlock()
	if sk != nil && sk.alive() {
		return sk
	}
	return nil
}

// dial returns a channel closed when the slot's dial (started now if none
// is under way and the slot has no live socket) ends. Without force it
// starts none while the client backs off, and returns nil then.
func (sl *slot) dial(force bool) <-chan struct{} {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.dialing != nil {
		return sl.dialing
	}
	if sk := sl.sock; sk != nil && sk.alive() {
		done := make(chan struct{})
		close(done)
		return done
	}
	if !force && sl.c.backingOff() {
		return nil
	}
	sl.dialing = make(chan struct{})
	go sl.run(sl.dialing)
	return sl.dialing
}

// kick starts a dial if the slot has no socket and the client does not
// back off, without waiting for it.
func (sl *slot) kick() { sl.dial(false) }

// result returns the slot's live socket, or the failure of its last dial.
func (sl *slot) result() (*socket, error) {
	sl.mu.Lock()
	sk, err, dialed := sl.sock, sl.err, sl.dialed
	sl.mu.Unlock()
	switch {
	case sk != nil && sk.alive():
		return sk, nil
	case sl.c.closed.Load():
		return nil, errClosed
	case err != nil:
		return nil, err
	case dialed != nil && dialed.failure() != nil:
		return nil, dialed.failure() // it died since: refused at hello, closed
	}
	// The socket died since, or the server refused its hello.
	return nil, &transport.Error{Message: "cannot connect to the server: the socket closed as it opened", Safe: true, Resend: true}
}

// run dials, and records the outcome before it closes done: a waiter reads
// this dial's failure, not an older one.
func (sl *slot) run(done chan struct{}) {
	sk, err := sl.c.dial(sl)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.dialing, sl.err, sl.dialed = nil, err, sk
	defer close(done)
	if err != nil {
		sl.c.failed()
		return
	}
	if sl.c.closed.Load() {
		go sk.close(false)
		return
	}
	sl.c.version.Store(int32(sk.version))
	if sk.alive() {
		sl.sock = sk
	} else {
		sl.err = sk.failure() // refused at hello already
	}
}

// died forgets sk, which has died.
func (sl *slot) died(sk *socket) {
	if sl.own {
		sl.c.own.died(sk)
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.sock == sk {
		sl.sock = nil
	}
}

// isAuthError reports whether err is the server refusing the credentials (a
// hello refused with one of sqld's AUTH_ codes, or a handshake answered 401):
// they would be refused again.
func isAuthError(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && (e.HTTPStatus == http.StatusUnauthorized || strings.HasPrefix(e.Code, "AUTH_"))
}

// helloToken returns the token a socket's next burst must have said hello
// with: the TokenSource's, or "" without one (the socket's hello at dial
// carried Options.AuthToken).
func (c *client) helloToken(ctx context.Context) (string, *transport.Error) {
	if c.tokens == nil {
		return "", nil
	}
	tok, err := c.tokens(ctx)
	if err != nil {
		return "", &transport.Error{Message: "the auth token source failed", Safe: true, Err: err}
	}
	c.hdr.Remember(tok)
	return tok, nil
}

// proxyFor asks proxy (transport.Options.Proxy) which proxy the sockets to
// u go through, as for the HTTP URL of the same place (the environment's
// HTTPS_PROXY for wss, HTTP_PROXY for ws).
func proxyFor(proxy func(*http.Request) (*url.URL, error), u *url.URL) (*url.URL, error) {
	if proxy == nil {
		return nil, nil
	}
	hu := *u
	hu.Scheme = "http"
	if u.Scheme == "wss" {
		hu.Scheme = "https"
	}
	p, err := proxy(&http.Request{Method: http.MethodGet, URL: &hu, Host: hu.Host, Header: http.Header{}})
	if err != nil {
		return nil, fmt.Errorf("the proxy setting: %w", err)
	}
	return p, nil
}
