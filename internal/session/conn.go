package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Conn runs typed Hrana operations on one transport.Stream: the server-side state of
// one database/sql connection. It is not safe for concurrent use.
//
// Outside Hold every operation is a unit of work of its own, which leaves
// no transaction on the stream (see transport.Stream.Send). Between Hold
// and Release the stream, and the transaction it holds, lasts from one
// operation to the next; the first operation after Release ends it.
type Conn struct {
	s    transport.Stream
	held bool
	reqs []codec.StreamRequest
	// setup runs first on every server stream the Conn opens (settings
	// that must outlive a stream), keyed by setupKeys; all holds setup and
	// the caller's requests.
	setup     []codec.StreamRequest
	setupKeys []string
	all       []codec.StreamRequest
	repl      *Replication // nil: no replication indexes sent or kept
	wait      waiter
	idle      bool                // the open server stream holds no transaction: see Linger
	reads     bool                // the request being sent only reads: see ExecuteRead
	openedAt  time.Time           // when the open server stream was opened (by the request that had none)
	side      transport.Transport // where cursors outside Hold may run instead: see SetSideCursors
	tr        Tracer
	treq      Request // the request being traced
	// spare is the Result of the Conn's last operation, released, whose
	// capacity the next one decodes into (see newResult). It is not left to
	// resultPool, which the garbage collector empties: in a busy process a
	// large result's values would be allocated again on every query. It
	// holds at most MaxSpareValues bytes of values, and buffers of at most
	// maxPooledBody bytes. Atomic, since rows may be closed on a goroutine
	// other than the one running the next operation.
	spare atomic.Pointer[Result]
}

// MaxSetup bounds the settings a Conn replays on every new stream.
const MaxSetup = 32

// NewConn returns a Conn on s.
func NewConn(s transport.Stream) *Conn { return &Conn{s: s} }

// SetReplication makes the Conn send r's index with its requests and keep
// the indexes of their results in r (see Replication); r is typically
// shared by all the Conns of a pool.
func (c *Conn) SetReplication(r *Replication) { c.repl = r }

// Hold keeps the server stream open across operations until Release. A
// stream open on a network connection other streams share (see
// transport.Stream.Shared) is reset first, so that the transaction the
// hold is for begins on one of its own, where no other stream's failure
// can end it; the settings of Persist are replayed on the new stream.
func (c *Conn) Hold() {
	if !c.held && c.s.Shared() {
		c.s.Reset()
	}
	c.held = true
}

// Release ends Hold: the next operation ends the unit of work on the
// stream (over HTTP the stream is closed with it, or kept only if the
// server says no transaction is left open on it).
func (c *Conn) Release() { c.held, c.idle = false, false }

// Linger ends Hold on a stream that holds no transaction any more (an
// ExecuteWatched answer said so): like Release, and the stream is idle, as
// after a unit of work outside Hold. An operation on an idle stream that
// the server no longer has (it expired, or the server restarted) goes
// again on a new stream, on which the settings of Persist are replayed,
// instead of failing: the server refused it before running any of it, and
// nothing but the settings lived on the stream.
func (c *Conn) Linger() { c.held, c.idle = false, true }

// Held reports whether the Conn is between Hold and Release.
func (c *Conn) Held() bool { return c.held }

// StreamOpen reports whether the server holds a stream for the Conn.
func (c *Conn) StreamOpen() bool { return c.s.Open() }

// Busy reports whether the Conn's stream still awaits the answers to a
// request whose context ended (see transport.Stream.Busy); it refuses operations
// meanwhile, so database/sql should not reuse the connection.
func (c *Conn) Busy() bool { return c.s.Busy() }

// Lost reports whether the Conn's server stream is gone with the
// connection state on it (see transport.Stream.Lost): its next operation fails,
// Safe and Resend, unless Reset first, and the one after opens a new
// stream, on which the settings of Persist are replayed.
func (c *Conn) Lost() bool { return c.s.Lost() }

