// Package session runs Hrana stream operations for the driver. It is the
// layer between the database/sql face (package libsql, which never builds a
// wire message) and the wire (package codec for the messages, a transport
// for carrying them), in the way pgx's pgconn sits between its stdlib
// package and pgproto3.
//
// A Conn is the server-side state of one database/sql connection. It offers
// typed operations: Execute, Batch, Sequence, Describe, GetAutocommit,
// OpenCursor and Ping. Every error they return is an *Error, final: it
// carries the Hrana code, the HTTP status, whether the request certainly
// never left the process (Safe), and whether database/sql may retry it on
// another connection (errors.Is(err, driver.ErrBadConn)).
//
//	tr := transport.New(transport.Options{BaseURL: url, Codec: direct.Codec})
//	conn := session.NewConn(tr.NewStream())
//	res, err := conn.Execute(ctx, &codec.Stmt{SQL: "SELECT 1", WantRows: true})
//	if err != nil {
//		return err // *session.Error
//	}
//	defer res.Release()
//	use(res.Stmt())
//
// # Streams and transports
//
// Under a Conn is a Stream, which a transport implements: it carries stream
// requests to the server and decodes their results. A transport decides
// what a server stream is:
//
//   - Over HTTP (package transport) a stream lives between requests that
//     carry its baton and expires after 10 s idle. A Conn that is not held
//     sends each operation on a fresh stream and closes it in the same
//     request, so nothing stays open on the server between statements.
//     Hold keeps the stream from one operation to the next (a transaction);
//     after Release the next operation carries the close.
//   - Over WebSocket (the second implementation this interface is written
//     for) many Conns share a few sockets, each Conn owning one stream for
//     its whole life, with responses matched by request id. Such streams do
//     not expire, so Hold and Release only mark the span in which a failure
//     loses server state; end is then ignored.
//
// The Conn tells the Stream, with each request, whether the unit of work
// ends with it (end is true outside Hold); a Stream uses that to close what
// it need not keep.
//
// # Settings that outlive a stream
//
// Persist records a connection setting (a PRAGMA assignment) that the Conn
// replays first on every server stream it opens afterwards, in the same
// request as the stream's first operation. Over HTTP that is every
// autocommit statement and every transaction's first request; over
// WebSocket only a stream opened again after its socket was lost.
//
// # Results
//
// Each Result owns its decoded response and the body it points into; Release
// recycles both. Values in a Result may point into the body, so a caller
// that hands such bytes out (as strings shared with the body) releases with
// ReleaseShared, which leaves the body to the garbage collector.
package session
