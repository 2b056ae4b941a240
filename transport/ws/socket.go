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
	"github.com/gohrana/libsql/transport"
	"github.com/gohrana/libsql/transport/internal/neterr"
	"github.com/gohrana/libsql/transport/internal/proxy"
)

// errIdle is the failure of a socket closed as idle (see
// client.CloseIdle); nothing awaited its answers.
var errIdle = &transport.Error{Message: "socket closed as idle", Safe: true, Resend: true}

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
	c       *client
	slot    *slot
	ws      *websocket.Conn
	w       *corkConn
	codec   codec.SocketCodec
	typ     websocket.MessageType
	version int
	born    time.Time

	wmu   sync.Mutex // one burst at a time; guards wbuf, ends and hello
	wbuf  []byte
	ends  []int
	hello string // the token of the socket's latest hello

	mu      sync.Mutex
	err     *transport.Error // why the socket died; nil while it lives
	safe    bool             // err says that the requests it failed had no effect
	pending map[int32]waiter
	claimed *exchange // whose spares the reader decodes into (see claimSole)
	lastReq int32
	streams idSet // stream ids the server holds
	cursors idSet // cursor ids the server may hold
	sqls    idSet // stored SQL ids

	// lockstep: no reader goroutine; waiters read (lockstep.go). reading:
	// someone holds the read role (guarded by mu).
	lockstep bool
	reading  bool

	dead      chan struct{} // closed when the socket dies
	accepted  atomic.Bool   // the server answered the hello with hello_ok
	abandoned atomic.Bool   // closed by a lockstep reader whose wait ended
	lastRead  atomic.Int64  // time since born of the latest bytes received

	// The reader goroutine's own: the buffer every message is read into
	// (its bytes are then copied, or the buffer handed over, see take), a
	// small one for reading ahead without growing it (see readMessage), and
	// the message an answer is decoded into when the answer's exchange is
	// not known before decoding, swapped with that exchange's spare.
	scratch []byte
	probe   [probeSize]byte
	rmsg    *codec.ServerMsg
}

// dial connects a socket for sl: the WebSocket handshake, then the hello,
// written before anything else and not waited for (hello_error arrives as
// the socket's failure).
func (c *client) dial(sl *slot) (*socket, *transport.Error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.dialTimeout)
	defer cancel()
	var raw atomic.Pointer[corkConn]
	d := &net.Dialer{KeepAliveConfig: lockstepKeepAlive}
	tr := &http.Transport{
		// A proxy, if any, is a tunnel that DialContext digs (CONNECT):
		// many proxies pass no Upgrade in forward mode.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			var err error
			if c.proxy != nil {
				conn, err = proxy.Dial(ctx, d, c.proxy, addr, c.tls)
			} else {
				conn, err = d.DialContext(ctx, network, addr)
			}
			if err != nil {
				return nil, err
			}
			w := &corkConn{Conn: conn}
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
		HTTPHeader:   c.hdr.Header,
		Subprotocols: c.subprotos,
	})
	if err != nil {
		return nil, c.dialFailed(resp, err)
	}
	sk := &socket{c: c, slot: sl, ws: conn, w: raw.Load(), dead: make(chan struct{}), born: time.Now(),
		pending: map[int32]waiter{}, rmsg: msgPool.Get().(*codec.ServerMsg), lockstep: sl.own}
	switch conn.Subprotocol() {
	case subprotoHrana3:
		sk.version, sk.codec = v3, c.jsonCodec()
	case subprotoHrana2:
		sk.version, sk.codec = v2, c.jsonCodec()
	case subprotoProtobuf:
		sk.version, sk.codec = v3, c.want
	}
	if sk.codec == nil || sk.w == nil {
		_ = conn.CloseNow()
		return nil, &transport.Error{Safe: true, Message: fmt.Sprintf("cannot connect to the server: it chose the WebSocket subprotocol %q, not one of %v", conn.Subprotocol(), c.subprotos)}
	}
	sk.typ = websocket.MessageText
	if sk.codec.Format() == codec.FormatProtobuf {
		sk.typ = websocket.MessageBinary
	}
	conn.SetReadLimit(c.readLimit)
	tok := c.token
	if c.tokens != nil {
		t, terr := c.helloToken(ctx)
		if terr != nil {
			_ = conn.CloseNow()
			return nil, terr
		}
		tok = t
	}
	sk.hello = tok
	hello, err := sk.codec.AppendHello(nil, tok)
	if err == nil {
		sk.w.cork(c.writeTimeout)
		err = conn.Write(context.Background(), sk.typ, hello)
		if _, ferr := sk.w.uncork(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		_ = conn.CloseNow()
		return nil, &transport.Error{Safe: true, Resend: true, Message: "cannot connect to the server", Err: c.hdr.Scrub(err)}
	}
	if !sk.lockstep {
		go sk.read()
		if c.pingInterval > 0 {
			go sk.ping()
		}
	}
	return sk, nil
}