// Persist makes st (a connection setting, such as a PRAGMA assignment) run
// first on every server stream the Conn opens from now on, so that the
// setting outlives the stream it was made on. It rides in the same request
// as the operation that opens the stream: it costs no round trip. A later
// st under the same key replaces the earlier one; beyond MaxSetup keys the
// oldest is dropped. The current stream, if open, already has the setting.
func (c *Conn) Persist(key string, st codec.Stmt) {
	for i, k := range c.setupKeys {
		if k == key {
			c.setupKeys = append(c.setupKeys[:i], c.setupKeys[i+1:]...)
			c.setup = append(c.setup[:i], c.setup[i+1:]...)
			break
		}
	}
	if len(c.setup) >= MaxSetup {
		c.setupKeys, c.setup = c.setupKeys[1:], c.setup[1:]
	}
	c.setupKeys = append(c.setupKeys, key)
	c.setup = append(c.setup, codec.StreamRequest{Type: codec.RequestExecute, Stmt: st})
}

// setupFor returns the setup the next request on s must start with: all of
// it on a stream not open yet, none on an open one.
func (c *Conn) setupFor(s transport.Stream) []codec.StreamRequest {
	if len(c.setup) == 0 || s.Open() {
		return nil
	}
	return c.setup
}

// Reset abandons the server stream, closing it if it is open (which rolls
// back a transaction on it). Hold is unchanged: the next operation opens a
// new stream.
func (c *Conn) Reset() { c.s.Reset() }

// send sends c.reqs on the Conn's stream into a new Result, released on
// failure.
func (c *Conn) send(ctx context.Context, idx uint64) (*Result, error) {
	if !c.held && c.s.Lost() {
		// The server stream went with its socket (WebSocket). Outside a
		// transaction nothing but the settings lived on it, and those are
		// replayed: carry on on a new stream, as over HTTP.
		c.s.Reset()
	}
	// An idle stream holds no transaction (see Linger). If the server no
	// longer has it, it refused the request before running any of it, so
	// the request goes again on a new stream.
	c.refresh()
	idle := c.idle && c.s.Open()
	res, err := c.sendOn(ctx, c.s, c.setupFor(c.s), !c.held, idx)
	if idle && (streamGone(err) || c.reads && serverFailed(err)) {
		c.renew()
		res, err = c.resend(ctx, idx, err)
	}
	// After a unit of work, a stream still open holds no transaction
	// (transport.Stream.Send); inside Hold it may.
	c.idle = !c.held
	return res, err
}

// refresh readies the stream for the next operation: one the server no
// longer holds is noted as new, and an idle stream that may read a
// replica's copy replaced since (Replication.stale) is replaced.
func (c *Conn) refresh() {
	switch {
	case !c.s.Open():
		c.openedAt = time.Now()
	case c.idle && !c.held && c.repl != nil && c.repl.stale(c.openedAt):
		c.renew()
	}
}

// renew abandons the server stream: the next operation opens a new one.
func (c *Conn) renew() {
	c.s.Reset()
	c.openedAt = time.Now()
}

// serverFailed reports whether err is sqld's failure of a replica stream
// whose writes went to a primary that has since died (500 "Connection with
// primary broken", after which it drops the stream): a new stream would not
// fail so. Other failures are not second-guessed.
func serverFailed(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.HTTPStatus == 500 && strings.Contains(e.Message, "Connection with primary broken")
}

// streamGone reports whether err is the refusal of a request whose stream
// the server no longer has.
func streamGone(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.StreamGone
}

// sendOn sends setup and then c.reqs, which carry replication index idx,
// on s, in one request.
func (c *Conn) sendOn(ctx context.Context, s transport.Stream, setup []codec.StreamRequest, end bool, idx uint64) (*Result, error) {
	if c.tr != nil {
		return c.traced(ctx, s, setup, end, idx)
	}
	return c.exchange(ctx, s, setup, end, idx)
}

