package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// conn is one database/sql connection. Outside a transaction it holds no
// server state: every statement opens and closes its own server stream in
// one HTTP request. A transaction keeps one stream (its baton) until COMMIT
// or ROLLBACK, which travel together with the close.
type conn struct {
	client *transport.Client
	// deferExec is Config.DeferredExec: the default for transactions.
	deferExec bool
	auto      *transport.Stream // for autocommit requests; never left open
	tx        *tx               // the open transaction, if any
	reqs      []codec.StreamRequest
	// readonly caches describe's is_readonly per SQL text, for read-only
	// transactions.
	readonly map[string]bool
}

// respBuf holds one decoded response and the body it may point into.
type respBuf struct {
	resp codec.PipelineResponse
	body []byte
}

var respPool = sync.Pool{New: func() any { return new(respBuf) }}

func getResp() *respBuf { return respPool.Get().(*respBuf) }

// putResp recycles b unless it grew unusually large.
func putResp(b *respBuf) {
	if cap(b.body) > 1<<20 {
		return
	}
	b.resp.Reset()
	respPool.Put(b)
}

func newConn(client *transport.Client, deferExec bool) *conn {
	return &conn{client: client, auto: client.NewStream(), deferExec: deferExec}
}

// Prepare returns a prepared statement. It costs no request: Hrana has no
// server-side prepared statements over HTTP that outlive a stream.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns a prepared statement; see Prepare.
func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return &stmt{c: c, sql: query, params: scanParams(query)}, nil
}

// Begin starts a transaction with default options.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction. Nothing is sent yet: BEGIN travels with the
// transaction's first statement, so a transaction of k statements costs at
// most k+1 requests. SQLite transactions are serializable; other isolation
// levels are an error. ReadOnly transactions refuse statements that would
// write (checked with describe, cached per connection).
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.tx != nil {
		return nil, errors.New("libsql: a transaction is already open on this connection")
	}
	switch opts.Isolation {
	case driver.IsolationLevel(0), driver.IsolationLevel(levelSerializable):
	default:
		return nil, fmt.Errorf("libsql: isolation level %d is not supported; SQLite transactions are serializable", opts.Isolation)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.tx = &tx{c: c, ctx: ctx, readOnly: opts.ReadOnly, stream: c.client.NewStream(),
		// A read-only transaction checks each statement before it runs, so
		// it gains nothing from deferring them.
		deferExec: !opts.ReadOnly && deferredFrom(ctx, c.deferExec)}
	return c.tx, nil
}

// levelSerializable is sql.LevelSerializable, without importing database/sql.
const levelSerializable = 6

// Close releases the connection. An open transaction's stream is closed,
// which rolls it back.
func (c *conn) Close() error {
	if c.tx != nil {
		_ = c.tx.Rollback()
	}
	return nil
}

// Ping checks that the server is reachable and accepts the credentials.
func (c *conn) Ping(ctx context.Context) error {
	b := getResp()
	defer putResp(b)
	c.reqs = append(c.reqs[:0], codec.StreamRequest{Type: codec.RequestClose})
	err := c.auto.Pipeline(ctx, &codec.PipelineRequest{Requests: c.reqs}, &b.resp, &b.body)
	c.auto.Forget()
	if err != nil {
		return wrapErr(err)
	}
	return nil
}

// ResetSession is called before a pooled connection is reused.
func (c *conn) ResetSession(context.Context) error {
	if c.tx != nil {
		return driver.ErrBadConn
	}
	return nil
}

// IsValid reports whether the connection may go back to the pool.
func (c *conn) IsValid() bool { return c.tx == nil }

// CheckNamedValue converts and checks one argument.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error { return checkNamedValue(nv) }

// ExecContext runs a statement without returning rows. With no arguments,
// a text of several statements runs them all, in order (schema files,
// migrations), stopping at the first error.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, query, scanParams(query), args)
}

// QueryContext runs a statement and returns its rows.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, query, scanParams(query), args)
}

