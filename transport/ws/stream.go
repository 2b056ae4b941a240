package ws

import (
	"context"
	"fmt"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

var _ transport.Stream = (*stream)(nil)

// stream is the client side of one server stream on one of the client's
// sockets, which it owns for its whole life: the connection state on it
// (PRAGMAs, last_insert_rowid(), changes(), a transaction) persists from
// one request to the next. Its first request opens the server stream
// (open_stream rides in the same burst); Reset closes it.
//
// A stream is not safe for concurrent use, and neither is it with the
// cursor open on it: Hrana runs a stream's requests one after another.
type stream struct {
	c    *client
	sock *socket // the socket of the server stream; nil: none
	id   int32   // the server stream's id on sock

	ex        *exchange // for Send and OpenCursor; nil once abandoned
	abandoned *exchange // abandoned by a cancelled Send, until answered
	cursor    *cursor   // the cursor open on the stream, if any
	// heldCursor is a cursor id the server keeps until the stream closes
	// (an open_cursor that failed inside the stream); 0 if none.
	heldCursor int32
	// sqls maps the ids of SQL texts stored through this stream to the
	// socket's ids: the server keeps stored SQL per socket, not per stream.
	sqls map[int32]int32

	reqs  []codec.SocketRequest
	steps []codec.BatchStep // batch steps with their SQL ids translated
	added []int32           // SQL ids stored by the current Send
	timer *time.Timer       // transport.Options.Timeout's, reused
	// oneShot: the stream is closed with its first request with end (see
	// Isolated).
	oneShot bool
	// own: the stream has a socket of its own for its whole life
	// (transport.Options.Sockets < 0), given back by Reset.
	own bool
}

// Errors of a stream that cannot take a request.
var (
	errBusy = &transport.Error{Safe: true, Resend: true,
		Message: "the stream still awaits the answers to a request whose context ended"}
	errCloseNotLast = &transport.Error{Safe: true, Message: "a close must be the last request"}
)

// Open reports whether the server holds a stream for s: it was opened and
// its socket lives.
func (s *stream) Open() bool { return s.sock != nil && s.sock.alive() }

// Lost reports whether the server stream s held is gone with its socket,
// and the connection state on it with it. The next request fails (Safe,
// Resend) and forgets it; Reset forgets it quietly.
// On a lockstep socket, which no goroutine reads while idle, it probes the
// connection first (lockstep.go).
func (s *stream) Lost() bool {
	if s.sock == nil {
		return false
	}
	s.sock.check()
	return !s.sock.alive()
}

// Busy reports whether a request whose caller's context ended still awaits
// its answers. Until they arrive (or Reset) the stream refuses requests,
// since the state they leave on it is unknown.
func (s *stream) Busy() bool { return s.abandoned != nil && !s.abandoned.finished() }

// Shared reports whether the server stream is open on a socket other
// streams use too: one that holds no transaction yet. A request sent
// without end on a stream not open gets a socket of its own.
func (s *stream) Shared() bool { return s.sock != nil && s.sock.alive() && !s.sock.slot.own }

// Isolated returns, for an open stream, the stream itself (WebSocket
// streams do not expire, and a failed request does not end them), whose
// Sends leave it as it is, whatever their end; for one not open, a stream
// of its own on a shared socket, closed in the same burst as its request.
// Either way the request neither opens the stream on a shared socket
// before a transaction nor gives back the socket of one.
func (s *stream) Isolated() transport.Stream {
	if s.Open() || s.own {
		return apart{s}
	}
	return &stream{c: s.c, oneShot: true}
}

// apart is an open stream whose Sends keep it open: a request apart from
// its state (see Isolated).
type apart struct{ *stream }

func (a apart) Send(ctx context.Context, reqs []codec.StreamRequest, _ bool, res *transport.Response) error {
	return a.stream.Send(ctx, reqs, false, res)
}

// Version is the Hrana version of the stream's socket, or the client's.
func (s *stream) Version(ctx context.Context) (int, error) {
	if s.Open() {
		return s.sock.version, nil
	}
	return s.c.Version(ctx)
}

// Send sends the requests in one burst on the stream (after open_stream if
// the stream is not open yet) and waits for all their answers, which it
// decodes into res: one result per request, a response_error as a failed
// result. end is ignored: the stream stays open for the next request.
//
// A request whose context ends returns at once; the stream is then Busy
// until the answers arrive. After a socket failure, a request that had
// not been written fails Safe and Resend, one that had, not Safe; either
// way the server stream is gone, and a request on a stream whose socket
// died earlier fails Safe and Resend (see Lost).
func (s *stream) Send(ctx context.Context, reqs []codec.StreamRequest, end bool, res *transport.Response) error {
	start := time.Now()
	res.BytesSent, res.BytesReceived = 0, 0
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &transport.Error{Message: "request failed", Safe: true, Err: err}
	}
	for i := range reqs {
		if reqs[i].Type == codec.RequestClose && i != len(reqs)-1 {
			return errCloseNotLast
		}
	}
	sk, opening, err := s.bind(ctx, end)
	if err != nil {
		return err
	}
	s.reqs = s.reqs[:0]
	if opening {
		s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketOpenStream, StreamID: s.id})
	}
	interrupted := s.interruptCursor()
	first := len(s.reqs)
	for i := range reqs {
		r, err := s.request(sk, &reqs[i])
		if err != nil {
			s.abort(opening)
			return err
		}
		s.reqs = append(s.reqs, r)
	}
	if len(reqs) == 0 && !opening {
		// Something must make the round trip (a Ping).
		s.reqs = append(s.reqs, s.probe(sk))
	}
	closing := len(reqs) > 0 && reqs[len(reqs)-1].Type == codec.RequestClose
	// A socket of its own goes back with the end of the unit of work,
	// the server stream closed in the same burst (which also ends a
	// transaction left open); so does a oneShot stream.
	giveBack := end && (sk.slot.own && !s.own || s.oneShot) && !closing
	if end && !giveBack && sk.version >= v3 && mayLeaveTx(reqs) {
		s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketBatch, StreamID: s.id, Batch: rollbackInTx})
	}
	if closing || giveBack {
		for _, id := range s.sqls {
			s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketCloseSQL, SQLID: id})
		}
	}
	if giveBack {
		s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketCloseStream, StreamID: s.id})
		closing = true
	}
	token, terr := s.c.helloToken(ctx)
	if terr != nil {
		s.abort(opening)
		return terr
	}
	if d := s.c.timeout; d > 0 && time.Since(start) >= d {
		// The client's timeout ran out before anything was written (one
		// shorter than binding a socket): an answer read now would be
		// late however fast it came, so the request is not sent.
		s.abort(opening)
		return &transport.Error{Message: "request failed", Safe: true, Err: errTimeout}
	}
	ex := s.exchange()
	ex.reset(len(s.reqs), res.Bodies)
	resp := &res.Pipeline
	resp.Results = sized(resp.Results, len(reqs))
	for i := range reqs {
		lend(ex.msgs[first+i], &resp.Results[i])
	}
	if opening {
		ex.open = 0
	}
	led := sk.lead()
	if sent, err := sk.send(ex, s.reqs, token); err != nil {
		if led {
			sk.yieldRead()
		}
		s.abort(opening)
		if !sk.alive() {
			s.forget()
			if !opening && !sent {
				return lostError(err)
			}
		}
		return err
	}
	s.sent(interrupted)
	res.BytesSent = ex.wrote
	if err := s.wait(ctx, sk, ex, led); err != nil {
		s.ex, s.abandoned = nil, ex
		s.added = s.added[:0]
		clear(s.reqs)
		if closing {
			// The close went out: the server closes the stream once it
			// gets to it.
			s.closed(sk)
		}
		return &transport.Error{Message: "request failed", Err: err}
	}
	clear(s.reqs) // drop references to the caller's statements
	res.BytesReceived = ex.received()
	if err := s.answered(ex); err != nil {
		ex.recycle()
		return err
	}
	resp.Baton, resp.BaseURL = "", ""
	for i := range reqs {
		streamResult(&resp.Results[i], ex.msgs[first+i])
	}
	ex.recycle()
	bodies := &res.Bodies
	*bodies = append((*bodies)[:0], ex.bufs...)
	clear((*bodies)[len(*bodies):cap(*bodies)]) // spares taken by the exchange
	clear(ex.bufs)
	s.storedSQL(reqs, resp.Results)
	if closing {
		s.closed(sk)
	}
	return nil
}