// newResult returns the Conn's spare Result, or one from the pool, to come
// back as the spare on Release.
func (c *Conn) newResult() *Result {
	r := c.spare.Swap(nil)
	if r == nil {
		r = NewResult()
	}
	r.home = c
	return r
}

// exchange is sendOn, untraced.
func (c *Conn) exchange(ctx context.Context, s transport.Stream, setup []codec.StreamRequest, end bool, idx uint64) (*Result, error) {
	reqs := c.reqs
	if len(setup) > 0 {
		c.all = append(append(c.all[:0], setup...), c.reqs...)
		reqs = c.all
	}
	res := c.newResult()
	sctx := c.bound(ctx, idx)
	err := s.Send(sctx, reqs, end, res.Response())
	if c.tr != nil {
		c.treq.BytesSent, c.treq.BytesReceived = res.resp.BytesSent, res.resp.BytesReceived
	}
	expired := c.unbound(ctx, sctx)
	clear(c.all) // drop references to the caller's statements
	if err != nil {
		res.Release()
		if idx != 0 {
			err = c.waitFailed(ctx, idx, expired, err)
		}
		return nil, c.failed(err)
	}
	if c.repl != nil {
		c.observe(res.resp.Pipeline.Results, idx)
	}
	if len(res.resp.Pipeline.Results) < len(reqs) {
		res.Release()
		return nil, &transport.Error{Message: fmt.Sprintf("server sent %d results for %d requests", len(res.resp.Pipeline.Results), len(reqs))}
	}
	if err := setupFailed(res.resp.Pipeline.Results[:len(setup)], setup); err != nil {
		res.Release()
		return nil, err
	}
	res.first = len(setup)
	return res, nil
}

// setupFailed returns the error of the first setup request that failed.
func setupFailed(results []codec.StreamResult, setup []codec.StreamRequest) error {
	for i := range results {
		if !results[i].OK {
			return transport.SetupError(&setup[i], &results[i].Error)
		}
	}
	return nil
}

// failed finishes a transport failure: Resend (run it on another
// connection) only holds where no server state can be lost with this one.
func (c *Conn) failed(err error) error {
	var e *transport.Error
	if !errors.As(err, &e) || !c.held {
		return err
	}
	if lost := c.s.Lost(); e.Resend || lost && !e.TxLost {
		// Inside a transaction: not another connection's to retry, and a
		// server stream that is gone took the transaction with it.
		cp := *e
		cp.Resend = false
		cp.TxLost = cp.TxLost || lost
		return &cp
	}
	return err
}

// first returns the first result of res, checked to be an OK response of
// type t; on failure res is released.
func first(res *Result, t codec.RequestType) (*codec.StreamResponse, error) {
	r := &res.resp.Pipeline.Results[res.first]
	if !r.OK {
		err := transport.StatementError(&r.Error)
		res.Release()
		return nil, err
	}
	if r.Response.Type != t {
		err := &transport.Error{Message: "server answered " + t.String() + " with " + r.Response.Type.String()}
		res.Release()
		return nil, err
	}
	return &r.Response, nil
}

// Execute runs one statement. The result is res.Stmt(); release it when done.
// A statement error is a *transport.Error with the server's code, marked
// Statement.
func (c *Conn) Execute(ctx context.Context, st *codec.Stmt) (*Result, error) {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestExecute, Stmt: *st})
	c.reqs[0].Stmt.ReplicationIndex = idx
	res, err := c.send(ctx, idx)
	if err != nil {
		return nil, err
	}
	if _, err := first(res, codec.RequestExecute); err != nil {
		return nil, err
	}
	return res, nil
}

// ExecuteRead is Execute for a statement that certainly only reads, which
// may therefore run twice: on an idle stream (see Linger) that fails with
// the server's own error (serverFailed) rather than the statement's, it
// goes again on a new stream, as a request refused for a stream that is
// gone does.
func (c *Conn) ExecuteRead(ctx context.Context, st *codec.Stmt) (*Result, error) {
	c.reads = true
	defer func() { c.reads = false }()
	return c.Execute(ctx, st)
}

