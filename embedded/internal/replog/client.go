package replog

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
)

// service is the path prefix of the replication service's methods.
const service = "/wal_log.ReplicationLog/"

// The messages sqld puts in grpc-message for the conditions a replica
// handles (libsql-replication/src/rpc.rs).
const (
	msgNoHello      = "NO_HELLO"
	msgNeedSnapshot = "NEED_SNAPSHOT"
	// The Snapshot call's UNAVAILABLE while the primary is still writing
	// the snapshot of a compaction (libsql-server/src/rpc/replication/
	// replication_log.rs); sqld's own replicas wait and ask again.
	msgSnapshotPending = "snapshot not found"
)

// ErrNoHello matches (errors.Is) a call refused because the session token
// is missing or stale (the primary restarted): say hello again.
var ErrNoHello = errors.New("replog: the primary asks for a new hello (NO_HELLO)")

// ErrNeedSnapshot matches a BatchLogEntries refused because the frames
// asked for were compacted into a snapshot: call Snapshot.
var ErrNeedSnapshot = errors.New("replog: the log was compacted; a snapshot is needed (NEED_SNAPSHOT)")

// ErrSnapshotPending matches a Snapshot refused because the primary has
// not finished writing the snapshot yet: ask again a little later.
var ErrSnapshotPending = errors.New("replog: the primary's snapshot is not ready yet (UNAVAILABLE: snapshot not found)")