func (c *conn) exec(ctx context.Context, query string, params sqlParams, args []driver.NamedValue) (driver.Result, error) {
	st := codec.Stmt{SQL: query, WantRows: true}
	if err := bindArgs(&st, params, args); err != nil {
		return nil, err
	}
	if c.tx != nil && c.tx.deferExec && !params.multi {
		// Several statements in one text must run as a sequence, which a
		// batch step cannot hold; they are sent at once instead.
		return c.tx.queueExec(ctx, &st)
	}
	b := getResp()
	defer putResp(b)
	res, err := c.execute(ctx, &st, b)
	if err != nil {
		if len(args) == 0 && hasCode(err, "SQL_MANY_STATEMENTS") {
			// Nothing ran: sqld parses the whole text first.
			return c.sequence(ctx, query, b)
		}
		return nil, err
	}
	return newResult(res), nil
}

// query runs a statement through a pipeline, which is fastest for results
// up to sqld's response limit (--max-response-size, 10 MB by default). A
// larger result fails there with RESPONSE_TOO_LARGE; if the statement only
// reads, it then runs again through a cursor, which streams rows of any
// number with bounded memory. A statement that writes is never run twice:
// its RESPONSE_TOO_LARGE error is returned.
func (c *conn) query(ctx context.Context, query string, params sqlParams, args []driver.NamedValue) (driver.Rows, error) {
	st := codec.Stmt{SQL: query, WantRows: true}
	if err := bindArgs(&st, params, args); err != nil {
		return nil, err
	}
	b := getResp()
	res, err := c.execute(ctx, &st, b)
	if err == nil {
		return newRows(res, b), nil
	}
	putResp(b)
	if !hasCode(err, "RESPONSE_TOO_LARGE") {
		return nil, err
	}
	if ro, derr := c.isReadOnly(ctx, query); derr != nil || !ro {
		var e *Error
		if errors.As(err, &e) {
			e.Message += " (the statement ran; it writes, so it is not run again to stream its rows)"
		}
		return nil, err
	}
	return c.queryCursor(ctx, &st)
}

func hasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// execute runs one statement, decoding the response into b, and returns
// its result (which points into b).
func (c *conn) execute(ctx context.Context, st *codec.Stmt, b *respBuf) (*codec.StmtResult, error) {
	if c.tx != nil {
		return c.tx.execute(ctx, st, b)
	}
	c.reqs = append(c.reqs[:0],
		codec.StreamRequest{Type: codec.RequestExecute, Stmt: *st},
		codec.StreamRequest{Type: codec.RequestClose})
	if err := c.autoPipeline(ctx, b); err != nil {
		return nil, err
	}
	r := &b.resp.Results[0]
	if !r.OK {
		return nil, stmtError(&r.Error)
	}
	if r.Response.Type != codec.RequestExecute {
		return nil, &Error{Message: "server answered execute with " + r.Response.Type.String()}
	}
	return &r.Response.Result, nil
}

// queryCursor runs a statement through /v3/cursor: on the transaction's
// stream, or on a new stream that is closed when the rows are.
func (c *conn) queryCursor(ctx context.Context, st *codec.Stmt) (driver.Rows, error) {
	s := c.client.NewStream()
	if c.tx != nil {
		if err := c.tx.usable(); err != nil {
			return nil, err
		}
		if c.tx.state == txPending {
			// Cannot happen after a pipeline attempt, which began the
			// transaction; keep the invariant anyway.
			return nil, &Error{Message: "transaction not begun"}
		}
		s = c.tx.stream
	}
	req := codec.CursorRequest{Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: *st}}}}
	cur, err := s.OpenCursor(ctx, &req)
	if err != nil {
		err = wrapErr(err)
		if c.tx != nil {
			c.tx.lose(err)
			return nil, c.tx.lostErr
		}
		return nil, err
	}
	r, err := newCursorRows(c, s, cur)
	if err != nil {
		return nil, err
	}
	if c.tx != nil {
		c.tx.cursor = r
	}
	return r, nil
}