// rollbackInTx rolls back a transaction left open on the stream. It
// follows a unit of work sent with end that may leave one (mayLeaveTx):
// over HTTP the stream's close, sent with such a unit, ends a transaction
// it began and did not finish (a script or a deferred transaction's batch
// that failed half-way, a lone BEGIN), and a WebSocket stream, which lives
// on, must not keep it either. Its answer is not the caller's.
var rollbackInTx = codec.Batch{Steps: []codec.BatchStep{{
	Condition: &codec.BatchCond{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondIsAutocommit}},
	Stmt:      codec.Stmt{SQL: "ROLLBACK"},
}}}

// mayLeaveTx reports whether reqs, sent with end, can leave a transaction
// open: a batch or a script that fails half-way. A statement sent with end
// cannot (transport.Stream.Send: the caller holds the stream, sending
// without end, for one that may begin a transaction or fail to end one),
// so the transport need not read SQL.
func mayLeaveTx(reqs []codec.StreamRequest) bool {
	for i := range reqs {
		switch reqs[i].Type {
		case codec.RequestBatch, codec.RequestSequence:
			return true
		}
	}
	return false
}

// wait waits for every answer of ex, sent on sk, or until ctx ends or the
// client's timeout passes, which it returns the cause of. On a lockstep
// socket whose read role the caller holds (led) or can take, it reads the
// answers itself (lockstep.go).
func (s *stream) wait(ctx context.Context, sk *socket, ex *exchange, led bool) error {
	if led || sk.lead() {
		return sk.readUntil(ctx, ex, s.c.timeout)
	}
	var expired <-chan time.Time
	if d := s.c.timeout; d > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(d)
		} else {
			s.timer.Reset(d)
		}
		defer s.timer.Stop()
		expired = s.timer.C
	}
	select {
	case <-ex.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return errTimeout
	}
}

