package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

var (
	_ driver.Conn                       = (*conn)(nil)
	_ driver.ConnPrepareContext         = (*conn)(nil)
	_ driver.ConnBeginTx                = (*conn)(nil)
	_ driver.ExecerContext              = (*conn)(nil)
	_ driver.QueryerContext             = (*conn)(nil)
	_ driver.Pinger                     = (*conn)(nil)
	_ driver.SessionResetter            = (*conn)(nil)
	_ driver.Validator                  = (*conn)(nil)
	_ interface{ InTransaction() bool } = (*conn)(nil) // asked by the embedded module
	_ driver.NamedValueChecker          = (*conn)(nil)
)

// conn is one database/sql connection: the SQL-level face of one session
// (session.Conn). It is in one mode at a time (connMode), and it alone
// decides, in mode, where each statement runs.
type conn struct {
	s           sessionConn
	busyTimeout time.Duration // Config.BusyTimeout
	writers     *writers      // the connector's bound on writes in flight; nil: none
	tx          *tx           // the latest BeginTx transaction; open unless tx.finished()
	sqlTx       sqlTx         // a transaction begun with SQL (tx_sql.go)
	// deferExec is Config.DeferredExec: the default for transactions.
	deferExec bool
	txBegin   string // beginSQL of Config.TxLock
	described describeCache
	repl      *session.Replication // the connector's; nil for a conn of no connector
	// infinities: the codec carries ±Inf floats (Protobuf), so arguments
	// may be infinite.
	infinities bool
	tr         *connTrace // nil: not traced
}

// connMode is where a connection's statements run.
type connMode uint8

const (
	// modeAutocommit: each statement is a unit of work of its own
	// (autocommit.go).
	modeAutocommit connMode = iota
	// modeTx: inside the transaction BeginTx returned (c.tx, tx.go), which
	// holds the session's stream until it ends.
	modeTx
	// modeSQLTx: inside a transaction begun with SQL (c.sqlTx, tx_sql.go),
	// followed from the server's autocommit state.
	modeSQLTx
)

// mode reports the connection's mode. The two transactions exclude each
// other: BeginTx refuses while one begun with SQL is open, and a BeginTx
// transaction's statements never go through sqlTx.
func (c *conn) mode() connMode {
	switch {
	case c.tx != nil && !c.tx.finished():
		return modeTx
	case c.sqlTx.open:
		return modeSQLTx
	}
	return modeAutocommit
}

// Each mode has its runners, which take the connection: execute (one
// statement; release its result), sequence (a script), cursor (one
// statement through a cursor), batch and describe. conn picks one per call
// with concrete calls rather than an interface, so that the statement,
// built on the caller's stack, stays there.

// describer describes a statement without running it.
type describer interface {
	describe(ctx context.Context, sql string) (codec.DescribeResult, error)
}

// newConn returns a conn on stream s for the connector's cfg, replication
// indexes and write bound; infinities says whether its codec carries ±Inf;
// ct, if not nil, traces it.
func newConn(s transport.Stream, cfg *Config, repl *session.Replication, w *writers, infinities bool, ct *connTrace) *conn {
	sc := sessionConn{session.NewConn(s)}
	if repl != nil {
		sc.SetReplication(repl)
	}
	if ct != nil {
		sc.SetTracer(ct)
	}
	for _, p := range cfg.Pragmas {
		sql, _ := pragmaSQL(p) // checked by Config.validate
		sc.Persist(analyzeSQL(sql).PragmaKey, codec.Stmt{SQL: sql})
	}
	return &conn{s: sc, busyTimeout: cfg.BusyTimeout, writers: w,
		deferExec: cfg.DeferredExec, txBegin: beginSQL(cfg.TxLock), repl: repl, infinities: infinities, tr: ct}
}

// remember makes a connection setting that sql just made outlive the
// server stream it was made on (see pragma.go).
func (c *conn) remember(sql string, text sqlText, args []driver.NamedValue) {
	if key, ok := text.setting(); ok && len(args) == 0 {
		c.s.Persist(key, codec.Stmt{SQL: sql})
	}
}

// execute runs st, whose text is text.
func (c *conn) execute(ctx context.Context, st *codec.Stmt, text *sqlText) (*session.Result, error) {
	switch c.mode() {
	case modeTx:
		return c.tx.execute(ctx, st)
	case modeSQLTx:
		// Neither bounded nor retried, as inside BeginTx's transactions.
		return c.sqlTx.execute(ctx, c.s, st, text.Tx)
	}
	return c.autoExecute(ctx, st, text)
}

// sequence runs script, whose text is text.
func (c *conn) sequence(ctx context.Context, script string, text *sqlText) error {
	switch c.mode() {
	case modeTx:
		return c.tx.sequence(ctx, script)
	case modeSQLTx:
		return c.sqlTx.sequence(ctx, c.s, script)
	}
	return c.autoSequence(ctx, script, text)
}

// cursor streams st's rows.
func (c *conn) cursor(ctx context.Context, st *codec.Stmt) (*cursorRows, error) {
	if c.mode() == modeTx {
		return c.tx.cursor(ctx, st)
	}
	// In modeSQLTx the session's held stream takes the cursor.
	return c.autoCursor(ctx, st)
}

