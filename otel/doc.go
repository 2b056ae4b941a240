// Package otellibsql turns the events of a libsql connector
// (github.com/gohrana/libsql) into OpenTelemetry spans. It lives in a
// module of its own, github.com/gohrana/libsql/otel, so that the driver
// depends on no part of OpenTelemetry.
//
//	connector, err := libsql.NewConnector(cfg, libsql.WithTracer(otellibsql.NewTracer()))
//	if err != nil {
//		return err
//	}
//	db := sql.OpenDB(connector)
//
// # Spans
//
// Every statement (Exec, Query, Commit, Rollback) is a client span named
// after its operation ("SELECT", "INSERT", "COMMIT"), with the database
// semantic conventions' attributes: db.system.name "sqlite" (libSQL is
// SQLite's fork and speaks its SQL; the libsql.* attributes say which
// server it is), db.query.text (the statement's text: arguments are never
// recorded), db.operation.name, db.namespace, server.address and
// server.port; a Query ends when its rows close, with
// db.response.returned_rows. A call of libsql.Batch is a client span
// "BATCH" with db.operation.batch.size. Under them, internal spans show
// what only the driver knows:
//
//   - "libsql.request <type>" for each Hrana request ("execute", "batch",
//     "describe", "cursor", ...), with libsql.requests (stream requests in
//     the pipeline), libsql.bytes_sent, libsql.bytes_received,
//     libsql.server_time (the server's own query_duration_ms, in seconds)
//     and libsql.replication_index (the frame a replica waits for);
//   - "libsql.fetch" for each part of a cursor's result (over WebSocket
//     each fetch_cursor, over HTTP the streamed body), with libsql.rows and
//     libsql.bytes_received;
//   - "libsql.retry busy" and "libsql.retry stream_expired" for each retry,
//     with libsql.retry.reason, libsql.retry.attempt and
//     libsql.retry.cause, holding the retry's wait and request;
//   - "libsql.wait write_slot" and "libsql.wait busy_backoff" for time
//     spent waiting in the client, with libsql.wait.reason;
//   - "BATCH" (internal) for the statements deferred execution queued, sent
//     together, with libsql.deferred (the first one's position),
//     db.operation.batch.size and libsql.commit.
//
// Statements also carry libsql.transport ("http" or "ws"), libsql.in_tx,
// libsql.begin (BEGIN rode with the statement) and libsql.deferred (an
// Exec queued by deferred execution, and its position), and an Exec
// libsql.rows_affected. A failure is recorded on its span with
// RecordError, status Error, error.type and, for the server's errors,
// db.response.status_code (the Hrana code, such as "SQLITE_CONSTRAINT").
//
// Wrapping the driver with github.com/XSAM/otelsql as well adds its
// database/sql-level spans, under which these nest; libsql.Batch works on
// a *sql.Conn of such a wrapped database.
package otellibsql