// errTimeout is the cause of a request that transport.Options.Timeout ended: to the
// caller, a deadline.
var errTimeout = fmt.Errorf("%w (timeout)", context.DeadlineExceeded)

// usable returns the error for a request on a Busy stream; a stream whose
// abandoned request has been answered is taken back into use.
func (s *stream) usable() error {
	ab := s.abandoned
	if ab == nil {
		return nil
	}
	if !ab.finished() {
		return errBusy
	}
	s.abandoned = nil
	if ab.err == nil && ab.open >= 0 && ab.msgs[ab.open].Type != codec.ServerResponseOK {
		// The stream never opened; the server still holds its id.
		s.Reset()
	}
	ab.recycle()
	clear(ab.bufs) // answers no Result took
	s.ex = ab
	return nil
}

// bind returns the socket of the stream, and whether the stream must be
// opened on it (it has an id, but open_stream has yet to be sent): one of
// the shared sockets, or, for a request without end (the stream is to hold
// a transaction), a socket of its own (see own.go). A stream whose socket
// died fails with the socket's error, Safe and Resend, and is forgotten.
func (s *stream) bind(ctx context.Context, end bool) (*socket, bool, error) {
	if sk := s.sock; sk != nil {
		if sk.alive() {
			return sk, false, nil
		}
		err := lostError(sk.failure())
		s.forget()
		return nil, false, err
	}
	var err error
	for range 2 { // a socket may die between acquire and openStream
		acquire := s.c.acquire
		if !end || s.own {
			acquire = s.c.acquireOwn
		}
		sk, aerr := acquire(ctx)
		if aerr != nil {
			return nil, false, aerr
		}
		id, kerr := sk.openStream()
		if kerr == nil {
			s.sock, s.id = sk, id
			return sk, true, nil
		}
		err = kerr
	}
	return nil, false, err
}

// lostError is the error of a request on a stream whose socket died
// before: nothing of it was sent, but the server stream and its state are
// gone.
func lostError(cause *transport.Error) *transport.Error {
	e := &transport.Error{Safe: true, Resend: true, Message: "the connection to the server was lost before the request was sent"}
	if cause != nil {
		e.Message += " (" + cause.Message + ")"
		e.Err = cause.Err
	}
	return e
}

// abort undoes what a Send that sent nothing prepared: the stream id of a
// stream it would have opened and the SQL ids it would have stored.
func (s *stream) abort(opening bool) {
	sk := s.sock
	for _, id := range s.added {
		sk.release(&sk.sqls, s.sqls[id])
		delete(s.sqls, id)
	}
	s.added = s.added[:0]
	clear(s.reqs)
	if opening {
		sk.release(&sk.streams, s.id)
		s.sock, s.id = nil, 0
	}
}

// forget drops the server stream without telling the server: it is gone,
// or closed.
func (s *stream) forget() {
	if s.cursor != nil {
		s.cursor.detach()
	}
	s.sock, s.id = nil, 0
	s.abandoned, s.heldCursor = nil, 0
	clear(s.sqls)
	s.added = s.added[:0]
}

