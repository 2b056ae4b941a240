package libsql

import (
	"context"
	"time"
)

// A Tracer is told when the driver's operations start and end, for
// instrumentation such as OpenTelemetry (the module
// github.com/gohrana/libsql/otel turns them into spans). Set one with
// WithTracer. It sees what only the driver knows: the Hrana requests
// behind each statement, a statement that rode along with BEGIN or was
// queued by deferred execution and sent later, a cursor's fetches, retries
// and waits.
//
// Start is called when an operation begins and returns the context it goes
// on with: the operations it leads to (a statement's requests, a retry's
// wait) get that context in their own Start, and End gets it too. End is
// called exactly once for every Start, with the same event, its outcome
// filled in. The event belongs to the driver: a Tracer may read it until
// End returns, and must neither change it nor keep it after. Operations of
// different connections are told concurrently, so a Tracer must be safe for
// concurrent use; those of one connection come one after another, except a
// Query, which ends only when its rows are closed.
//
// Events never carry a statement's arguments, the auth token or a header's
// value.
type Tracer interface {
	Start(ctx context.Context, ev *TraceEvent) context.Context
	End(ctx context.Context, ev *TraceEvent)
}

// WithTracer makes the connector tell t of its operations (see Tracer).
// Without it the driver traces nothing, at no cost.
func WithTracer(t Tracer) ConnectorOption {
	return func(o *connectorOptions) { o.tracer = t }
}

// TraceKind says what a TraceEvent is about.
type TraceKind uint8

const (
	// TraceStatement is a database/sql call that runs SQL: Exec, Query,
	// Commit or Rollback (Call says which). A Query ends when its rows are
	// closed, so that a cursor's fetches fall inside it. Commit and
	// Rollback, which database/sql calls without a context, start with
	// the context BeginTx was given. An Exec queued by
	// deferred execution ends at once, having sent nothing (Deferred); the
	// TraceBatch that sends it later is a child of whatever sent it.
	TraceStatement TraceKind = iota + 1
	// TraceBatch is several statements in one Hrana batch: a call of
	// Batch (SQL holds their texts), or the statements deferred execution
	// had queued, sent together (Deferred; with Commit when COMMIT ends
	// the batch).
	TraceBatch
	// TraceRequest is one Hrana request: an HTTP pipeline, or a burst of
	// requests over WebSocket, from before it is written until its answer
	// is decoded; for a cursor, until the server has started answering.
	TraceRequest
	// TraceFetch is part of a cursor's result on its way: over WebSocket
	// each fetch_cursor, from when it is asked for (ahead of the reader)
	// until the cursor takes its answer; over HTTP the body of the
	// cursor's response, from its first line to its last.
	TraceFetch
	// TraceRetry is one more attempt at an operation that failed in a way
	// that certainly had no effect (Retry says why): its wait and its
	// request are inside it.
	TraceRetry
	// TraceWait is time spent waiting in the client (Wait says for what).
	// A replica's wait for a replication index is the server's, inside a
	// request: see TraceEvent.ReplicationIndex.
	TraceWait
)

var traceKindNames = [...]string{
	TraceStatement: "statement",
	TraceBatch:     "batch",
	TraceRequest:   "request",
	TraceFetch:     "fetch",
	TraceRetry:     "retry",
	TraceWait:      "wait",
}

// String returns the kind's name: "statement", "batch", "request",
// "fetch", "retry" or "wait".
func (k TraceKind) String() string { return enumName(traceKindNames[:], int(k)) }

// TraceCall is the database/sql call a TraceStatement stands for.
type TraceCall uint8

// The calls.
const (
	CallExec TraceCall = iota + 1
	CallQuery
	CallCommit
	CallRollback
)

var traceCallNames = [...]string{
	CallExec:     "exec",
	CallQuery:    "query",
	CallCommit:   "commit",
	CallRollback: "rollback",
}

// String returns the call's name: "exec", "query", "commit" or
// "rollback".
func (c TraceCall) String() string { return enumName(traceCallNames[:], int(c)) }

// RetryReason says why a TraceRetry retries.
type RetryReason uint8

const (
	// RetryBusy is an autocommit statement, or a transaction's BEGIN with
	// the steps that rode with it, that failed with SQLITE_BUSY (it did
	// not apply), run again after a backoff within Config.BusyTimeout.
	RetryBusy RetryReason = iota + 1
	// RetryStreamExpired is a request sent again on a new server stream:
	// the stream a finished transaction begun with SQL left open expired
	// first, and the server refused the request before running any of it.
	RetryStreamExpired
)

var retryReasonNames = [...]string{
	RetryBusy:          "busy",
	RetryStreamExpired: "stream_expired",
}

// String returns the reason's name: "busy" or "stream_expired".
func (r RetryReason) String() string { return enumName(retryReasonNames[:], int(r)) }

