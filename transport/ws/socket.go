package ws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/session"
)

// errIdle is the failure of a socket closed as idle (see
// Client.CloseIdle); nothing awaited its answers.
var errIdle = &session.Error{Message: "socket closed as idle", Safe: true, BadConn: true}

// closeTimeout bounds the close handshake of a socket being closed.
const closeTimeout = 2 * time.Second

// maxKeptBuffer is the largest write buffer a socket keeps between bursts.
const maxKeptBuffer = 1 << 20

// A socket is one WebSocket connection and the server streams on it. Its
// reader goroutine is the only one that reads, and it never stops while
// the socket lives: sqld stops reading requests when its responses are not
// read, so a socket whose reader waited for anything could stall every
// stream on it. Writes are serialized, a burst at a time (see send). The
// request ids, stream ids and cursor ids are the socket's, and so is the
// table of answers awaited.
type socket struct {
	c       *Client
	slot    *slot
	ws      *websocket.Conn
	w       *wire
	codec   codec.SocketCodec
	typ     websocket.MessageType
	version int
	born    time.Time

	wmu  sync.Mutex // one burst at a time; guards wbuf and ends
	wbuf []byte
	ends []int

	mu      sync.Mutex
	err     *session.Error // why the socket died; nil while it lives
	safe    bool           // err says that the requests it failed had no effect
	pending map[int32]waiter
	lastReq int32
	streams idSet // stream ids the server holds
	cursors idSet // cursor ids the server may hold
	sqls    idSet // stored SQL ids

	dead     chan struct{} // closed when the socket dies
	accepted atomic.Bool   // the server answered the hello with hello_ok
	lastRead atomic.Int64  // time since born of the latest bytes received

	// The reader goroutine's own: the buffer the next message is read into
	// and the message it is decoded into, both swapped with an exchange's
	// spares when the message is an answer it awaits.
	rbuf []byte
	rmsg *codec.ServerMsg
}

// dial connects a socket for sl: the WebSocket handshake, then the hello,
// written before anything else and not waited for (hello_error arrives as
// the socket's failure).
func (c *Client) dial(sl *slot) (*socket, *session.Error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.dialTimeout)
	defer cancel()
	var raw atomic.Pointer[wire]
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		// A database connection should not silently go through a proxy.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			w := &wire{Conn: conn}
			raw.Store(w)
			return w, nil
		},
		TLSClientConfig:     c.tls,
		TLSHandshakeTimeout: c.dialTimeout,
		DisableKeepAlives:   true,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	conn, resp, err := websocket.Dial(ctx, c.url, &websocket.DialOptions{
		HTTPClient:   hc,
		HTTPHeader:   c.headers,
		Subprotocols: c.subprotos,
	})
	if err != nil {
		return nil, c.dialFailed(resp, err)
	}
	k := &socket{c: c, slot: sl, ws: conn, w: raw.Load(), dead: make(chan struct{}), born: time.Now(),
		pending: map[int32]waiter{}, rmsg: new(codec.ServerMsg)}
	switch conn.Subprotocol() {
	case subprotoHrana3:
		k.version, k.codec = V3, c.jsonCodec()
	case subprotoHrana2:
		k.version, k.codec = V2, c.jsonCodec()
	case subprotoProtobuf:
		k.version, k.codec = V3, c.want
	}
	if k.codec == nil || k.w == nil {
		_ = conn.CloseNow()
		return nil, &session.Error{Safe: true, Message: fmt.Sprintf("dial failed: the server chose subprotocol %q, not one of %v", conn.Subprotocol(), c.subprotos)}
	}
	k.typ = websocket.MessageText
	if k.codec.Format() == codec.FormatProtobuf {
		k.typ = websocket.MessageBinary
	}
	conn.SetReadLimit(c.readLimit)
	hello, err := k.codec.AppendHello(nil, c.token)
	if err == nil {
		k.w.cork(c.writeTimeout)
		err = conn.Write(context.Background(), k.typ, hello)
		if _, ferr := k.w.uncork(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		_ = conn.CloseNow()
		return nil, &session.Error{Safe: true, BadConn: true, Message: "hello failed", Err: c.scrub(err)}
	}
	go k.read()
	if c.pingInterval > 0 {
		go k.ping()
	}
	return k, nil
}