// closed forgets the stream after a close that the caller sent, and gives
// back its socket if it was its own.
func (s *stream) closed(sk *socket) {
	ids := make([]int32, 0, len(s.sqls))
	for _, id := range s.sqls {
		ids = append(ids, id)
	}
	sk.release(&sk.sqls, ids...)
	if s.heldCursor != 0 {
		sk.release(&sk.cursors, s.heldCursor)
	}
	sk.release(&sk.streams, s.id)
	s.forget()
	if sk.slot.own {
		s.c.putOwn(sk)
	}
}

// Reset closes the server stream if it is open (which rolls back a
// transaction on it and ends its cursor), without waiting for the answer,
// and forgets it. The close goes behind any request still running on it.
func (s *stream) Reset() {
	sk := s.sock
	if sk == nil {
		if s.cursor != nil {
			s.cursor.detach()
		}
		return
	}
	if sk.alive() {
		reqs := make([]codec.SocketRequest, 0, len(s.sqls)+1)
		for _, id := range s.sqls {
			reqs = append(reqs, codec.SocketRequest{Type: codec.SocketCloseSQL, SQLID: id})
		}
		reqs = append(reqs, codec.SocketRequest{Type: codec.SocketCloseStream, StreamID: s.id})
		sk.sendDetached(reqs)
		s.closed(sk)
		return
	}
	s.forget()
}

// exchange returns the stream's exchange, a new one if it has none.
func (s *stream) exchange() *exchange {
	if s.ex == nil {
		s.ex = newExchange()
	}
	return s.ex
}

// answered checks an exchange that has all its answers, or failed: a
// socket failure (the server stream is gone with it) or an open_stream the
// server refused.
func (s *stream) answered(ex *exchange) error {
	if ex.err != nil {
		s.forget()
		e := *ex.err
		// The requests were written: only a refused hello tells that
		// they had no effect.
		e.Safe, e.Resend = ex.safe, false
		if !e.Safe {
			e.Message += inFlight
		}
		return &e
	}
	if ex.open >= 0 {
		if m := ex.msgs[ex.open]; m.Type != codec.ServerResponseOK {
			s.Reset()
			// Nothing runs on a stream that failed to open.
			return &transport.Error{Code: m.Error.Code, Safe: true,
				Message: "open_stream failed: " + s.c.hdr.Redact(m.Error.Message)}
		}
	}
	return nil
}

// inFlight ends the message of a failure that met requests already
// written: the user must know that they may have run.
const inFlight = " while the request was in flight: it may have run"

// request converts a stream request into the socket request for s,
// refusing what the server would take for a protocol violation (which
// closes the socket, and every stream on it, rather than fail one request).
func (s *stream) request(sk *socket, r *codec.StreamRequest) (codec.SocketRequest, error) {
	out := codec.SocketRequest{Type: r.Type.SocketType(), StreamID: s.id}
	switch r.Type {
	case codec.RequestClose, codec.RequestSequence, codec.RequestDescribe:
		out.SQL, out.ReplicationIndex = r.SQL, r.ReplicationIndex
	case codec.RequestExecute:
		out.Stmt = r.Stmt
		// Over WebSocket an execute's index is the request's own field.
		out.ReplicationIndex, out.Stmt.ReplicationIndex = r.Stmt.ReplicationIndex, 0
		if err := s.sqlID(&out.Stmt); err != nil {
			return out, err
		}
	case codec.RequestBatch:
		b, err := s.batch(sk, &r.Batch)
		if err != nil {
			return out, err
		}
		out.Batch = *b
	case codec.RequestGetAutocommit:
		if sk.version < v3 {
			return out, &transport.Error{Safe: true, Message: "the server speaks Hrana 2, which has no get_autocommit"}
		}
	case codec.RequestStoreSQL:
		if _, dup := s.sqls[r.SQLID]; dup {
			return out, &transport.Error{Safe: true, Message: fmt.Sprintf("SQL text %d is already stored", r.SQLID)}
		}
		id := sk.alloc(&sk.sqls)
		if s.sqls == nil {
			s.sqls = map[int32]int32{}
		}
		s.sqls[r.SQLID] = id
		s.added = append(s.added, r.SQLID)
		out.SQLID, out.SQL = id, r.SQL
	case codec.RequestCloseSQL:
		// An id never stored closes nothing: the socket's sets never
		// give out 0.
		out.SQLID = s.sqls[r.SQLID]
	default:
		return out, &transport.Error{Safe: true, Message: fmt.Sprintf("request type %d cannot be sent over WebSocket", r.Type)}
	}
	return out, nil
}

