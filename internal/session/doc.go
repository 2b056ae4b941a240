// Package session runs Hrana stream operations for the driver: the layer
// between the database/sql face (package libsql, which never builds a
// request) and a transport (package transport), as pgx's pgconn sits between
// its stdlib package and the wire.
//
// A Conn is the server side of one database/sql connection, with typed
// operations: Execute, Batch, Sequence, Describe, GetAutocommit, OpenCursor
// and Ping. Every error they return is a *transport.Error that says whether
// the request may have had an effect (Safe), may be sent again on another
// connection (Resend), or ended a transaction (TxLost).
//
//	conn := session.NewConn(tr.NewStream())
//	res, err := conn.Execute(ctx, &codec.Stmt{SQL: "SELECT 1", WantRows: true})
//	if err != nil {
//		return err
//	}
//	defer res.Release()
//	use(res.Stmt())
//
// Outside Hold each operation is a unit of work of its own, after which
// the server stream holds no transaction (over HTTP one request, on the
// connection's kept stream or a new one, with get_autocommit to make sure;
// a kept stream the server no longer has is replaced, and the operation
// sent again, transparently); between Hold and Release the stream, and the
// transaction on it, lasts from one operation to the next. Persist records a connection setting that the Conn replays first on
// every server stream it opens afterwards, in the same request as the
// stream's first operation. A Replication shared by the Conns of a pool
// gives read-your-writes across it.
//
// A Result owns its decoded response and the buffers it points into;
// Release recycles both, and ReleaseShared leaves the buffers to the
// garbage collector for a caller that handed out memory sharing them. A
// Conn's operations decode into the Result its last operation released
// (up to MaxSpareValues of decoded values), so that a large result's
// capacity is reused from one query to the next whatever the garbage
// collector does.
package session