// Batch runs a batch. The outcome of each step is in res.Batch().Steps,
// checked to have one entry per step; release the result when done. An
// error means the batch was refused as a whole (sqld compiles every step
// before running any, so then none ran).
func (c *Conn) Batch(ctx context.Context, steps []codec.BatchStep) (*Result, error) {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: steps, ReplicationIndex: idx}})
	res, err := c.send(ctx, idx)
	if err != nil {
		return nil, err
	}
	resp, err := first(res, codec.RequestBatch)
	if err != nil {
		return nil, err
	}
	if n := len(resp.Batch.Steps); n > len(steps) {
		res.Release()
		return nil, &transport.Error{Message: fmt.Sprintf("server answered a %d-step batch with %d results", len(steps), n)}
	}
	// Protobuf's BatchResult is two maps keyed by step, so skipped steps
	// after the last one that ran are not on the wire: they are skipped.
	for len(resp.Batch.Steps) < len(steps) {
		resp.Batch.Steps = append(resp.Batch.Steps, codec.StepOutcome{Status: codec.StepSkipped})
	}
	return res, nil
}

// ExecuteWatched runs one statement and get_autocommit after it in the same
// request, and reports whether the stream is outside a transaction
// afterwards, whether or not the statement failed (Hrana 3): the session
// follows the server's state rather than the SQL text, for statements that
// may begin or end a transaction. The caller holds the stream (Hold) for a
// statement that may begin one, so that the request does not close it.
func (c *Conn) ExecuteWatched(ctx context.Context, st *codec.Stmt) (res *Result, autocommit bool, err error) {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0],
		codec.StreamRequest{Type: codec.RequestExecute, Stmt: *st},
		codec.StreamRequest{Type: codec.RequestGetAutocommit})
	c.reqs[0].Stmt.ReplicationIndex = idx
	res, err = c.send(ctx, idx)
	if err != nil {
		return nil, false, err
	}
	autocommit, err = watched(res)
	if err != nil {
		return nil, autocommit, err
	}
	if _, err := first(res, codec.RequestExecute); err != nil {
		return nil, autocommit, err
	}
	return res, autocommit, nil
}

// SequenceWatched runs a script as Sequence does, with get_autocommit
// after it in the same request (see ExecuteWatched).
func (c *Conn) SequenceWatched(ctx context.Context, sql string) (autocommit bool, err error) {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0],
		codec.StreamRequest{Type: codec.RequestSequence, SQL: sql, ReplicationIndex: idx},
		codec.StreamRequest{Type: codec.RequestGetAutocommit})
	res, err := c.send(ctx, idx)
	if err != nil {
		return false, err
	}
	autocommit, err = watched(res)
	if err != nil {
		return autocommit, err
	}
	if _, err := first(res, codec.RequestSequence); err != nil {
		return autocommit, err
	}
	res.Release()
	return autocommit, nil
}

// watched returns the answer of the get_autocommit that follows the first
// request of res; on failure res is released.
func watched(res *Result) (bool, error) {
	r := &res.resp.Pipeline.Results[res.first+1]
	if !r.OK || r.Response.Type != codec.RequestGetAutocommit {
		err := &transport.Error{Message: "the server did not say whether a transaction is open"}
		if !r.OK {
			err = transport.StatementError(&r.Error)
		}
		res.Release()
		return false, err
	}
	return r.Response.IsAutocommit, nil
}

// Version is the Hrana version the Conn's stream speaks (2 or 3).
func (c *Conn) Version(ctx context.Context) (int, error) {
	v, err := c.s.Version(ctx)
	return v, c.failed(err)
}

// Sequence runs a script of several statements, stopping at the first
// error.
func (c *Conn) Sequence(ctx context.Context, sql string) error {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestSequence, SQL: sql, ReplicationIndex: idx})
	res, err := c.send(ctx, idx)
	if err != nil {
		return err
	}
	if _, err := first(res, codec.RequestSequence); err != nil {
		return err
	}
	res.Release()
	return nil
}