// jsonCodec is the codec for a JSON subprotocol.
func (c *client) jsonCodec() codec.SocketCodec {
	if c.want.Format() == codec.FormatJSON {
		return c.want
	}
	return c.json
}

// dialFailed is the error of a failed handshake. Nothing was sent, so it
// is Safe; an answered handshake (an HTTP status) is not Resend, since
// another connection would get the same answer.
func (c *client) dialFailed(resp *http.Response, err error) *transport.Error {
	e := &transport.Error{Message: "cannot connect to the server", Safe: true, Err: c.hdr.Scrub(err)}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		e.HTTPStatus = resp.StatusCode
		e.Err = nil
		e.Message = "the server refused the connection"
		if resp.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			if msg := neterr.StatusMessage(string(body), resp.StatusCode); msg != "" {
				e.Message = c.hdr.Redact(msg)
			}
		}
		return e
	}
	e.Resend = true
	if op := neterr.Dial(err); op != nil {
		e.Message, e.Err = "cannot connect to the server", c.hdr.Scrub(op)
	}
	return e
}

// alive reports whether the socket can take requests.
func (sk *socket) alive() bool {
	select {
	case <-sk.dead:
		return false
	default:
		return true
	}
}

// failure returns why the socket died, or nil.
func (sk *socket) failure() *transport.Error {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	return sk.err
}

// unsent is the error of a request the dead socket never sent: Safe, and
// Resend (another connection may run it) unless the socket's own error
// says otherwise (a refused hello, a closed client); sk.mu is held.
func (sk *socket) unsent() *transport.Error {
	if sk.safe {
		return sk.err
	}
	e := *sk.err
	e.Safe, e.Resend = true, true
	return &e
}

// fail kills the socket: every awaited answer fails with err (safe says
// the requests certainly had no effect), and the slot forgets the socket.
// Only the first call counts.
func (sk *socket) fail(err *transport.Error, safe bool) {
	if sk.kill(err, safe, false) {
		_ = sk.ws.CloseNow()
	}
}

// kill marks the socket dead with err, unless it already is (or, with
// ifIdle, unless it carries a stream or awaits an answer), fails what it
// awaited and tells the slot; the caller then closes the connection. It
// reports whether it did.
func (sk *socket) kill(err *transport.Error, safe, ifIdle bool) bool {
	sk.mu.Lock()
	if sk.err != nil || ifIdle && (len(sk.streams.used) > 0 || len(sk.pending) > 0) {
		sk.mu.Unlock()
		return false
	}
	sk.err, sk.safe = err, safe
	if !sk.accepted.Load() && err != errClosed && err != errIdle && !sk.abandoned.Load() {
		// A socket the server never accepted counts as a failed dial,
		// recorded before anyone can see the socket dead and dial again.
		sk.c.failed()
	}
	pending, claimed := sk.pending, sk.claimed
	sk.pending = nil
	sk.mu.Unlock()
	close(sk.dead)
	for _, w := range pending {
		if w.ex != nil && w.ex != claimed { // the reader fails a claimed one
			w.ex.fail(err, safe)
		}
	}
	sk.slot.died(sk)
	return true
}