// describer returns what describes a statement in the connection's mode:
// the transaction, whose queued statements go first, or the session.
func (c *conn) describer() describer {
	if c.mode() == modeTx {
		return c.tx
	}
	return c
}

// Prepare returns a prepared statement; see PrepareContext.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns a prepared statement, checked with the server
// (describe) as mattn/go-sqlite3, pgx and go-sql-driver/mysql check theirs
// at Prepare: SQL that cannot run fails here, with the server's error. The
// answer is kept per text on the connection, so preparing a text again
// costs no request. A script of several statements, which describe cannot
// take, is checked when it runs. Executing the statement costs the same
// single request as an unprepared one: Hrana has no server-side prepared
// statements over HTTP that outlive a stream.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st := &stmt{c: c, sql: query, params: analyzeSQL(query), numInput: -1}
	if st.params.Multi {
		return st, nil
	}
	d, err := c.described.get(ctx, c.describer(), query)
	if err != nil {
		return nil, err
	}
	st.numInput = d.numInput
	return st, nil
}

// Begin starts a transaction with default options.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction. Nothing is sent yet: BEGIN travels with the
// transaction's first statement, so a transaction of k statements costs at
// most k+1 requests. SQLite transactions are serializable; other isolation
// levels are an error. ReadOnly transactions refuse statements that would
// write (checked with describe, cached per connection). Config.TxLock
// (_txlock) says which BEGIN the others send.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	switch c.mode() {
	case modeTx:
		return nil, errors.New("libsql: a transaction is already open on this connection")
	case modeSQLTx:
		return nil, errors.New("libsql: a transaction begun with SQL (BEGIN) is open on this connection; end it with COMMIT or ROLLBACK first")
	}
	switch opts.Isolation {
	case driver.IsolationLevel(0), driver.IsolationLevel(levelSerializable):
	default:
		return nil, fmt.Errorf("libsql: isolation level %d is not supported; SQLite transactions are serializable", opts.Isolation)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A read-only transaction checks each statement before it runs, so it
	// gains nothing from deferring them.
	deferExec := !opts.ReadOnly && deferredFrom(ctx, c.deferExec)
	c.tx = newTx(ctx, c, opts.ReadOnly, deferExec)
	return c.tx, nil
}

// levelSerializable is sql.LevelSerializable, without importing database/sql.
const levelSerializable = 6

// Close releases the connection. An open transaction's stream is closed,
// which rolls it back, and so is a stream kept between statements (over
// WebSocket).
func (c *conn) Close() error {
	if c.mode() == modeTx {
		_ = c.tx.Rollback()
	}
	c.s.Reset()
	return nil
}

// Ping checks that the server is reachable and accepts the credentials.
func (c *conn) Ping(ctx context.Context) error { return c.s.Ping(ctx) }

// ResetSession is called before a pooled connection is reused. One with a
// transaction, or whose stream still awaits the answers to a request whose
// context ended (over WebSocket), is bad. One whose server stream was lost
// while it sat in the pool (its socket died) starts a new stream, on which
// its settings are replayed: a pooled connection's state is only those.
func (c *conn) ResetSession(context.Context) error {
	switch {
	case c.mode() == modeTx || c.s.Busy():
		return driver.ErrBadConn
	case c.mode() == modeSQLTx:
		// IsValid keeps such a connection out of the pool; should one get
		// here anyway, its transaction must not reach the next user.
		c.sqlTx.abandon(c.s)
	}
	if c.s.Lost() {
		c.s.Reset()
	}
	return nil
}

// inTx reports whether a transaction is open on the connection: BeginTx's
// or one begun with SQL.
func (c *conn) inTx() bool { return c.mode() != modeAutocommit }

// InTransaction reports whether a transaction is open on the connection
// (BeginTx's, or one begun with SQL, which the connection follows from the
// server's answers). The embedded module asks it of the driver.Conn it
// holds, through an interface of this one method, to send every statement
// of such a transaction to the primary.
func (c *conn) InTransaction() bool { return c.inTx() }

// IsValid reports whether the connection may go back to the pool: not with
// a transaction open (BeginTx's, or one begun with SQL, which closing the
// connection rolls back at once, releasing SQLite's write lock), nor with
// its stream Busy.
func (c *conn) IsValid() bool { return !c.inTx() && !c.s.Busy() }

// CheckNamedValue converts and checks one argument.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error { return checkNamedValue(nv, c.infinities) }

// ExecContext runs a statement without returning rows. With no arguments,
// a text of several statements runs them all, in order (schema files,
// migrations), stopping at the first error.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, query, analyzeSQL(query), args)
}

// QueryContext runs a statement and returns its rows.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, query, analyzeSQL(query), args)
}

func (c *conn) exec(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Result, error) {
	ctx, ev := c.startStatement(ctx, CallExec, query, params.Keyword)
	res, err := c.runExec(ctx, query, params, args)
	if ev != nil {
		c.tr.endExec(ctx, ev, res, err)
	}
	return res, err
}

