// Package ws carries Hrana stream requests to libsql-server over WebSocket
// (GET / upgraded, subprotocols hrana3 and hrana2 with a JSON codec,
// hrana3-protobuf with the Protobuf one). It implements the transport
// contract (package transport), as transport/http does over HTTP.
//
//	t, err := ws.New(transport.Options{URL: "ws://127.0.0.1:8080", AuthToken: token, Codec: direct.Codec})
//	if err != nil {
//		return err
//	}
//	defer t.Close()
//	s := t.NewStream()
//	err = s.Send(ctx, reqs, false, &resp)
//
// # Sockets and streams
//
// A client holds a few sockets (transport.Options.Sockets), dialed when
// first needed; the streams outside a transaction share them, each request
// named by an id and answered in any order. A stream owns one server
// stream, on one socket: WebSocket streams do not expire, so the
// connection state on it (PRAGMA settings, last_insert_rowid(), changes())
// lasts from one statement to the next, and Reset closes it. A stream
// opened by a request sent without end, one that keeps a transaction open,
// gets a socket of its own instead, since sqld closes a whole socket on
// some failures of one request (own.go), and gives it back, its server
// stream closed, with the request that ends the unit of work.
// A Send writes all its requests in one burst (with open_stream first when
// the stream is new, and the hello first on a new socket: nothing waits for
// hello_ok) and then waits for every answer. sqld queues at most eight
// requests per stream and stops reading the socket while one more waits,
// so a long burst behind a slow statement holds up the other streams of
// its socket for a while: one reason a client keeps more than one.
//
// Each shared socket has one reader goroutine, which never stops reading
// while the socket lives (sqld stops reading from a client that does not
// read its answers), and its writes are serialized. Requests carry no
// context to the socket: coder/websocket closes the connection when a
// read's or write's context ends, so writes are bounded by a write
// timeout instead, and a Send whose context ends returns at once and
// leaves its answers to arrive; the stream is Busy until they have. Idle
// sockets are pinged (a ping interval), and one that does not answer is
// closed.
//
// A socket of its own (a transaction's, or every stream's with
// Options.Sockets < 0) is lockstep instead (lockstep.go): the goroutine
// that waits for an answer reads the socket itself, with no hand-off
// from a reader goroutine, and a drain goroutine reads only what is
// still awaited when it has its own. Nothing reads such a socket while
// nothing is awaited; a non-blocking read before each burst finds a
// socket the server closed meanwhile, so that the request fails Safe.
// Since a read cannot be abandoned without closing the connection, a
// Send whose context (or the client's timeout) ends while it reads closes
// the socket: the stream is lost, as an HTTP stream is with an abandoned
// request.
//
// # Concurrency
//
// Who owns what. A stream is its caller's: database/sql runs one
// operation at a time on a connection, and Send, OpenCursor and Reset
// are not safe for concurrent use. A socket is shared; its state belongs
// to these goroutines:
//
//   - The callers of the streams on it write bursts (socket.send, under
//     socket.wmu) and wait for their exchange's done channel; on a
//     lockstep socket (a socket of its own) the caller that waits takes
//     the read role and reads the socket itself (lockstep.go).
//   - The reader (socket.read, one per shared socket, started by the dial,
//     ending when the socket dies) owns scratch, probe and rmsg, decodes
//     each answer into the spare of the exchange that awaits it (an
//     exchange's msgs and bufs are the reader's until its done, the
//     caller's after), and counts exchange.left down.
//   - The pinger (socket.ping, one per shared socket) pings a socket idle
//     past the ping interval and closes one that does not answer.
//   - A drain (socket.drain, lockstep sockets only) holds the read role to
//     read answers still awaited after their caller gave up.
//   - A slot's dialer (slot.run, one at a time per slot) connects a socket
//     and publishes it under slot.mu, closing slot.dialing when done.
//   - Closers (go sk.close) close a socket without holding up a caller;
//     the client's Close waits for those it starts.
//
// Locks, in the order they are taken (a goroutine holding one may take
// only those after it): slot.mu, then ownSockets.mu, then client.mu (the
// backoff), then socket.wmu (one burst at a time: wbuf, ends, hello),
// then socket.mu (pending, err, claimed, the id sets, the read role),
// then corkConn.mu (the bytes of the burst being written). socket.mu is
// never held across a network write or read; a socket's death (kill)
// releases it before it tells its slot and the own-socket pool.
//
// Atomics, each read without a lock where a stale value is harmless:
// client.next (round robin over the slots), client.version (the version
// the last socket negotiated, for Version), client.closed (Close has begun:
// no socket is added after it), socket.accepted (the server answered the
// hello), socket.abandoned (a lockstep reader closed the socket when its
// wait ended), socket.lastRead (when bytes last arrived, for the pinger),
// exchange.left (answers still to come; the one that takes it to zero
// signals done).
//
// A failed write returns at once with the error it met; nothing sleeps to
// find a better message.
//
// # Failures
//
// Nothing is retried. Every error is a *transport.Error. When a socket dies
// (a restart, a network failure, a proxy's idle timeout), every request
// awaiting an answer on it fails, not Safe: it may have run. A request that
// was never written fails Safe and Resend. The streams on a dead socket are
// gone with their state: each reports Lost, and its next request fails Safe
// and Resend, after which it opens a new stream (where the session layer
// replays its settings). A new socket is dialed lazily, one dial at a time
// per socket slot, which the requests that need it wait for within their
// contexts. A request always dials (or waits for the dial under way), so
// that its failure is its own dial's and the first request after a server
// comes back connects; after failures only the dials no request waits for
// (a slot kicked while another slot serves) keep an exponential backoff
// (Options.MinBackoff). A refused hello
// fails its socket's requests with the server's authentication error
// (isAuthError(err)), Safe: the server ran none of them. The
// auth token never appears in an error.
//
// # Cursors
//
// A large result outside a transaction does not come this way when the
// stream's connection state allows: the session runs it through /v3/cursor
// on the same server over HTTP (internal/session, SetSideCursors), which
// sqld streams at about twice the rate of a WebSocket cursor. No transport
// uses another.
//
// OpenCursor runs a batch through open_cursor and reads its entries with
// fetch_cursor, a fixed batch at a time, keeping the next two fetches in
// flight while one is read (sqld collects a fetch's entries only while it
// serves that fetch, so one already queued keeps the query running while
// an answer travels): memory is bounded by three fetches whatever the size
// of the result. While a cursor is open its stream serves nothing
// else; a request on the stream closes the cursor first.
//
// # Hrana 2
//
// Against a server that offers only hrana2 (Version reports 2), requests
// that need Hrana 3 are refused before they are sent, as over HTTP:
// get_autocommit, the is_autocommit condition and cursors. A server answers
// a request it takes for a protocol violation by closing the whole socket,
// so the stream refuses what it can tell would be one (a batch condition on
// a later step, a stored SQL id it never stored) rather than send it.
//
// Who imports it: the driver, for ws:// and wss:// DSNs and transport=ws; no
// application needs to. It is public only because the design keeps the
// transports under transport/.
package ws