// close closes the socket with the WebSocket close handshake, bounded by
// closeTimeout (the server streams on it end, which rolls back their
// transactions); with ifIdle, only if it carries no stream and awaits no
// answer.
func (sk *socket) close(ifIdle bool) {
	err := errClosed
	if ifIdle {
		err = errIdle
	}
	if !sk.kill(err, true, ifIdle) {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sk.ws.Close(websocket.StatusNormalClosure, "")
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = sk.ws.CloseNow()
	}
}

// send writes the requests of ex (which has been reset for them) in one
// burst, each awaited by its waiter in ex. sent reports whether any of it
// may have reached the server. On failure ex is quiet: nothing touches it
// any more and its done has been consumed.
//
// Every request is encoded before the first is written, so that one the
// codec refuses fails the burst with nothing sent.
//
// A token other than the one the socket last said hello with goes first, in
// a new hello (a TokenSource's token that changed): the server takes it for
// the socket's later requests, and its streams live on.
func (sk *socket) send(ex *exchange, reqs []codec.SocketRequest, token string) (sent bool, err *transport.Error) {
	sk.wmu.Lock()
	defer sk.wmu.Unlock()
	if err := sk.encode(reqs); err != nil {
		return false, err
	}
	if token != "" && token != sk.hello {
		if err := sk.prependHello(token); err != nil {
			return false, err
		}
		sk.hello = token
	}
	ex.wrote = len(sk.wbuf)
	sk.mu.Lock()
	if sk.err != nil {
		defer sk.mu.Unlock()
		return false, sk.unsent()
	}
	for i := range reqs {
		sk.pending[reqs[i].RequestID] = waiter{ex: ex, i: int32(i)}
	}
	sk.mu.Unlock()
	sent, err = sk.write()
	if err != nil {
		// The socket is dead: its failure completes every waiter.
		<-ex.done
	}
	return sent, err
}

// sendDetached writes requests whose answers no one awaits (closes) in one
// burst, ignoring failures: a socket that cannot take them is dying, and
// what they close dies with it.
func (sk *socket) sendDetached(reqs []codec.SocketRequest) {
	sk.wmu.Lock()
	defer sk.wmu.Unlock()
	if sk.encode(reqs) != nil {
		return
	}
	sk.mu.Lock()
	if sk.err != nil {
		sk.mu.Unlock()
		return
	}
	for i := range reqs {
		sk.pending[reqs[i].RequestID] = waiter{}
	}
	sk.mu.Unlock()
	_, _ = sk.write()
	if sk.lead() {
		sk.yieldRead() // to a drain, which reads the answers
	}
}

// encode gives each request an id and encodes them all into sk.wbuf, the
// end of each in sk.ends; sk.wmu is held, so no other burst takes ids in
// the meantime.
func (sk *socket) encode(reqs []codec.SocketRequest) *transport.Error {
	sk.mu.Lock()
	if sk.err != nil {
		defer sk.mu.Unlock()
		return sk.unsent()
	}
	for i := range reqs {
		reqs[i].RequestID = sk.requestID()
	}
	sk.mu.Unlock()
	sk.wbuf, sk.ends = sk.wbuf[:0], sk.ends[:0]
	for i := range reqs {
		var err error
		if sk.wbuf, err = sk.codec.AppendSocketRequest(sk.wbuf, &reqs[i]); err != nil {
			return &transport.Error{Message: "encode failed", Safe: true, Err: err}
		}
		sk.ends = append(sk.ends, len(sk.wbuf))
	}
	return nil
}

// prependHello puts a hello with token before the encoded burst; sk.wmu
// is held.
func (sk *socket) prependHello(token string) *transport.Error {
	hello, err := sk.codec.AppendHello(nil, token)
	if err != nil {
		return &transport.Error{Message: "encode failed", Safe: true, Err: err}
	}
	sk.wbuf = append(hello, sk.wbuf...)
	for i := range sk.ends {
		sk.ends[i] += len(hello)
	}
	sk.ends = append([]int{len(hello)}, sk.ends...)
	return nil
}