// Describe asks the server about a statement without running it. It needs
// no state of the Conn's stream and leaves it alone (it runs on the
// Stream's Isolated one), so that inside Hold its failure cannot lose the
// transaction, and a transaction not begun yet opens nothing for it.
func (c *Conn) Describe(ctx context.Context, sql string) (codec.DescribeResult, error) {
	idx := c.index(ctx)
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestDescribe, SQL: sql, ReplicationIndex: idx})
	res, err := c.sendOn(ctx, c.s.Isolated(), nil, true, idx)
	if err != nil {
		return codec.DescribeResult{}, err
	}
	resp, err := first(res, codec.RequestDescribe)
	if err != nil {
		return codec.DescribeResult{}, err
	}
	d := resp.Describe
	d.Params, d.Cols = slices.Clone(d.Params), slices.Clone(d.Cols)
	res.Release()
	return d, nil
}

// GetAutocommit reports whether the stream is outside a transaction
// (Hrana 3 only).
func (c *Conn) GetAutocommit(ctx context.Context) (bool, error) {
	if v, err := c.s.Version(ctx); err != nil {
		return false, c.failed(err)
	} else if v < 3 {
		return false, &transport.Error{Safe: true, Message: "the server speaks Hrana 2, which has no get_autocommit"}
	}
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestGetAutocommit})
	res, err := c.send(ctx, 0)
	if err != nil {
		return false, err
	}
	resp, err := first(res, codec.RequestGetAutocommit)
	if err != nil {
		return false, err
	}
	auto := resp.IsAutocommit
	res.Release()
	return auto, nil
}

// OpenCursor runs the steps through a cursor, whose entries arrive as the
// server produces them. Outside Hold the cursor's stream ends with it.
func (c *Conn) OpenCursor(ctx context.Context, steps []codec.BatchStep) (transport.Cursor, error) {
	// The cursor's context bounds the reading of its rows too, so the
	// replication wait does not bound it; a cursor only ever follows a
	// request that carried the index and was answered (the pipeline that
	// found the result too large, or the transaction's earlier statements).
	idx := c.index(ctx)
	batch := codec.Batch{Steps: steps, ReplicationIndex: idx}
	open := func(ctx context.Context, batch *codec.Batch, setup []codec.StreamRequest) (transport.Cursor, error) {
		return c.s.OpenCursor(ctx, batch, !c.held, setup)
	}
	c.refresh()
	setup := c.setupFor(c.s)
	if c.side != nil && !c.held && c.sideAllowed(ctx, steps) {
		open, setup = c.sideCursor, c.setup
	}
	idle := c.idle && c.s.Open()
	cur, err := c.openOn(ctx, &batch, setup, open)
	if idle && streamGone(err) {
		// As in send: the idle stream is gone, and the cursor ran nothing.
		c.renew()
		cur, err = c.openOn(ctx, &batch, c.setupFor(c.s), open)
	}
	c.idle = !c.held
	if err != nil {
		return nil, c.failed(err)
	}
	// The terminator's replication_index is not read: PROTOCOL.md §7.2.6
	// says a client MUST NOT interpret it (Turso's servers send null). A
	// cursor's statements therefore leave the read-your-writes index where
	// the pipelines' results put it.
	return cur, nil
}

// openOn opens a cursor with open, traced if the Conn is.
func (c *Conn) openOn(ctx context.Context, batch *codec.Batch, setup []codec.StreamRequest,
	open func(context.Context, *codec.Batch, []codec.StreamRequest) (transport.Cursor, error)) (transport.Cursor, error) {
	if c.tr != nil {
		return c.openTraced(ctx, batch, setup, open)
	}
	return open(ctx, batch, setup)
}

// Ping checks that the server answers and accepts the credentials: an
// empty request (over HTTP, outside Hold, just a close).
func (c *Conn) Ping(ctx context.Context) error {
	c.reqs = c.reqs[:0]
	res, err := c.send(ctx, 0)
	if err != nil {
		return err
	}
	res.Release()
	return nil
}