// Error is a failed call: the server's gRPC status, an HTTP status, or
// the exchange itself. Its text never includes the auth token.
type Error struct {
	Method     string
	HTTPStatus int                  // not 200; 0 otherwise
	Status     *grpcweb.StatusError // the server's status, if it sent one
	Err        error                // the network or decoding cause
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("replog: ")
	b.WriteString(e.Method)
	switch {
	case e.Status != nil:
		b.WriteString(": ")
		b.WriteString(e.Status.Error())
	case e.HTTPStatus != 0:
		fmt.Fprintf(&b, ": HTTP %d", e.HTTPStatus)
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	case e.Err != nil:
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error {
	if e.Status != nil {
		return e.Status
	}
	return e.Err
}

// Is matches ErrNoHello, ErrNeedSnapshot and ErrSnapshotPending.
func (e *Error) Is(target error) bool {
	if e.Status == nil {
		return false
	}
	switch target {
	case ErrNoHello:
		return strings.Contains(e.Status.Message, msgNoHello)
	case ErrNeedSnapshot:
		return strings.Contains(e.Status.Message, msgNeedSnapshot)
	case ErrSnapshotPending:
		return e.Status.Code == grpcweb.Unavailable && strings.Contains(e.Status.Message, msgSnapshotPending)
	}
	return false
}

// Unreachable reports whether the call failed below the HTTP level, so
// the primary may be down or unreachable.
func (e *Error) Unreachable() bool { return e.Status == nil && e.HTTPStatus == 0 }

// Config says where the primary is and how to reach it.
type Config struct {
	// URL is the primary's base URL, http:// or https://, without a query.
	URL       string
	AuthToken string
	Namespace string
	// Header holds more headers for every request (the driver's
	// WithRequestHeaders, an encryption key).
	Header http.Header
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// MaxMessage bounds one message (0: grpcweb.MaxMessage).
	MaxMessage int
	// Timeout bounds each Hello and BatchLogEntries (0: only the
	// context does). A Snapshot, as long as the database is large, is
	// bounded by its context alone.
	Timeout time.Duration
}

// Client calls a primary's replication service. It holds the session
// token of the last hello; it is safe for concurrent use, though a replica
// makes one call at a time.
type Client struct {
	cfg      Config
	received atomic.Int64 // bytes of answers' bodies read

	mu    sync.Mutex
	token []byte
}

// BytesReceived returns how many bytes of the answers' bodies the Client
// has read since it was made.
func (c *Client) BytesReceived() int64 { return c.received.Load() }

// countingReader counts into n the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// NewClient returns a Client; it sends nothing.
func NewClient(cfg Config) *Client {
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	return &Client{cfg: cfg}
}

// Hello starts a session: the answer says which log the primary serves,
// and its token is sent with every later call.
func (c *Client) Hello(ctx context.Context) (Hello, error) {
	const method = "Hello"
	var h Hello
	err := c.call(ctx, method, EncodeHelloRequest(), func(r *grpcweb.Reader) error {
		msg, err := readOne(r)
		if err != nil {
			return err
		}
		h, err = DecodeHello(msg)
		return err
	})
	if err != nil {
		return Hello{}, err
	}
	c.mu.Lock()
	c.token = h.SessionToken
	c.mu.Unlock()
	return h, nil
}

// CloseIdleConnections closes the connections kept for the next calls.
func (c *Client) CloseIdleConnections() { c.cfg.Client.CloseIdleConnections() }

// ForgetSession drops the session token, so the next call needs a hello.
func (c *Client) ForgetSession() {
	c.mu.Lock()
	c.token = nil
	c.mu.Unlock()
}

// BatchLogEntries returns the Frames message with the frames from next on,
// in buf's storage if it is large enough.
func (c *Client) BatchLogEntries(ctx context.Context, next uint64, buf []byte) ([]byte, error) {
	var out []byte
	err := c.call(ctx, "BatchLogEntries", EncodeLogOffset(next), func(r *grpcweb.Reader) error {
		msg, err := readOneInto(r, buf)
		out = msg
		return err
	})
	return out, err
}

// MaxFramesPerBatch is how many frames sqld puts in a BatchLogEntries
// answer before it ends it at the next commit
// (libsql-server/src/rpc/replication/replication_log.rs): an answer with
// fewer ended at the end of the log.
const MaxFramesPerBatch = 1024

// Snapshot streams the frames of the snapshot that holds next, calling f
// with the data of each Frame message in the order they come (data is
// only valid during the call), until the trailers.
func (c *Client) Snapshot(ctx context.Context, next uint64, f func(data []byte) error) error {
	return c.call(ctx, "Snapshot", EncodeLogOffset(next), func(r *grpcweb.Reader) error {
		var buf []byte
		for {
			msg, err := r.Next(buf)
			switch {
			case err == grpcweb.ErrTrailers:
				return r.Status().Err()
			case err == io.EOF:
				return io.ErrUnexpectedEOF // a stream ends with its trailers
			case err != nil:
				return err
			}
			data, err := DecodeFrameMsg(msg)
			if err != nil {
				return err
			}
			if err := f(data); err != nil {
				return &callbackError{err}
			}
			buf = msg[:0]
		}
	})
}

// callbackError carries an error of Snapshot's f out of call unwrapped.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

// readOne reads the one message of a unary answer.
func readOne(r *grpcweb.Reader) ([]byte, error) { return readOneInto(r, nil) }

// readOneInto reads the one message of a unary answer, into buf's storage
// if it is large enough.
func readOneInto(r *grpcweb.Reader, buf []byte) ([]byte, error) {
	msg, err := r.Next(buf)
	if err == grpcweb.ErrTrailers {
		if err := r.Status().Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("no message before the trailers")
	}
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return msg, err
}

// call posts body to method and hands the answer's messages to read. A
// status in the response headers (a trailers-only answer) is the error.
func (c *Client) call(ctx context.Context, method string, body []byte, read func(*grpcweb.Reader) error) error {
	if c.cfg.Timeout > 0 && method != "Snapshot" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+service+method, bytes.NewReader(grpcweb.Frame(body)))
	if err != nil {
		return &Error{Method: method, Err: err}
	}
	for k, vs := range c.cfg.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", grpcweb.ContentType)
	req.Header.Set("Accept", grpcweb.ContentType)
	req.Header.Set("X-Grpc-Web", "1")
	if c.cfg.AuthToken != "" {
		req.Header.Set("X-Authorization", "Bearer "+c.cfg.AuthToken)
	}
	if c.cfg.Namespace != "" {
		// A -bin header is base64 as gRPC has it; sqld reads it unpadded.
		req.Header.Set("X-Namespace-Bin", base64.RawStdEncoding.EncodeToString([]byte(c.cfg.Namespace)))
	}
	c.mu.Lock()
	if c.token != nil {
		req.Header.Set("X-Session-Token", string(c.token))
	}
	c.mu.Unlock()

	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return &Error{Method: method, Err: scrub(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		var cause error
		if len(snippet) > 0 {
			cause = errors.New(strings.TrimSpace(string(snippet)))
		}
		return &Error{Method: method, HTTPStatus: resp.StatusCode, Err: cause}
	}
	st, ok, err := grpcweb.StatusFromHeader(resp.Header)
	if err != nil {
		return &Error{Method: method, Err: err}
	}
	if ok && st.Code != grpcweb.OK {
		return &Error{Method: method, Status: &grpcweb.StatusError{Code: st.Code, Message: st.Message}}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc-web") {
		return &Error{Method: method, Err: fmt.Errorf("content type %q, want %s", ct, grpcweb.ContentType)}
	}
	r := grpcweb.NewReader(countingReader{resp.Body, &c.received}, c.cfg.MaxMessage)
	err = read(r)
	if err == nil {
		err = finish(r, resp.Body)
	}
	var cb *callbackError
	var se *grpcweb.StatusError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &cb):
		return cb.err
	case errors.As(err, &se):
		return &Error{Method: method, Status: se}
	case ctx.Err() != nil:
		return &Error{Method: method, Err: ctx.Err()}
	default:
		return &Error{Method: method, Err: err}
	}
}

// finishWait bounds how long finish waits for the rest of an answer.
const finishWait = time.Second

// finish reads what is left of an answer after its messages: the
// trailers, whose status must be OK, and the end of the body. An answer
// read to its end leaves its connection to the next call (net/http keeps
// a connection only then), where one closed early costs a new connection
// each call: sqld 0.24.32 ends every answer so. One that goes on past
// finishWait, or past a few bytes, is closed, and only its connection is
// lost.
func finish(r *grpcweb.Reader, body io.ReadCloser) error {
	t := time.AfterFunc(finishWait, func() { body.Close() })
	defer t.Stop()
	if r.Status() == nil {
		if _, err := r.Next(nil); err == grpcweb.ErrTrailers {
			if err := r.Status().Err(); err != nil {
				return err
			}
		} else {
			return nil // no trailers (yet): the body is closed unread
		}
	}
	io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	return nil
}

// scrub drops the URL from a *url.Error's text (it has no token, but the
// caller's error already names the method, and the URL may carry
// user info).
func scrub(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
