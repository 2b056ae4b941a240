package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/internal/session"
)

// How the layers report to a Tracer. The root package owns statements,
// batches, retries of SQLITE_BUSY and the waits in the client; the session
// layer owns requests and the resend of a request whose lingering stream
// expired (session.Tracer, which connTrace turns into TraceEvents); the
// transports tell a cursor's fetches (transport.Options.TraceFetch, which
// tracer.fetch turns into TraceEvents). Every hook is nil without a
// Tracer, and each call site checks for nil before it builds anything, so
// that tracing costs nothing when it is off (TestPointQueryAllocs).

// tracer is a connector's Tracer, with what every event of it carries.
type tracer struct {
	t    Tracer
	base TraceEvent // the connector's fields
}

// newTracer returns the tracer of a connector for cfg, or nil without t.
func newTracer(t Tracer, cfg *Config) *tracer {
	if t == nil {
		return nil
	}
	tr := &tracer{t: t}
	tr.base.Transport = cfg.Transport
	if tr.base.Transport == "" {
		tr.base.Transport = TransportHTTP
	}
	tr.base.ServerAddress, tr.base.ServerPort = serverAddress(cfg.URL)
	tr.base.Namespace = cfg.Namespace
	return tr
}

// serverAddress returns the host and port of a base URL, the port being
// the scheme's default when the URL has none.
func serverAddress(rawURL string) (string, int) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = 443
		}
	}
	return u.Hostname(), port
}

// event returns a new event of kind k with the connector's fields.
func (tr *tracer) event(k TraceKind) *TraceEvent {
	ev := new(TraceEvent)
	*ev = tr.base
	ev.Kind = k
	return ev
}

// end tells the Tracer that ev ended with err.
func (tr *tracer) end(ctx context.Context, ev *TraceEvent, err error) {
	ev.Err = err
	tr.t.End(ctx, ev)
}

// fetch is transport.Options.TraceFetch: a TraceFetch.
func (tr *tracer) fetch(ctx context.Context) func(rows, bytes int, err error) {
	ev := tr.event(TraceFetch)
	ctx = tr.t.Start(ctx, ev)
	return func(rows, bytes int, err error) {
		ev.Rows, ev.BytesReceived = rows, bytes
		tr.end(ctx, ev, fromSession(err))
	}
}

// connTrace is one connection's tracing: a session.Tracer for its session,
// and the events it has open. A nil *connTrace traces nothing; its
// methods may be called all the same.
type connTrace struct {
	*tracer
	stmt   *TraceEvent // the statement or batch being run, for Begin
	req    *TraceEvent // the request in flight
	resend *TraceEvent // the resend in flight
}

var _ session.Tracer = (*connTrace)(nil)

// forConn returns a connection's tracing; nil for a nil tracer.
func (tr *tracer) forConn() *connTrace {
	if tr == nil {
		return nil
	}
	return &connTrace{tracer: tr}
}

// StartRequest starts a TraceRequest.
func (ct *connTrace) StartRequest(ctx context.Context, r *session.Request) context.Context {
	ev := ct.event(TraceRequest)
	ev.Request = r.Type.String()
	if r.Cursor {
		ev.Request = "cursor"
	}
	ev.Requests, ev.ReplicationIndex = r.Requests, r.ReplicationIndex
	ct.req = ev
	return ct.t.Start(ctx, ev)
}

// EndRequest ends the TraceRequest in flight.
func (ct *connTrace) EndRequest(ctx context.Context, r *session.Request) {
	ev := ct.req
	ct.req = nil
	ev.BytesSent, ev.BytesReceived, ev.ServerTime = r.BytesSent, r.BytesReceived, r.ServerTime
	ct.end(ctx, ev, fromSession(r.Err))
}

// StartResend starts a TraceRetry of a request whose lingering stream
// expired.
func (ct *connTrace) StartResend(ctx context.Context, cause error) context.Context {
	ctx, ct.resend = ct.startRetry(ctx, RetryStreamExpired, 2, fromSession(cause))
	return ctx
}

// EndResend ends the resend in flight.
func (ct *connTrace) EndResend(ctx context.Context, err error) {
	ev := ct.resend
	ct.resend = nil
	ct.end(ctx, ev, fromSession(err))
}

// statement returns a new TraceStatement of sql, whose first keyword is
// keyword (or, with a batch of statements, a TraceBatch, without one).
func (ct *connTrace) statement(k TraceKind, call TraceCall, sql, keyword string, inTx bool) *TraceEvent {
	ev := ct.event(k)
	ev.Call, ev.SQL, ev.Keyword, ev.InTx = call, sql, keyword, inTx
	return ev
}