// jsonCodec is the codec for a JSON subprotocol.
func (c *Client) jsonCodec() codec.SocketCodec {
	if c.want.Format() == codec.FormatJSON {
		return c.want
	}
	return c.fallback
}

// dialFailed is the error of a failed handshake. Nothing was sent, so it
// is Safe; an answered handshake (an HTTP status) is not BadConn, since
// another connection would get the same answer.
func (c *Client) dialFailed(resp *http.Response, err error) *session.Error {
	e := &session.Error{Message: "dial failed", Safe: true, Err: c.scrub(err)}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		e.HTTPStatus = resp.StatusCode
		e.Err = nil
		e.Message = fmt.Sprintf("the WebSocket handshake was answered with HTTP %d", resp.StatusCode)
		if resp.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			if len(body) > 0 {
				e.Message += ": " + c.redact(string(body))
			}
		}
		return e
	}
	e.BadConn = true
	return e
}

// alive reports whether the socket can take requests.
func (k *socket) alive() bool {
	select {
	case <-k.dead:
		return false
	default:
		return true
	}
}

// failure returns why the socket died, or nil.
func (k *socket) failure() *session.Error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// unsent is the error of a request the dead socket never sent: Safe, and
// BadConn (another connection may run it) unless the socket's own error
// says otherwise (a refused hello, a closed client); k.mu is held.
func (k *socket) unsent() *session.Error {
	if k.safe {
		return k.err
	}
	e := *k.err
	e.Safe, e.BadConn = true, true
	return &e
}

// fail kills the socket: every awaited answer fails with err (safe says
// the requests certainly had no effect), and the slot forgets the socket.
// Only the first call counts.
func (k *socket) fail(err *session.Error, safe bool) {
	if k.kill(err, safe, false) {
		_ = k.ws.CloseNow()
	}
}

// kill marks the socket dead with err, unless it already is (or, with
// ifIdle, unless it carries a stream or awaits an answer), fails what it
// awaited and tells the slot; the caller then closes the connection. It
// reports whether it did.
func (k *socket) kill(err *session.Error, safe, ifIdle bool) bool {
	k.mu.Lock()
	if k.err != nil || ifIdle && (len(k.streams.used) > 0 || len(k.pending) > 0) {
		k.mu.Unlock()
		return false
	}
	k.err, k.safe = err, safe
	if !k.accepted.Load() && err != errClosed && err != errIdle {
		// A socket the server never accepted counts as a failed dial,
		// recorded before anyone can see the socket dead and dial again.
		k.c.failed(err)
	}
	pending := k.pending
	k.pending = nil
	k.mu.Unlock()
	close(k.dead)
	for _, w := range pending {
		if w.ex != nil {
			w.ex.fail(err, safe)
		}
	}
	k.slot.died(k)
	return true
}

// close closes the socket with the WebSocket close handshake, bounded by
// closeTimeout (the server streams on it end, which rolls back their
// transactions); with ifIdle, only if it carries no stream and awaits no
// answer.
func (k *socket) close(ifIdle bool) {
	err := errClosed
	if ifIdle {
		err = errIdle
	}
	if !k.kill(err, true, ifIdle) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = k.ws.Close(websocket.StatusNormalClosure, "")
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = k.ws.CloseNow()
	}
}

// send writes the requests of ex (which has been reset for them) in one
// burst, each awaited by its waiter in ex. sent reports whether any of it
// may have reached the server. On failure ex is quiet: nothing touches it
// any more and its done has been consumed.
//
// Every request is encoded before the first is written, so that one the
// codec refuses fails the burst with nothing sent.
func (k *socket) send(ex *exchange, reqs []codec.SocketRequest) (sent bool, err *session.Error) {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	if err := k.encode(reqs); err != nil {
		return false, err
	}
	k.mu.Lock()
	if k.err != nil {
		defer k.mu.Unlock()
		return false, k.unsent()
	}
	for i := range reqs {
		k.pending[reqs[i].RequestID] = waiter{ex: ex, i: int32(i)}
	}
	k.mu.Unlock()
	sent, err = k.write()
	if err != nil {
		// The socket is dead: its failure completes every waiter.
		<-ex.done
	}
	return sent, err
}

