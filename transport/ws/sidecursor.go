package ws

import (
	"context"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
	thttp "github.com/gohrana/libsql/transport/http"
)

// Side cursors. sqld serves a WebSocket cursor one fetch_cursor at a time
// (a fetch's entries are collected only while it is served, and handed
// from the SQLite thread through a channel of one entry), so a large
// result over a socket arrives at about half the rate of the same result
// streamed in one HTTP response by /v3/cursor, which sqld serves on the
// same port. SideCursor runs a cursor there: on a server stream of its
// own, opened with the settings the session replays (setup), apart from
// the stream's own server stream and its connection state. The session
// decides when that state allows it (internal/session, Conn.OpenCursor).

// SideCursor runs batch through /v3/cursor on the stream's server, on a
// stream of its own that ends with the cursor, after setup. The stream s
// is left as it is; a cursor open on it is closed first, since the server
// stream serves one thing at a time (and the caller reads one cursor).
func (s *stream) SideCursor(ctx context.Context, batch *codec.Batch, setup []codec.StreamRequest) (transport.Cursor, error) {
	t, err := s.c.sideTransport()
	if err != nil {
		return nil, err
	}
	if s.cursor != nil {
		_ = s.cursor.Close()
	}
	return t.NewStream().OpenCursor(ctx, batch, true, setup)
}

// SideCursors reports whether SideCursor can run: the HTTP transport to
// the server can be made (a Protobuf codec needs Options.JSON there).
func (s *stream) SideCursors() bool {
	_, err := s.c.sideTransport()
	return err == nil
}

// sideTransport returns the HTTP transport side cursors run on.
func (c *client) sideTransport() (transport.Transport, error) {
	c.sideOnce.Do(func() {
		t, err := thttp.New(c.sideOpts)
		if err != nil {
			c.sideErr = err
			return
		}
		c.side = t
	})
	if c.sideErr != nil {
		if e, ok := c.sideErr.(*transport.Error); ok {
			return nil, e
		}
		return nil, &transport.Error{Message: "cannot stream the result over HTTP", Safe: true, Err: c.sideErr}
	}
	return c.side, nil
}