// startStatement starts ev, a TraceStatement or TraceBatch from statement,
// which becomes the one BEGIN is told to.
func (ct *connTrace) startStatement(ctx context.Context, ev *TraceEvent) context.Context {
	ct.stmt = ev
	return ct.t.Start(ctx, ev)
}

// endStatement ends a TraceStatement or TraceBatch started by
// startStatement.
func (ct *connTrace) endStatement(ctx context.Context, ev *TraceEvent, err error) {
	ct.ran(ev)
	ct.end(ctx, ev, err)
}

// ran records that the call of ev has returned (a Query's event lives on
// with its rows).
func (ct *connTrace) ran(ev *TraceEvent) {
	if ct.stmt == ev {
		ct.stmt = nil
	}
}

// begun records that the transaction's BEGIN went out with the statement
// being run.
func (ct *connTrace) begun() {
	if ct != nil && ct.stmt != nil {
		ct.stmt.Begin = true
	}
}

// sendQueue runs send, which sends the transaction's queued statements
// (ending with COMMIT if commit), as a TraceBatch. The batch is the
// statement being run while it goes out, so that BEGIN riding with it is
// told to it (begun), not to the call that sent the queue.
func (ct *connTrace) sendQueue(ctx context.Context, t *tx, commit bool, send func(context.Context) error) error {
	ev := ct.event(TraceBatch)
	ev.InTx, ev.Commit = true, commit
	ev.Deferred, ev.BatchSize = t.dq.stmts[0].res.seq, t.dq.len()
	outer := ct.stmt
	ct.stmt = ev
	ctx = ct.t.Start(ctx, ev)
	err := send(ctx)
	ct.stmt = outer
	ct.end(ctx, ev, err)
	return err
}

// startRetry starts a TraceRetry.
func (ct *connTrace) startRetry(ctx context.Context, why RetryReason, attempt int, cause error) (context.Context, *TraceEvent) {
	ev := ct.event(TraceRetry)
	ev.Retry, ev.Attempt, ev.Cause = why, attempt, cause
	return ct.t.Start(ctx, ev), ev
}

// startWait starts a TraceWait for why.
func (ct *connTrace) startWait(ctx context.Context, why WaitReason) (context.Context, *TraceEvent) {
	ev := ct.event(TraceWait)
	ev.Wait = why
	return ct.t.Start(ctx, ev), ev
}

// endExec ends an Exec's TraceStatement with what its result says.
func (ct *connTrace) endExec(ctx context.Context, ev *TraceEvent, res driver.Result, err error) {
	switch r := res.(type) {
	case result:
		ev.RowsAffected = r.affected
	case *deferredResult:
		ev.Deferred = r.seq
	}
	ct.endStatement(ctx, ev, err)
}

// queryRows returns a traced Query's rows, which end its TraceStatement
// when they close.
func (ct *connTrace) queryRows(ctx context.Context, ev *TraceEvent, rows driver.Rows) driver.Rows {
	ct.ran(ev)
	return &tracedRows{columnRows: rows.(columnRows), ct: ct, ctx: ctx, ev: ev}
}

// batchSQL is the text of a Batch for its TraceBatch: the statements'
// texts joined by "; ".
func batchSQL(stmts []Statement) string {
	var b strings.Builder
	for i := range stmts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(stmts[i].SQL)
	}
	return b.String()
}

// columnRows are rows with what both kinds of the driver's rows tell of
// their columns.
type columnRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeScanType
	driver.RowsColumnTypeNullable
}

var (
	_ columnRows = (*pipelineRows)(nil)
	_ columnRows = (*cursorRows)(nil)
	_ columnRows = (*tracedRows)(nil)
)

// tracedRows are a traced Query's rows: closing them ends its
// TraceStatement, with the rows delivered and the failure that ended them
// early, if any.
type tracedRows struct {
	columnRows
	ct    *connTrace
	ctx   context.Context
	ev    *TraceEvent
	err   error
	ended bool
}

// Next fills dest with the next row, counting it.
func (r *tracedRows) Next(dest []driver.Value) error {
	err := r.columnRows.Next(dest)
	switch {
	case err == nil:
		r.ev.Rows++
	case !errors.Is(err, io.EOF) && r.err == nil:
		r.err = err
	}
	return err
}

// Close closes the rows and ends the Query's event.
func (r *tracedRows) Close() error {
	err := r.columnRows.Close()
	if !r.ended {
		r.ended = true
		r.ct.end(r.ctx, r.ev, r.err)
	}
	return err
}