// probe is a request that changes nothing, for a Send of no requests on
// an open stream.
func (s *stream) probe(sk *socket) codec.SocketRequest {
	if sk.version < v3 {
		return codec.SocketRequest{Type: codec.SocketDescribe, StreamID: s.id, SQL: "SELECT 1"}
	}
	return codec.SocketRequest{Type: codec.SocketGetAutocommit, StreamID: s.id}
}

// sqlID translates a statement's stored SQL id into the socket's.
func (s *stream) sqlID(st *codec.Stmt) error {
	if !st.HasSQLID {
		return nil
	}
	id, ok := s.sqls[st.SQLID]
	if !ok {
		return &transport.Error{Safe: true, Message: fmt.Sprintf("SQL text %d is not stored", st.SQLID)}
	}
	st.SQLID = id
	return nil
}

// batch checks a batch's conditions (a step may refer only to earlier
// steps, and is_autocommit needs Hrana 3) and translates its stored SQL
// ids, in a copy of its steps if there are any.
func (s *stream) batch(sk *socket, b *codec.Batch) (*codec.Batch, error) {
	stored := false
	for i := range b.Steps {
		st := &b.Steps[i]
		if st.Condition != nil {
			if err := checkCond(st.Condition, uint32(i), sk.version, 0); err != nil {
				return nil, &transport.Error{Safe: true, Message: fmt.Sprintf("batch step %d: %s", i, err)}
			}
		}
		stored = stored || st.Stmt.HasSQLID
	}
	if !stored {
		return b, nil
	}
	s.steps = append(s.steps[:0], b.Steps...)
	for i := range s.steps {
		if err := s.sqlID(&s.steps[i].Stmt); err != nil {
			return nil, err
		}
	}
	return &codec.Batch{Steps: s.steps, ReplicationIndex: b.ReplicationIndex}, nil
}

// checkCond checks a condition of step i.
func checkCond(c *codec.BatchCond, i uint32, version, depth int) error {
	if depth > codec.MaxDepth {
		return fmt.Errorf("conditions nested over %d deep", codec.MaxDepth)
	}
	switch c.Type {
	case codec.CondOK, codec.CondError:
		if c.Step >= i {
			return fmt.Errorf("the condition refers to step %d, which is not an earlier one", c.Step)
		}
	case codec.CondNot:
		if c.Cond == nil {
			return fmt.Errorf("a not condition without its operand")
		}
		return checkCond(c.Cond, i, version, depth+1)
	case codec.CondAnd, codec.CondOr:
		for j := range c.Conds {
			if err := checkCond(&c.Conds[j], i, version, depth+1); err != nil {
				return err
			}
		}
	case codec.CondIsAutocommit:
		if version < v3 {
			return fmt.Errorf("the server speaks Hrana 2, which has no is_autocommit condition")
		}
	default:
		return fmt.Errorf("unknown condition type %d", c.Type)
	}
	return nil
}

// storedSQL undoes the stores the server refused.
func (s *stream) storedSQL(reqs []codec.StreamRequest, results []codec.StreamResult) {
	if len(s.added) == 0 {
		return
	}
	sk := s.sock
	for i := range reqs {
		if reqs[i].Type == codec.RequestStoreSQL && !results[i].OK {
			sk.release(&sk.sqls, s.sqls[reqs[i].SQLID])
			delete(s.sqls, reqs[i].SQLID)
		}
	}
	s.added = s.added[:0]
}

// interruptCursor adds the close of the cursor open on the stream, if
// any, to the burst being built: a new request ends the cursor, as the
// stream serves one thing at a time. It reports whether it did.
func (s *stream) interruptCursor() bool {
	if s.cursor == nil || s.cursor.sk != s.sock {
		return false
	}
	s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketCloseCursor, CursorID: s.cursor.id})
	return true
}

// sent records what a burst that went out did to the stream's state: an
// interrupted cursor is closed, and the SQL ids of close_sql requests are
// free again.
func (s *stream) sent(interrupted bool) {
	sk := s.sock
	if interrupted {
		id := s.cursor.id
		s.cursor.detach()
		sk.release(&sk.cursors, id)
	}
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.Type == codec.SocketCloseSQL && r.SQLID != 0 {
			for sid, id := range s.sqls {
				if id == r.SQLID {
					delete(s.sqls, sid)
				}
			}
			sk.release(&sk.sqls, r.SQLID)
		}
	}
}

// sized returns rs with n elements, keeping the capacity of those it has
// (their slices are decoded into again).
func sized(rs []codec.StreamResult, n int) []codec.StreamResult {
	if n <= cap(rs) {
		return rs[:n]
	}
	rs = rs[:cap(rs)]
	return append(rs, make([]codec.StreamResult, n-len(rs))...)
}
