package session

import (
	"context"
	"errors"

	"github.com/gohrana/libsql/codec"
)

// Transport opens Streams to one server. A connector holds one; it is safe
// for concurrent use.
type Transport interface {
	// NewStream returns the client side of a new server stream. It sends
	// nothing: the stream is opened by its first request.
	NewStream() Stream
	// CloseIdle releases idle network connections; Streams stay usable.
	CloseIdle()
}

// Stream carries stream requests for one Conn. It is not safe for
// concurrent use: Hrana runs the requests of a stream one after another.
//
// Every error a Stream returns is an *Error; a transport failure sets Safe
// only when the request certainly never left the process.
type Stream interface {
	// Send sends reqs, in order, and decodes their results into res
	// (res.Results() then has one result per request). end says that the
	// unit of work ends with these requests: no transaction is left open
	// on the stream, so a transport whose streams cost server resources
	// between requests (HTTP) closes it with them.
	Send(ctx context.Context, reqs []codec.StreamRequest, end bool, res *Result) error
	// OpenCursor runs the batch through a cursor and returns once the
	// server has started answering. With end, the stream may be closed
	// when the Cursor is. setup, if any, runs first on the cursor's stream
	// (for a transport that cannot carry it in the cursor request itself,
	// at the cost of a round trip); its failure is the error.
	OpenCursor(ctx context.Context, batch *codec.Batch, end bool, setup []codec.StreamRequest) (Cursor, error)
	// Apart returns a Stream for a request that needs none of this
	// stream's state and must not disturb it (describe): over HTTP a fresh
	// stream, closed with the request; over WebSocket, whose streams are
	// not at risk, the stream itself will do.
	Apart() Stream
	// Open reports whether the server currently holds a stream for this
	// Stream (over HTTP: it has a baton).
	Open() bool
	// Busy reports whether the stream still awaits the answers to requests
	// whose caller gave up on them (its context ended): until they arrive
	// it refuses requests (Safe, BadConn), since what they did to the
	// stream's state is not known yet. An HTTP stream never is: a request
	// ends with its exchange.
	Busy() bool
	// Lost reports whether the server stream this Stream held is gone
	// without a Reset (over WebSocket: its socket died), and the connection
	// state on it with it. Its next request fails, Safe and BadConn, and
	// opens a new stream after; Reset forgets it quietly. An HTTP stream
	// reports a lost stream as the error of the request that finds it.
	Lost() bool
	// Reset abandons the server stream: it closes it if it is open (which
	// rolls back any transaction on it), ignoring failures, within a bounded
	// time and without the caller's context, and forgets it.
	Reset()
	// Version is the Hrana version the stream speaks (2 or 3), probing the
	// server if needed.
	Version(ctx context.Context) (int, error)
}

// Cursor delivers the entries of a cursor as they arrive.
type Cursor interface {
	// Next decodes the next entry into e. It returns io.EOF after the final
	// entry. Value bytes in e point into memory that is never reused, so
	// they stay valid after later calls.
	Next(e *codec.CursorEntry) error
	// Done reports whether the final entry has been read.
	Done() bool
	// Close stops reading. A cursor opened with end also closes its stream.
	Close() error
}

// ErrCursorTruncated is returned (wrapped) when a cursor ends without its
// final entry. sqld does this on failures it cannot report in the stream (a
// permission error, invalid UTF-8, a crash): the rows read so far are not
// the whole result.
var ErrCursorTruncated = errors.New("cursor response ended before its final entry")