// sendDetached writes requests whose answers no one awaits (closes) in one
// burst, ignoring failures: a socket that cannot take them is dying, and
// what they close dies with it.
func (k *socket) sendDetached(reqs []codec.SocketRequest) {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	if k.encode(reqs) != nil {
		return
	}
	k.mu.Lock()
	if k.err != nil {
		k.mu.Unlock()
		return
	}
	for i := range reqs {
		k.pending[reqs[i].RequestID] = waiter{}
	}
	k.mu.Unlock()
	_, _ = k.write()
}

// encode gives each request an id and encodes them all into k.wbuf, the
// end of each in k.ends; k.wmu is held, so no other burst takes ids in
// the meantime.
func (k *socket) encode(reqs []codec.SocketRequest) *session.Error {
	k.mu.Lock()
	if k.err != nil {
		defer k.mu.Unlock()
		return k.unsent()
	}
	for i := range reqs {
		reqs[i].RequestID = k.requestID()
	}
	k.mu.Unlock()
	k.wbuf, k.ends = k.wbuf[:0], k.ends[:0]
	for i := range reqs {
		var err error
		if k.wbuf, err = k.codec.AppendSocketRequest(k.wbuf, &reqs[i]); err != nil {
			return &session.Error{Message: "encode failed", Safe: true, Err: err}
		}
		k.ends = append(k.ends, len(k.wbuf))
	}
	return nil
}

// write writes the encoded burst; k.wmu is held. A failed write kills the
// socket.
func (k *socket) write() (sent bool, err *session.Error) {
	k.w.cork(k.c.writeTimeout)
	var werr error
	start := 0
	for _, end := range k.ends {
		// The background context: coder/websocket closes the connection
		// when a write's context ends. The wire's deadline bounds it.
		if werr = k.ws.Write(context.Background(), k.typ, k.wbuf[start:end]); werr != nil {
			break
		}
		start = end
	}
	sent, ferr := k.w.uncork()
	if werr == nil {
		werr = ferr
	}
	if cap(k.wbuf) > maxKeptBuffer {
		k.wbuf = nil
	}
	if werr != nil {
		e := &session.Error{Message: "write failed", Safe: !sent, BadConn: !sent, Err: k.c.scrub(werr)}
		k.fail(e, false)
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.err != e {
			// The socket had died already (the reason the write failed):
			// its error says more.
			if !sent || k.safe {
				return sent, k.unsent()
			}
			e = &session.Error{Message: k.err.Message, Err: k.err.Err, Code: k.err.Code}
		}
		return sent, e
	}
	return true, nil
}

// requestID returns an id no awaited request has; k.mu is held, and
// k.wmu, so that the ids of one burst differ though none is registered
// yet.
func (k *socket) requestID() int32 {
	for {
		k.lastReq++
		if k.lastReq <= 0 {
			k.lastReq = 1
		}
		if _, used := k.pending[k.lastReq]; !used {
			return k.lastReq
		}
	}
}

// openStream allocates a stream id, or fails if the socket is dead.
func (k *socket) openStream() (int32, *session.Error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return 0, k.unsent()
	}
	return k.streams.alloc(), nil
}

// alloc allocates an id in one of the socket's id sets; 0 if the socket is
// dead.
func (k *socket) alloc(set *idSet) int32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return 0
	}
	return set.alloc()
}

// release frees ids of one of the socket's id sets.
func (k *socket) release(set *idSet, ids ...int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		set.free(id)
	}
}

// read is the socket's reader goroutine: it reads every message until the
// socket dies, and hands each answer to the exchange awaiting it.
func (k *socket) read() {
	for {
		typ, r, err := k.ws.Reader(context.Background())
		if err != nil {
			k.fail(k.readFailed(err), false)
			return
		}
		if typ != k.typ {
			k.fail(&session.Error{Message: fmt.Sprintf("protocol error: the server sent a %v message on a %v socket", typ, k.typ)}, false)
			return
		}
		if err := k.readMessage(r); err != nil {
			k.fail(k.readFailed(err), false)
			return
		}
		m := k.rmsg
		if err := k.codec.DecodeServerMsg(k.rbuf, m); err != nil {
			k.fail(&session.Error{Message: "decode failed", Err: err}, false)
			return
		}
		switch m.Type {
		case codec.ServerHelloOK:
			k.accepted.Store(true)
			k.c.accepted()
		case codec.ServerHelloError:
			// The server ignores what follows a refused hello, so the
			// requests sent with it had no effect.
			k.fail(k.helloFailed(&m.Error), true)
			return
		case codec.ServerResponseOK, codec.ServerResponseError:
			if !k.deliver(m.RequestID) {
				return
			}
		default:
			k.fail(&session.Error{Message: "protocol error: the server sent an unknown message"}, false)
			return
		}
		if cap(k.rbuf) > maxKeptBuffer {
			k.rbuf = nil // an unusually large message not handed over
		}
	}
}

