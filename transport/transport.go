// Package transport is the contract between the driver's session layer and
// the transports that carry Hrana stream requests to a server: HTTP
// (transport/http) and WebSocket (transport/ws). A transport turns Options
// into Streams; a Stream sends requests and decodes their answers into a
// Response, and every failure is an *Error that says whether the request may
// have had an effect.
//
// The driver's users need none of this: package libsql is the API. The
// contract is public because the transports live under transport/, and it is
// small and held to a golden file (api_test.go at the repository root) so
// that every change to it is deliberate.
//
// Who imports it: the driver and its transports; no application needs to.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gohrana/libsql/codec"
)

// Options configure a transport. Zero values mean the transport's defaults;
// fields that concern one transport only say so.
type Options struct {
	// URL is the server's base URL: https://host[:port][/path] or http://
	// for HTTP, wss:// or ws:// (or https:// and http://) for WebSocket.
	URL string
	// AuthToken, if set, is the JWT sent with every request (over
	// WebSocket, in each socket's hello).
	AuthToken string
	// TokenSource, if set, gives the JWT instead of AuthToken, for tokens
	// that expire: it is called for every HTTP request, and over WebSocket
	// before every burst of requests, where a token other than the one the
	// socket said hello with goes first in a new hello on the same socket
	// (Hrana 2 and 3 allow it), so that its streams live on. It should be
	// cheap (cache the token until shortly before it expires); its error
	// fails the request, which is then Safe.
	TokenSource func(ctx context.Context) (string, error)
	// Headers are sent with every request (over WebSocket, with each
	// socket's handshake). The transport's own headers override them. Their
	// values are secrets: removed from any text the server echoes.
	Headers http.Header
	// Namespace, if set, names the database of a sqld that serves several
	// (--enable-namespaces).
	Namespace string
	// TLSConfig, if set, is used for TLS connections (a custom CA, say).
	TLSConfig *tls.Config
	// Timeout, if set, bounds each request as a context deadline would:
	// over HTTP the exchange and the reading of its body (for a cursor, its
	// first line), over WebSocket the wait for its answers.
	Timeout time.Duration
	// Codec encodes requests and decodes answers; its Format decides the
	// routes (HTTP) or subprotocols (WebSocket). Over WebSocket it must be a
	// codec.SocketCodec.
	Codec codec.Codec
	// JSON is a JSON codec: what sqld sends as JSON whatever the codec
	// spoken (its generic HTTP error bodies) is decoded with it, and with
	// Fallback it is spoken instead of a Protobuf Codec on a server that
	// does not offer Protobuf. It is required when Codec speaks Protobuf.
	JSON codec.Codec
	// Fallback makes a server that does not offer Codec's Protobuf speak
	// JSON instead; without it such a server is an error.
	Fallback bool
	// Compress asks the server to gzip responses (HTTP only).
	Compress bool
	// RoundTripper, if set, replaces the HTTP transport's own HTTP/1.1
	// client (HTTP only); TLSConfig is then not used.
	RoundTripper http.RoundTripper

	// CloseStreams closes a connection's server stream at the end of every
	// unit of work instead of keeping it for the next (HTTP only; see
	// Stream.Send): for a server behind a load balancer that does not route
	// a stream's requests to the node that holds it.
	CloseStreams bool

	// Proxy returns the proxy a request goes through, nil for none (as
	// http.Transport's Proxy); nil means none at all. Over HTTP a request
	// that a proxy applies to goes through net/http's Transport instead
	// of the transport's own client (RoundTripper overrides both); over
	// WebSocket a socket is tunnelled through the proxy by CONNECT.
	Proxy func(*http.Request) (*url.URL, error)
	// Sockets is how many sockets the streams share at most (WebSocket
	// only); a negative value gives each stream a socket of its own
	// instead, for its whole life.
	Sockets int
	// MinBackoff and MaxBackoff bound the wait, doubling with each failure,
	// before a socket that failed to connect is dialed again (WebSocket
	// only).
	MinBackoff, MaxBackoff time.Duration
	// TraceFetch, if set, is told of each fetch of a cursor's entries, the
	// one part of a request that the session layer cannot time: over
	// WebSocket each fetch_cursor, from when it is asked for (ahead of the
	// reader) until the cursor takes its answer; over HTTP the body of the
	// cursor's response, from its first line to its last. It is called with
	// the context the cursor was opened with, on the goroutine that reads
	// the cursor, and the function it returns is called once, when the
	// fetch is over: with the rows and the bytes it brought and the error
	// that ended it (nil for a fetch the cursor no longer needed).
	TraceFetch func(ctx context.Context) (done func(rows, bytes int, err error))
}

// Transport opens Streams to one server. It is safe for concurrent use.
type Transport interface {
	// NewStream returns the client side of a new server stream. It sends
	// nothing: the stream is opened by its first request.
	NewStream() Stream
	// Close releases the transport's network connections: over HTTP the
	// idle ones (streams stay usable), over WebSocket every socket, which
	// ends the server streams on them.
	Close() error
}