// closeStream closes a server stream if it is open, ignoring failures: an
// unclosed stream expires on its own within seconds.
func (c *conn) closeStream(s *transport.Stream) {
	if !s.Open() {
		return
	}
	b := getResp()
	defer putResp(b)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	req := codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestClose}}}
	_ = s.Pipeline(ctx, &req, &b.resp, &b.body)
	s.Forget()
}

// autoPipeline sends c.reqs, which end with a close, on a new stream.
func (c *conn) autoPipeline(ctx context.Context, b *respBuf) error {
	err := c.auto.Pipeline(ctx, &codec.PipelineRequest{Requests: c.reqs}, &b.resp, &b.body)
	// The close either worked, or the stream died with the failure; either
	// way nothing is left to continue.
	c.auto.Forget()
	if err != nil {
		return wrapErr(err)
	}
	return nil
}

// sequence runs a multi-statement script.
func (c *conn) sequence(ctx context.Context, script string, b *respBuf) (driver.Result, error) {
	if c.tx != nil {
		if err := c.tx.sequence(ctx, script, b); err != nil {
			return nil, err
		}
		return driver.RowsAffected(0), nil
	}
	c.reqs = append(c.reqs[:0],
		codec.StreamRequest{Type: codec.RequestSequence, SQL: script},
		codec.StreamRequest{Type: codec.RequestClose})
	if err := c.autoPipeline(ctx, b); err != nil {
		return nil, err
	}
	if r := &b.resp.Results[0]; !r.OK {
		return nil, stmtError(&r.Error)
	}
	return driver.RowsAffected(0), nil
}

// isReadOnly reports whether sql only reads, asking the server's describe
// (SQLite's sqlite3_stmt_readonly) once per text and connection.
func (c *conn) isReadOnly(ctx context.Context, sql string) (bool, error) {
	if ro, ok := c.readonly[sql]; ok {
		return ro, nil
	}
	b := getResp()
	defer putResp(b)
	c.reqs = append(c.reqs[:0],
		codec.StreamRequest{Type: codec.RequestDescribe, SQL: sql},
		codec.StreamRequest{Type: codec.RequestClose})
	if err := c.autoPipeline(ctx, b); err != nil {
		return false, err
	}
	r := &b.resp.Results[0]
	if !r.OK {
		return false, stmtError(&r.Error)
	}
	ro := r.Response.Describe.IsReadonly
	if c.readonly == nil || len(c.readonly) > 1000 {
		c.readonly = map[string]bool{}
	}
	c.readonly[sql] = ro
	return ro, nil
}

// bindArgs puts the arguments into st the way the statement's parameters
// need them: sqld binds :name/@name/$name only from named_args and ?/?NNN
// only from args.
func bindArgs(st *codec.Stmt, p sqlParams, args []driver.NamedValue) error {
	if len(args) == 0 {
		return nil
	}
	named := 0
	for i := range args {
		if args[i].Name != "" {
			named++
		}
	}
	switch {
	case named > 0 && named < len(args):
		return errors.New("libsql: arguments mix positional and named (sql.Named) values; use one style per statement")
	case named > 0:
		// Named arguments the statement does not use are ignored, as in
		// mattn/go-sqlite3.
		for i := range args {
			if p.uses(args[i].Name) {
				st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: args[i].Name, Value: toValue(args[i].Value)})
			}
		}
	case p.hasNamed && p.hasNumeric:
		return errors.New("libsql: the statement mixes ? and named parameters, which the server cannot bind")
	case p.hasNamed:
		// Positional values for :name parameters, bound by index as SQLite
		// numbers them.
		if len(args) != len(p.names) {
			return fmt.Errorf("libsql: the statement has %d parameters but %d arguments were given", len(p.names), len(args))
		}
		for i := range args {
			st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: p.names[i], Value: toValue(args[i].Value)})
		}
	default:
		st.Args = make([]codec.Value, len(args))
		for i := range args {
			st.Args[i] = toValue(args[i].Value)
		}
	}
	return nil
}

// cleanupTimeout bounds requests that clean up after a failure or a
// transaction, which run without the caller's context.
const cleanupTimeout = 10 * time.Second
