// Package fakesqld is a scripted fake of libsql-server (sqld 0.24.32) for
// unit tests, in the spirit of pgx's pgmock: an httptest server on
// 127.0.0.1 that expects a given sequence of HTTP requests and answers each
// with a given reply, so that a client's wire behaviour can be tested
// exactly, without Docker or a real server.
//
// A script is a list of Exchanges, each one request the client must send
// (method, path and, for JSON bodies, the body compared structurally) and
// what the server answers. Builders describe both sides in Hrana terms:
//
//	b1 := fakesqld.Baton(1)
//	srv := fakesqld.New(t,
//		fakesqld.Pipeline("",
//			fakesqld.Batch(
//				fakesqld.Step(fakesqld.SQL("BEGIN")),
//				fakesqld.Step(fakesqld.SQL("INSERT INTO t VALUES (?)", fakesqld.Int(1))).If(fakesqld.OK(0)),
//			),
//		).Respond(b1, fakesqld.BatchOK(
//			fakesqld.StepOK(fakesqld.Empty()),
//			fakesqld.StepOK(fakesqld.Inserted(1, 1)),
//		)),
//		fakesqld.Pipeline(b1, fakesqld.Execute(fakesqld.SQL("COMMIT")), fakesqld.Close()).
//			Respond("", fakesqld.ExecuteOK(fakesqld.Empty()), fakesqld.CloseOK()),
//	)
//	db, _ := sql.Open("libsql", srv.URL)
//	// ... run the code under test; srv.Count() says how many requests came.
//
// The pieces:
//
//   - Exchanges (expected requests): Pipeline (POST
//     /v3/pipeline with a baton and stream requests), Cursor (POST
//     /v3/cursor with a baton and batch steps), Expect (any method and
//     path); At, WithHeader, WithBody and WithJSON refine them.
//   - Stream requests: Execute, Batch, Sequence, Describe, Close,
//     GetAutocommit, StoreSQL, CloseSQL; statements SQL(text, args...) with
//     Named and WantRows; batch steps Step(stmt).If(cond) with the
//     conditions OK, Failed, Not, And, Or, IsAutocommit; values Int, Float,
//     Text, Blob, Null.
//   - Replies: Exchange.Respond (a pipeline answer of Results: ExecuteOK,
//     BatchOK of StepOK/StepFailed/StepSkipped, SequenceOK, DescribeOK,
//     CloseOK, GetAutocommitOK, Fail...; StmtResults Empty, Inserted,
//     Updated, Query), Exchange.Stream (a cursor body of Lines: StepBegin,
//     Row, StepEnd, StepEndInsert, StepError, BatchError, ReplicationIndex,
//     RawLine, Pause, Cut), and Exchange.Reply with any Reply: the HTTP
//     errors ProtocolError, StreamExpired, HTTPError, NotFound, JSON,
//     PlainText, Raw, and the faults Drop, Delay and Hang.
//   - Inspection: Server.Requests, Count, CountPath, Remaining, Await and
//     Verify. Helpers: Baton (a realistic baton), RefusedURL (a port that
//     refuses connections).
//
// A baton of "" stands for JSON null, on both sides: a pipeline that opens a
// new stream sends "baton": null, and a response whose baton is "" says the
// stream is closed.
//
// Comparing requests. Bodies are decoded and compared as JSON trees, so
// field order and spacing do not matter, and neither do the Hrana defaults:
// a null field equals an absent one, "args": [] and "named_args": [] equal
// absent ones, "want_rows": true equals an absent one, and blob base64 may be
// padded or not. A statement built with SQL ignores want_rows altogether
// unless Stmt.WantRows sets it. The value Any in a tree built by hand
// (Exchange.WithJSON) matches anything, absence included.
//
// Replies imitate what sqld 0.24.32 sends: pipeline bodies
// ({"baton":…,"base_url":null,"results":[…]} with full StmtResults),
// cursor bodies written line by line and flushed (with optional pauses, or
// cut off mid-body), the three shapes of HTTP error body (text/plain
// protocol errors, STREAM_EXPIRED as {"message","code"}, and {"error":…}),
// and faults: Drop closes the connection after reading the request without
// answering, Delay answers late, and Hang answers nothing until the client
// gives up.
//
// Failures. A request that does not match the next exchange, or that comes
// after the script is used up, fails the test (t.Errorf) with a message
// showing where it differs and the whole request received; the client gets
// an HTTP 500 text/plain answer starting "fakesqld:". Exchanges never
// reached fail the test when it ends (or at Verify). Every request is
// recorded (Requests, Count, CountPath), matched or not.
//
// WebSocket. NewWS serves the same script over Hrana's WebSocket protocol
// (ws://, subprotocols hrana3 and hrana2): each pipeline exchange is served
// as the stream requests it stands for, on one stream, batons naming
// streams; a Close becomes the close_stream of a
// transaction's stream, or nothing on a stream that lives on. NewWS tells
// the mapping in full; Exchange.OverWS and Reply.OverWS say what has a
// WebSocket form.
//
// Exchanges are matched in the order requests arrive, and each is served on
// its own goroutine, so a request may arrive while an earlier reply is still
// being written: a cursor keep-alive sent during a paused cursor body
// matches the exchange after the cursor's.
//
// MayServer (NewMay) is the other kind of fake: not scripted but a small
// stateful server, over JSON and Protobuf, with one mode per thing Turso's
// protocol document says a server MAY do (Modes), for tests that run the
// driver against each (protocol_test.go at the repository's root).
package fakesqld