// startStatement starts the TraceStatement of an Exec or Query (call) of
// query, whose first keyword is keyword, on a traced connection, returning
// the context that carries it and the event; on an untraced one it returns
// ctx and a nil event.
func (c *conn) startStatement(ctx context.Context, call TraceCall, query, keyword string) (context.Context, *TraceEvent) {
	if c.tr == nil {
		return ctx, nil
	}
	ev := c.tr.statement(TraceStatement, call, query, keyword, c.inTx())
	return c.tr.startStatement(ctx, ev), ev
}

// runExec is exec without its trace.
func (c *conn) runExec(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Result, error) {
	// Exec discards rows: not asking for them keeps the answer small.
	st := codec.Stmt{SQL: query}
	if err := bindArgs(&st, params, args); err != nil {
		return nil, err
	}
	if c.mode() == modeTx && c.tx.deferExec && !params.Multi {
		// Several statements in one text must run as a sequence, which a
		// batch step cannot hold; they are sent at once instead.
		return c.tx.queueExec(ctx, &st)
	}
	res, err := c.execute(ctx, &st, &params)
	if err != nil {
		if len(args) == 0 && hasCode(err, codeSQLManyStatements) {
			// Nothing ran: sqld parses the whole text first.
			if err := c.sequence(ctx, query, &params); err != nil {
				return nil, err
			}
			return driver.RowsAffected(0), nil
		}
		return nil, err
	}
	out := newResult(res.Stmt())
	res.Release()
	c.remember(query, params, args)
	return out, nil
}

// query runs a statement through a pipeline, which is fastest for results
// up to sqld's response limit (--max-response-size, 10 MB by default). A
// larger result fails there with RESPONSE_TOO_LARGE; if the statement only
// reads, it then runs again through a cursor, which streams rows of any
// number with bounded memory. A statement that writes is never run twice:
// its RESPONSE_TOO_LARGE error is returned.
func (c *conn) query(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Rows, error) {
	ctx, ev := c.startStatement(ctx, CallQuery, query, params.Keyword)
	rows, err := c.runQuery(ctx, query, params, args)
	if ev != nil {
		if err != nil {
			c.tr.endStatement(ctx, ev, err)
			return nil, err
		}
		return c.tr.queryRows(ctx, ev, rows), nil
	}
	return rows, err
}

// runQuery is query without its trace.
func (c *conn) runQuery(ctx context.Context, query string, params sqlText, args []driver.NamedValue) (driver.Rows, error) {
	st := codec.Stmt{SQL: query, WantRows: true}
	if err := bindArgs(&st, params, args); err != nil {
		return nil, err
	}
	res, err := c.execute(ctx, &st, &params)
	if err == nil {
		c.remember(query, params, args)
		return newRows(res), nil
	}
	if !hasCode(err, codeResponseTooLarge) {
		return nil, err
	}
	ro, derr := c.described.check(ctx, c.describer(), query)
	if derr != nil || !ro {
		if derr != nil {
			return nil, withNote(err, "the statement ran; it is not run again to stream its rows, since asking whether it writes failed: "+derr.Error())
		}
		return nil, withNote(err, "the statement ran; it writes, so it is not run again to stream its rows")
	}
	return c.cursor(ctx, &st)
}

// describeCache remembers what describe said of each SQL text, for
// Prepare's check, read-only transactions and the cursor fallback: one
// request per text per connection.
type describeCache struct {
	m map[string]described
}

// described is what the driver keeps of a describe answer.
type described struct {
	readOnly bool // SQLite's sqlite3_stmt_readonly
	numInput int  // the parameters, if all are anonymous (? or ?NNN); else -1
}

// maxDescribeCache bounds the cache; it starts over when full.
const maxDescribeCache = 1000

// get returns what describe says of sql, asking d once per text. An error
// (SQL that cannot run) is not kept: the schema may change.
func (dc *describeCache) get(ctx context.Context, d describer, sql string) (described, error) {
	if v, ok := dc.m[sql]; ok {
		return v, nil
	}
	desc, err := d.describe(ctx, sql)
	if err != nil {
		return described{}, err
	}
	v := described{readOnly: desc.IsReadonly, numInput: len(desc.Params)}
	for _, p := range desc.Params {
		if p.Name != "" && !isNumbered(p.Name) {
			v.numInput = -1 // named: unused named arguments are allowed
			break
		}
	}
	if dc.m == nil || len(dc.m) >= maxDescribeCache {
		dc.m = map[string]described{}
	}
	dc.m[sql] = v
	return v, nil
}

// check reports whether sql only reads (SQLite's sqlite3_stmt_readonly),
// asking d once per text.
func (dc *describeCache) check(ctx context.Context, d describer, sql string) (bool, error) {
	v, err := dc.get(ctx, d, sql)
	return v.readOnly, err
}

// isNumbered reports whether a parameter's name is a ?NNN, which binds
// from positional arguments.
func isNumbered(name string) bool {
	if len(name) < 2 || name[0] != '?' {
		return false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