// Stream carries the stream requests of one session. It is not safe for
// concurrent use: Hrana runs the requests of a stream one after another.
// Every error it returns is an *Error.
type Stream interface {
	// Send sends reqs, in order, and decodes their results into resp (one
	// result per request, perhaps followed by results of the transport's
	// own). end says that the unit of work ends with them: the stream may
	// be kept for the next one only if it holds no transaction afterwards
	// (HTTP asks the server, by a get_autocommit appended to reqs, and
	// closes the stream otherwise). A kept stream may expire on the server
	// meanwhile; the request sent on it then fails with StreamGone, having
	// run nothing. The caller sends a statement that
	// may begin a transaction, or fail to end one (BEGIN, SAVEPOINT,
	// COMMIT, RELEASE), without end: it holds the stream until the server
	// says the transaction ended. So with end only a batch or a script that
	// failed half-way can leave a transaction open, which a transport whose
	// streams outlive the unit of work (WebSocket) rolls back; a transport
	// reads no SQL.
	Send(ctx context.Context, reqs []codec.StreamRequest, end bool, resp *Response) error
	// OpenCursor runs batch through a cursor and returns once the server
	// has started answering. With end, the stream may close when the
	// Cursor does (over HTTP the cursor takes an open stream with it, and
	// the Stream is no longer Open). setup, if any, runs first on the cursor's stream; its
	// failure is the error.
	OpenCursor(ctx context.Context, batch *codec.Batch, end bool, setup []codec.StreamRequest) (Cursor, error)
	// Isolated returns a Stream for a request that needs none of this
	// stream's state and must not disturb it (describe): over HTTP a new
	// stream, closed with the request; over WebSocket, whose streams a
	// failed request does not end, the stream itself.
	Isolated() Stream
	// Open reports whether the server holds a stream for this one.
	Open() bool
	// Shared reports whether the server stream is open on a network
	// connection that other streams use too, so that a request of theirs
	// the server answers by closing the connection would end it
	// (WebSocket, outside a transaction). A transport opens a stream for a
	// request sent without end on a connection of its own: a transaction
	// is begun on a stream that is not Shared, after a Reset if need be.
	Shared() bool
	// Busy reports whether the stream still awaits answers to requests
	// whose caller gave up (its context ended): until they arrive it
	// refuses requests, Safe and Resend.
	Busy() bool
	// Lost reports whether the server stream is gone, with the state on
	// it, without a Reset (over WebSocket: its socket died). Its next
	// request fails, Safe and Resend, and the one after opens a new stream.
	Lost() bool
	// Reset abandons the server stream: it closes it if it is open (which
	// rolls back a transaction on it), ignoring failures, within a bounded
	// time and without the caller's context, and forgets it.
	Reset()
	// Version is the Hrana version the stream speaks (2 or 3), asking the
	// server if it is not known yet.
	Version(ctx context.Context) (int, error)
}

// Cursor delivers the entries of a cursor as they arrive.
type Cursor interface {
	// Next decodes the next entry into e and returns io.EOF after the
	// final one. Value bytes in e stay valid after later calls.
	Next(e *codec.CursorEntry) error
	// Done reports whether the final entry has been read.
	Done() bool
	// Close stops reading; a cursor opened with end closes its stream too.
	Close() error
}

// Response is what a Stream decodes one Send's answers into. Its buffers are
// kept across uses; the decoded values may point into them.
type Response struct {
	// Pipeline holds one result per request sent.
	Pipeline codec.PipelineResponse
	// Body is the buffer an answer is read into when it arrives whole (HTTP).
	Body []byte
	// Bodies are the buffers of answers read one message per request
	// (WebSocket).
	Bodies [][]byte
	// BytesSent and BytesReceived are the sizes of the encoded request and
	// of its answers (uncompressed), as far as the exchange got: what the
	// transport itself added included (a close, open_stream, a hello).
	BytesSent, BytesReceived int
}

// Error is an error the server reported or a failed exchange with it. Its
// text never contains the auth token or a header value.
type Error struct {
	// Code is the Hrana error code ("SQLITE_CONSTRAINT", "STREAM_EXPIRED",
	// "AUTH_JWT_INVALID", ...); "" when the server sent none.
	Code string
	// Message is the server's message, or what failed.
	Message string
	// HTTPStatus is the status of an HTTP-level failure; 0 otherwise.
	HTTPStatus int
	// Safe reports that the request certainly had no effect on the server.
	Safe bool
	// Resend reports that the request never left this process and no
	// server state was lost with it: it may be sent again on another
	// stream. A transport sets it when nothing was sent; the session layer
	// clears it when the stream held a transaction.
	Resend bool
	// TxLost reports that the failure ended the caller's transaction (set
	// by the session layer, which knows one was open).
	TxLost bool
	// Statement reports that this is the server's answer to one request
	// inside an exchange that succeeded: the stream, and a transaction on
	// it, are intact.
	Statement bool
	// StreamGone reports that the server refused the request because it
	// no longer has the stream the request was sent on (the stream idled
	// past the server's timeout, or the server restarted): the request ran
	// nothing (Safe), and whatever lived on the stream is gone.
	StreamGone bool
	// Err is the network or decoding cause, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.TxLost {
		b.WriteString("transaction lost: ")
	}
	b.WriteString(e.Message)
	if e.Code != "" {
		b.WriteString(" (")
		b.WriteString(e.Code)
		b.WriteString(")")
	}
	if e.Err != nil {
		if e.Message != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrCursorTruncated is the cause of a cursor that ended without its final
// entry, which sqld does on failures it cannot report in the stream (a
// permission error, invalid UTF-8, a crash): the rows read so far are not
// the whole result.
var ErrCursorTruncated = errors.New("the result ended before its last row")

// ErrResponseTooLarge is the cause of an answer larger than the transport
// accepts.
var ErrResponseTooLarge = errors.New("response too large")

// StatementError is the error the server reported for one request of an
// exchange that succeeded.
func StatementError(he *codec.Error) *Error {
	return &Error{Code: he.Code, Message: he.Message, Statement: true}
}

// SetupError is the error of setup, a connection setting the session
// replays first on a new stream (see Stream.OpenCursor), that the server
// refused with he.
func SetupError(setup *codec.StreamRequest, he *codec.Error) *Error {
	e := StatementError(he)
	e.Message = "connection setting " + strconv.Quote(setup.Stmt.SQL) + " failed: " + e.Message
	return e
}