// write writes the encoded burst; sk.wmu is held. A failed write kills the
// socket.
func (sk *socket) write() (sent bool, err *transport.Error) {
	sk.w.cork(sk.c.writeTimeout)
	var werr error
	start := 0
	for _, end := range sk.ends {
		// The background context: coder/websocket closes the connection
		// when a write's context ends. The corkConn's deadline bounds it.
		if werr = sk.ws.Write(context.Background(), sk.typ, sk.wbuf[start:end]); werr != nil {
			break
		}
		start = end
	}
	sent, ferr := sk.w.uncork()
	if werr == nil {
		werr = ferr
	}
	if cap(sk.wbuf) > maxKeptBuffer {
		sk.wbuf = nil
	}
	if werr != nil {
		msg := "write failed"
		if errors.Is(werr, net.ErrClosed) {
			// The connection closed under the write: the websocket library
			// closes it when the server's close frame arrives. If the
			// reader has failed the socket with that frame already, its
			// error says more (below); no waiting for it.
			msg = "write failed: the server closed the connection"
		}
		e := &transport.Error{Message: msg, Safe: !sent, Resend: !sent, Err: sk.c.hdr.Scrub(werr)}
		sk.fail(e, false)
		sk.mu.Lock()
		defer sk.mu.Unlock()
		if sk.err != e {
			// The socket had died already (the reason the write failed):
			// its error says more.
			if !sent || sk.safe {
				return sent, sk.unsent()
			}
			e = &transport.Error{Message: sk.err.Message, Err: sk.err.Err, Code: sk.err.Code}
		}
		return sent, e
	}
	return true, nil
}

// requestID returns an id no awaited request has; sk.mu is held, and
// sk.wmu, so that the ids of one burst differ though none is registered
// yet.
func (sk *socket) requestID() int32 {
	for {
		sk.lastReq++
		if sk.lastReq <= 0 {
			sk.lastReq = 1
		}
		if _, used := sk.pending[sk.lastReq]; !used {
			return sk.lastReq
		}
	}
}

// openStream allocates a stream id, or fails if the socket is dead.
func (sk *socket) openStream() (int32, *transport.Error) {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if sk.err != nil {
		return 0, sk.unsent()
	}
	return sk.streams.alloc(), nil
}

// alloc allocates an id in one of the socket's id sets; 0 if the socket is
// dead.
func (sk *socket) alloc(set *idSet) int32 {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if sk.err != nil {
		return 0
	}
	return set.alloc()
}

// release frees ids of one of the socket's id sets.
func (sk *socket) release(set *idSet, ids ...int32) {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	for _, id := range ids {
		set.free(id)
	}
}

// read is the socket's reader goroutine: it reads every message until the
// socket dies, and hands each answer to the exchange awaiting it.
func (sk *socket) read() {
	for sk.readOne() {
	}
}

