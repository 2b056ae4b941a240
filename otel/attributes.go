package otellibsql

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/gohrana/libsql"
)

// The driver's own attributes.
const (
	// TransportKey is the transport: "http" or "ws".
	TransportKey = attribute.Key("libsql.transport")
	// CallKey is the database/sql call of a statement: "exec", "query",
	// "commit" or "rollback".
	CallKey = attribute.Key("libsql.call")
	// InTxKey says that the operation runs in a transaction.
	InTxKey = attribute.Key("libsql.in_tx")
	// BeginKey says that the transaction's BEGIN went out with the
	// statement (or batch), in the same request.
	BeginKey = attribute.Key("libsql.begin")
	// DeferredKey is the position among its transaction's deferred
	// statements of an Exec that deferred execution queued, or of the
	// first of the deferred statements a batch sends.
	DeferredKey = attribute.Key("libsql.deferred")
	// CommitKey says that a batch of deferred statements ends with COMMIT.
	CommitKey = attribute.Key("libsql.commit")
	// RowsAffectedKey is what an Exec's Result reports.
	RowsAffectedKey = attribute.Key("libsql.rows_affected")
	// RequestKey is the Hrana type of a request ("execute", "batch",
	// "cursor", ...).
	RequestKey = attribute.Key("libsql.request")
	// RequestsKey counts the stream requests in a request's pipeline.
	RequestsKey = attribute.Key("libsql.requests")
	// ReplicationIndexKey is the replication index a request carried: a
	// replica runs it once it has applied that frame.
	ReplicationIndexKey = attribute.Key("libsql.replication_index")
	// BytesSentKey and BytesReceivedKey are the sizes of a request and of
	// its answers (or of what a fetch brought), uncompressed.
	BytesSentKey     = attribute.Key("libsql.bytes_sent")
	BytesReceivedKey = attribute.Key("libsql.bytes_received")
	// ServerTimeKey is the time the server says it spent on a request's
	// statements (its query_duration_ms), in seconds.
	ServerTimeKey = attribute.Key("libsql.server_time")
	// RowsKey is how many rows a fetch brought.
	RowsKey = attribute.Key("libsql.rows")
	// RetryReasonKey is why a retry retries: "busy" or "stream_expired".
	RetryReasonKey = attribute.Key("libsql.retry.reason")
	// RetryAttemptKey is the attempt a retry makes: 2 for the first.
	RetryAttemptKey = attribute.Key("libsql.retry.attempt")
	// RetryCauseKey is the failure a retry retries.
	RetryCauseKey = attribute.Key("libsql.retry.cause")
	// WaitReasonKey is what a wait is for: "write_slot" or
	// "busy_backoff".
	WaitReasonKey = attribute.Key("libsql.wait.reason")
)

// dbSystem is db.system.name: libSQL is SQLite's fork and speaks its SQL,
// and the conventions name no libSQL; the libsql.* attributes tell it
// apart.
var dbSystem = semconv.DBSystemNameSQLite

// startAttributes are the attributes of the event's span known at its
// start.
func startAttributes(ev *libsql.TraceEvent) []attribute.KeyValue {
	attrs := []attribute.KeyValue{TransportKey.String(ev.Transport)}
	switch ev.Kind {
	case libsql.TraceStatement:
		attrs = append(attrs, database(ev)...)
		attrs = append(attrs, semconv.DBQueryText(ev.SQL), CallKey.String(ev.Call.String()), InTxKey.Bool(ev.InTx))
		if op := operation(ev); op != "" {
			attrs = append(attrs, semconv.DBOperationName(op))
		}
	case libsql.TraceBatch:
		attrs = append(attrs, database(ev)...)
		attrs = append(attrs, semconv.DBOperationName("BATCH"), InTxKey.Bool(ev.InTx))
		if ev.SQL != "" {
			attrs = append(attrs, semconv.DBQueryText(ev.SQL))
		}
		if ev.BatchSize >= 2 { // the conventions count batches of two or more
			attrs = append(attrs, semconv.DBOperationBatchSize(ev.BatchSize))
		}
		if ev.Deferred > 0 {
			attrs = append(attrs, DeferredKey.Int(ev.Deferred), CommitKey.Bool(ev.Commit))
		}
	case libsql.TraceRequest:
		attrs = append(attrs, RequestKey.String(ev.Request), RequestsKey.Int(ev.Requests))
		if ev.ReplicationIndex > 0 {
			attrs = append(attrs, ReplicationIndexKey.Int64(int64(ev.ReplicationIndex)))
		}
	case libsql.TraceRetry:
		attrs = append(attrs, RetryReasonKey.String(ev.Retry.String()), RetryAttemptKey.Int(ev.Attempt))
		if ev.Cause != nil {
			attrs = append(attrs, RetryCauseKey.String(ev.Cause.Error()))
		}
	case libsql.TraceWait:
		attrs = append(attrs, WaitReasonKey.String(ev.Wait.String()))
	}
	return attrs
}

// database are the database conventions' attributes of a statement or
// batch: the system, the server and the namespace.
func database(ev *libsql.TraceEvent) []attribute.KeyValue {
	attrs := []attribute.KeyValue{dbSystem, semconv.ServerAddress(ev.ServerAddress), semconv.ServerPort(ev.ServerPort)}
	if ev.Namespace != "" {
		attrs = append(attrs, semconv.DBNamespace(ev.Namespace))
	}
	return attrs
}

// endAttributes are the attributes of the event's outcome.
func endAttributes(ev *libsql.TraceEvent) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if ev.Begin {
		attrs = append(attrs, BeginKey.Bool(true))
	}
	switch ev.Kind {
	case libsql.TraceStatement:
		switch {
		case ev.Deferred > 0:
			attrs = append(attrs, DeferredKey.Int(ev.Deferred))
		case ev.Call == libsql.CallExec && ev.Err == nil:
			attrs = append(attrs, RowsAffectedKey.Int64(ev.RowsAffected))
		case ev.Call == libsql.CallQuery:
			attrs = append(attrs, semconv.DBResponseReturnedRows(ev.Rows))
		}
	case libsql.TraceRequest:
		attrs = append(attrs, BytesSentKey.Int(ev.BytesSent), BytesReceivedKey.Int(ev.BytesReceived),
			ServerTimeKey.Float64(ev.ServerTime.Seconds()))
	case libsql.TraceFetch:
		attrs = append(attrs, RowsKey.Int(ev.Rows), BytesReceivedKey.Int(ev.BytesReceived))
	}
	return attrs
}