// WaitReason says what a TraceWait waits for.
type WaitReason uint8

const (
	// WaitWriteSlot is a statement that may write waiting for one of the
	// connector's write slots (Config.MaxWriters); it is told only when
	// none was free at once.
	WaitWriteSlot WaitReason = iota + 1
	// WaitBusyBackoff is the pause before a RetryBusy sends the
	// statement again.
	WaitBusyBackoff
)

var waitReasonNames = [...]string{
	WaitWriteSlot:   "write_slot",
	WaitBusyBackoff: "busy_backoff",
}

// String returns the reason's name: "write_slot" or "busy_backoff".
func (w WaitReason) String() string { return enumName(waitReasonNames[:], int(w)) }

// enumName returns names[i], or "" for a value out of range.
func enumName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return ""
}

// TraceEvent describes one operation to a Tracer. Kind says which fields
// are set: the connector's are set on every kind, the others as their
// comments say. Start gets the fields known before the operation; the
// ones marked "End" are filled in for End.
type TraceEvent struct {
	// Kind is what the event is about.
	Kind TraceKind

	// The connector's, on every kind.

	// Transport is TransportHTTP or TransportWS.
	Transport string
	// ServerAddress is the host of Config.URL, and ServerPort its port
	// (the scheme's default when the URL names none).
	ServerAddress string
	ServerPort    int
	// Namespace is Config.Namespace: the database of a sqld that serves
	// several; "" for the default one.
	Namespace string

	// TraceStatement and TraceBatch.

	// Call is the database/sql call of a TraceStatement.
	Call TraceCall
	// SQL is a statement's text, as the application gave it (arguments
	// are never included); for a TraceBatch of Batch, the texts of its
	// statements joined by "; "; "" for deferred statements sent
	// together, which their own TraceStatements showed.
	SQL string
	// Keyword is the first keyword of a statement's SQL, as written
	// ("select", "INSERT"), for naming spans; "" if it starts with none.
	Keyword string
	// BatchSize is how many of the application's statements a
	// TraceBatch holds.
	BatchSize int
	// InTx says that the operation runs inside a transaction: one of
	// BeginTx, or one begun with SQL (BEGIN) on the connection.
	InTx bool
	// Deferred is, for a TraceStatement (End), the position (from 1)
	// among its transaction's deferred statements of an Exec that deferred
	// execution queued instead of sending; for a TraceBatch, the position
	// of the first of the deferred statements it sends, which are
	// Deferred through Deferred+BatchSize-1. 0 otherwise.
	Deferred int
	// Begin (End) says that the transaction's BEGIN went out with the
	// operation, in the same request: a transaction's first statement
	// carries it (BEGIN rides with it).
	Begin bool
	// Commit says that a TraceBatch of deferred statements ends with
	// COMMIT: the transaction's Commit sent them.
	Commit bool
	// RowsAffected (End) is what an Exec's Result reports; 0 for a
	// deferred one.
	RowsAffected int64
	// Rows (End) is how many rows a Query's rows delivered, or a
	// TraceFetch brought.
	Rows int

	// TraceRequest (and TraceFetch's BytesReceived).

	// Request is the Hrana type of the request's first (or only) stream
	// request: "execute", "batch", "sequence", "describe",
	// "get_autocommit", or "cursor" for one that opens a cursor; "" for
	// a Ping's empty pipeline.
	Request string
	// Requests counts the stream requests the driver put in the
	// pipeline: the operation's, and the connection settings replayed
	// first on a new server stream. A transport may add its own (the
	// close that ends an HTTP stream, WebSocket's open_stream).
	Requests int
	// ReplicationIndex is the replication index the request carried
	// (read-your-writes): a replica runs it only once it has applied that
	// frame of its primary's log, so a request with one may wait inside
	// the server, within Config.ReplicationWait. 0: none.
	ReplicationIndex uint64
	// BytesSent and BytesReceived (End) are the sizes of the encoded
	// request and of its answers, uncompressed; 0 for a cursor's opening
	// (its fetches count what it brought).
	BytesSent, BytesReceived int
	// ServerTime (End) is the time the server says it spent running the
	// request's statements (query_duration_ms), summed.
	ServerTime time.Duration

	// TraceRetry.

	// Retry is why the operation is retried.
	Retry RetryReason
	// Attempt is the attempt the retry makes: 2 for the first retry.
	Attempt int
	// Cause is the failure that is retried.
	Cause error

	// TraceWait.

	// Wait is what the wait is for.
	Wait WaitReason

	// Err (End) is the operation's failure: an *Error, or the context's
	// error; nil if it succeeded. A TraceRequest's is the exchange's
	// failure, not a statement's error inside an exchange that succeeded,
	// which its TraceStatement reports.
	Err error
}