// deliver hands the message just read to the exchange awaiting request id,
// taking that exchange's spares for the next read. It reports false after
// killing the socket for an answer no request awaits.
func (k *socket) deliver(id int32) bool {
	k.mu.Lock()
	w, ok := k.pending[id]
	delete(k.pending, id)
	dead := k.err != nil
	k.mu.Unlock()
	if !ok {
		if !dead {
			k.fail(&session.Error{Message: fmt.Sprintf("protocol error: the server answered request %d, which awaits no answer", id)}, false)
		}
		return false
	}
	if ex := w.ex; ex != nil {
		ex.msgs[w.i], k.rmsg = k.rmsg, ex.msgs[w.i]
		ex.bufs[w.i], k.rbuf = k.rbuf, ex.bufs[w.i]
		ex.complete()
	}
	return true
}

// readBlock is the least room a read asks for.
const readBlock = 4 << 10

// readMessage reads one message into k.rbuf, growing it as needed. Each
// read marks the socket as live for the pinger: a large message arriving
// slowly is no reason to ping.
func (k *socket) readMessage(r io.Reader) error {
	buf := k.rbuf[:0]
	for {
		if cap(buf)-len(buf) < readBlock {
			grown := make([]byte, len(buf), max(2*cap(buf), len(buf)+readBlock))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n > 0 {
			k.lastRead.Store(int64(time.Since(k.born)))
		}
		if err == io.EOF {
			k.rbuf = buf
			return nil
		}
		if err != nil {
			k.rbuf = buf[:0]
			return err
		}
	}
}

// readFailed is the error of a socket whose read failed: the server closed
// it (a restart, a protocol error it saw), the network failed, or a
// message was over the read limit.
func (k *socket) readFailed(err error) *session.Error {
	e := &session.Error{Message: "connection lost", Err: k.c.scrub(err)}
	var ce websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		e.Message = fmt.Sprintf("connection lost: a message over the read limit of %d bytes", k.c.readLimit)
	case errors.As(err, &ce):
		e.Message = "connection closed by the server"
	}
	return e
}

// helloFailed is the error of a refused hello: an authentication failure
// (its code starts with AUTH_), with the server's message.
func (k *socket) helloFailed(he *codec.Error) *session.Error {
	return &session.Error{Code: k.c.redact(he.Code), Message: k.c.redact(he.Message), Safe: true}
}

// ping pings the socket whenever it has received nothing for the ping
// interval, and kills it when a pong does not come within the timeout, so
// that a dead connection is found within a bounded time even when idle.
func (k *socket) ping() {
	every := k.c.pingInterval
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-k.dead:
			return
		case <-t.C:
		}
		quiet := time.Since(k.born) - time.Duration(k.lastRead.Load())
		if quiet < every {
			t.Reset(every - quiet)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), k.c.pingTimeout)
		err := k.ws.Ping(ctx)
		cancel()
		if err != nil {
			k.fail(&session.Error{Message: "connection lost: no pong within " + k.c.pingTimeout.String(), Err: k.c.scrub(err)}, false)
			return
		}
		k.lastRead.Store(int64(time.Since(k.born)))
		t.Reset(every)
	}
}

// idSet allocates the ids of one kind (streams, cursors, stored SQL) on a
// socket: positive, counting up and wrapping, never one in use.
type idSet struct {
	last int32
	used map[int32]struct{}
}

func (s *idSet) alloc() int32 {
	if s.used == nil {
		s.used = map[int32]struct{}{}
	}
	for {
		s.last++
		if s.last <= 0 {
			s.last = 1
		}
		if _, ok := s.used[s.last]; !ok {
			s.used[s.last] = struct{}{}
			return s.last
		}
	}
}

func (s *idSet) free(id int32) { delete(s.used, id) }