// readOne reads one message and hands it to the exchange awaiting it. It
// reports false once the socket has died. One goroutine at a time calls
// it: the socket's reader goroutine, or, on a lockstep socket, the holder
// of the read role (see lockstep.go).
func (sk *socket) readOne() bool {
	typ, r, err := sk.ws.Reader(context.Background())
	if err != nil {
		sk.fail(sk.readFailed(err), false)
		return false
	}
	if typ != sk.typ {
		sk.fail(&transport.Error{Message: fmt.Sprintf("protocol error: the server sent a %v message on a %v socket", typ, sk.typ)}, false)
		return false
	}
	if err := sk.readMessage(r); err != nil {
		sk.fail(sk.readFailed(err), false)
		return false
	}
	// With one answer awaited, this message is it (or the hello's
	// answer, or a protocol error): it is decoded straight into that
	// exchange's spares, whose buffer a reused Result may have brought.
	m, spare := sk.rmsg, []byte(nil)
	sole, inPlace := sk.claimSole()
	if inPlace {
		m, spare = sole.ex.msgs[sole.i], sole.ex.bufs[sole.i]
	}
	buf := sk.take(spare)
	err = sk.codec.DecodeServerMsg(buf, m)
	if inPlace && !sk.unclaim(sole) {
		return false // the socket died meanwhile; unclaim failed the exchange
	}
	if err != nil {
		sk.fail(&transport.Error{Message: "decode failed", Err: err}, false)
		return false
	}
	switch m.Type {
	case codec.ServerHelloOK:
		sk.accepted.Store(true)
		sk.c.accepted()
	case codec.ServerHelloError:
		// The server ignores what follows a refused hello, so the
		// requests sent with it had no effect.
		sk.fail(sk.helloFailed(&m.Error), true)
		return false
	case codec.ServerResponseOK, codec.ServerResponseError:
		return sk.deliver(m, buf)
	default:
		sk.fail(&transport.Error{Message: "protocol error: the server sent an unknown message"}, false)
		return false
	}
	return true
}

// claimSole returns the waiter of the one answer the socket awaits, if it
// awaits exactly one and an exchange waits for it, and claims that
// exchange's spares for the reader: until unclaim, a socket failure leaves
// the exchange to the reader (see kill) rather than complete it while the
// reader decodes into it.
func (sk *socket) claimSole() (waiter, bool) {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if len(sk.pending) != 1 {
		return waiter{}, false
	}
	for _, w := range sk.pending {
		if w.ex != nil {
			sk.claimed = w.ex
			return w, true
		}
	}
	return waiter{}, false
}

// unclaim ends a claim. It reports false if the socket died meanwhile: the
// claimed exchange is then failed here, as kill left it.
func (sk *socket) unclaim(w waiter) bool {
	sk.mu.Lock()
	sk.claimed = nil
	err, safe, dead := sk.err, sk.safe, sk.err != nil
	sk.mu.Unlock()
	if dead {
		w.ex.fail(err, safe)
	}
	return !dead
}

// deliver hands m, the message just decoded from buf, to the exchange
// awaiting its request id (m is that exchange's spare when decoded in
// place, else the reader's own, which it swaps for the spare). It reports
// false after killing the socket for an answer no request awaits.
func (sk *socket) deliver(m *codec.ServerMsg, buf []byte) bool {
	id := m.RequestID
	sk.mu.Lock()
	w, ok := sk.pending[id]
	delete(sk.pending, id)
	dead := sk.err != nil
	sk.mu.Unlock()
	if !ok {
		if !dead {
			sk.fail(&transport.Error{Message: fmt.Sprintf("protocol error: the server answered request %d, which awaits no answer", id)}, false)
		}
		return false
	}
	ex := w.ex
	if ex == nil {
		return true // a close no one waits for
	}
	if ex.msgs[w.i] != m {
		if m != sk.rmsg {
			// Decoded in place into another exchange's spare, for an
			// answer that turned out not to be that exchange's: a
			// protocol error the sole-waiter rule cannot meet, since the
			// socket awaited only that one answer.
			sk.fail(&transport.Error{Message: fmt.Sprintf("protocol error: the server answered request %d, which awaits no answer", id)}, false)
			return false
		}
		ex.msgs[w.i], sk.rmsg = m, ex.msgs[w.i]
	}
	ex.bufs[w.i] = buf
	ex.complete()
	return true
}

// Sizes of the reader's buffers.
const (
	// probeSize is how much the reader reads ahead of a full buffer, to
	// find the end of a message before growing the buffer for more.
	probeSize = 4 << 10
	// handOverAt is the message size from which the reader hands its
	// buffer over rather than copy the message out of it.
	handOverAt = 64 << 10
	// maxScratch is the largest buffer the reader keeps between messages.
	maxScratch = 8 << 20
)

// readMessage reads one message into sk.scratch, growing it as needed.
// A full buffer is first read ahead into sk.probe, so that a message that
// fits exactly ends without the buffer growing for nothing. Each read
// counts as a sign of life for the pinger.
func (sk *socket) readMessage(r io.Reader) error {
	buf := sk.scratch[:0]
	for {
		var n int
		var err error
		if len(buf) == cap(buf) {
			n, err = r.Read(sk.probe[:])
			buf = append(buf, sk.probe[:n]...)
		} else {
			n, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
		}
		if n > 0 {
			sk.lastRead.Store(int64(time.Since(sk.born)))
		}
		if err == io.EOF {
			sk.scratch = buf
			return nil
		}
		if err != nil {
			sk.scratch = buf[:0]
			return err
		}
	}
}

// take returns the message just read into sk.scratch as a buffer of its
// own, which the decoded message may point into and which then leaves with
// it: copied into spare if that has room, or else into a new buffer of the
// message's size; a large message keeps the buffer it was read into, and
// the reader reads on into a new one of that size.
func (sk *socket) take(spare []byte) []byte {
	msg := sk.scratch
	n := len(msg)
	switch {
	case cap(spare) >= n:
		spare = spare[:n]
		copy(spare, msg)
		return spare
	case n >= handOverAt:
		if n <= maxScratch {
			sk.scratch = make([]byte, 0, n+n/8)
		} else {
			sk.scratch = nil
		}
		return msg
	}
	out := make([]byte, n)
	copy(out, msg)
	if cap(sk.scratch) > maxScratch {
		sk.scratch = nil
	}
	return out
}

// readFailed is the error of a socket whose read failed: the server closed
// it (a restart, a protocol error it saw), the network failed, or a
// message was over the read limit.
func (sk *socket) readFailed(err error) *transport.Error {
	// The websocket library's wrappers say which of its steps failed; what
	// a user can act on is the cause at the bottom.
	e := &transport.Error{Message: "connection lost", Err: sk.c.hdr.Scrub(neterr.Root(err))}
	var ce websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		e.Message, e.Err = fmt.Sprintf("connection lost: a message over the read limit of %d bytes", sk.c.readLimit), nil
	case errors.As(err, &ce):
		e.Message, e.Err = "the server closed the connection", sk.c.hdr.Scrub(closeFrame{ce.Code, ce.Reason})
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Message, e.Err = "the server closed the connection", nil
	}
	return e
}

// closeFrame is the status and reason of the server's close frame, told in
// the protocol's terms (RFC 6455 codes) rather than the library's names.
type closeFrame struct {
	code   websocket.StatusCode
	reason string
}

func (c closeFrame) Error() string {
	if c.reason == "" {
		return fmt.Sprintf("close code %d", int(c.code))
	}
	return fmt.Sprintf("close code %d, %q", int(c.code), c.reason)
}

// helloFailed is the error of a refused hello: an authentication failure
// (its code starts with AUTH_), with the server's message.
func (sk *socket) helloFailed(he *codec.Error) *transport.Error {
	return &transport.Error{Code: sk.c.hdr.Redact(he.Code), Message: sk.c.hdr.Redact(he.Message), Safe: true}
}

// ping pings the socket whenever it has received nothing for the ping
// interval, and kills it when a pong does not come within the timeout, so
// that a dead connection is found within a bounded time even when idle.
func (sk *socket) ping() {
	every := sk.c.pingInterval
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-sk.dead:
			return
		case <-t.C:
		}
		quiet := time.Since(sk.born) - time.Duration(sk.lastRead.Load())
		if quiet < every {
			t.Reset(every - quiet)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), sk.c.pingTimeout)
		err := sk.ws.Ping(ctx)
		cancel()
		if err != nil {
			sk.fail(&transport.Error{Message: "connection lost: no pong within " + sk.c.pingTimeout.String(), Err: sk.c.hdr.Scrub(err)}, false)
			return
		}
		sk.lastRead.Store(int64(time.Since(sk.born)))
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
