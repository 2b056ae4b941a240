package ws

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// send sends one execute of sql on s, with or without end.
func send(t *testing.T, s transport.Stream, sql string, end bool) error {
	t.Helper()
	reqs := []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql, WantRows: true}}}
	return s.Send(context.Background(), reqs, end, new(transport.Response))
}

// TestOwnSockets: a stream opened by a request without end (a transaction)
// gets a socket no other stream uses, so that the server closing the
// shared socket over another stream's statement leaves it alone. The
// request with end closes the server stream in its own burst and gives the
// socket back, and the next transaction takes it without dialing.
func TestOwnSockets(t *testing.T) {
	f := newFake(t)
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Request.Stmt != nil && m.Request.Stmt.SQL != nil && *m.Request.Stmt.SQL == "BAD" {
			_ = fc.ws.Close(websocket.StatusInternalError, "invalid UTF-8")
			return true
		}
		return false
	})
	c := newFakeClient(t, f, func(o *options) { o.Sockets = 1 })

	shared, tx := c.NewStream(), c.NewStream()
	if err := send(t, shared, "x", true); err != nil {
		t.Fatal(err)
	}
	if !shared.Shared() {
		t.Fatal("a stream opened with end is not on the shared socket")
	}
	if err := send(t, tx, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if tx.Shared() || f.dials.Load() != 2 {
		t.Fatalf("the transaction's stream: Shared %v after %d dials, want its own socket", tx.Shared(), f.dials.Load())
	}

	// Another connection's statement makes the server close the shared
	// socket: the transaction carries on.
	const closed = `the server closed the connection while the request was in flight: it may have run: close code 1011, "invalid UTF-8"`
	if err := send(t, shared, "BAD", true); err == nil || err.Error() != closed {
		t.Fatalf("a statement whose socket the server closed: %v, want %q", err, closed)
	}
	if err := send(t, tx, "in tx", false); err != nil {
		t.Fatalf("the transaction after the shared socket closed: %v", err)
	}

	if err := send(t, tx, "COMMIT", true); err != nil {
		t.Fatal(err)
	}
	if tx.Open() {
		t.Fatal("the stream is still open after the request with end on its own socket")
	}
	want := []string{"hello", "open_stream", "execute", "execute", "execute", "close_stream"}
	if got := f.conn(1).received(); !slices.Equal(got, want) {
		t.Fatalf("the transaction's socket received %q, want %q (no rollback: the close ends a transaction)", got, want)
	}

	next := c.NewStream()
	if err := send(t, next, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if got := f.dials.Load(); got != 2 {
		t.Fatalf("%d dials: the next transaction did not take the idle socket", got)
	}
	next.Reset()
	// Reset gives the socket back too.
	if err := send(t, c.NewStream(), "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if got := f.dials.Load(); got != 2 {
		t.Fatalf("%d dials: the socket given back by Reset was not taken", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every socket closed", func() bool { return f.live.Load() == 0 })
}

// TestOwnSocketsIdle: CloseIdle closes the sockets given back, and a
// transaction then dials a new one.
func TestOwnSocketsIdle(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	if err := send(t, s, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if err := send(t, s, "COMMIT", true); err != nil {
		t.Fatal(err)
	}
	c.CloseIdle()
	eventually(t, "the idle socket closed", func() bool { return f.live.Load() == 0 })
	if err := send(t, s, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if got := f.dials.Load(); got != 2 {
		t.Fatalf("%d dials, want 2", got)
	}
}

// TestOwnSocketDies: a socket of its own that the server closes takes
// only its own stream with it, which is Lost; an idle one is not taken
// again. Nothing reads an idle lockstep socket: its death is found by the
// probe of Lost, or of the next take, which forgets it.
func TestOwnSocketDies(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	a, b := c.NewStream(), c.NewStream()
	if err := send(t, a, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if err := send(t, b, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	f.conn(0).ws.Drop()
	eventually(t, "a lost", a.Lost)
	if b.Lost() {
		t.Fatal("b, on a socket of its own, was lost with a's")
	}
	if err := send(t, b, "COMMIT", true); err != nil {
		t.Fatal(err)
	}
	f.conn(1).ws.Drop()
	eventually(t, "the server side closed", func() bool { return f.live.Load() == 0 })
	if err := send(t, c.NewStream(), "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if got := f.dials.Load(); got != 3 {
		t.Fatalf("%d dials, want 3", got)
	}
	c.own.mu.Lock()
	defer c.own.mu.Unlock()
	if len(c.own.idle) != 0 || len(c.own.all) != 1 {
		t.Fatalf("%d idle, %d own sockets: want the dead one forgotten", len(c.own.idle), len(c.own.all))
	}
}

// TestIsolatedKeepsTransaction: a request apart from the stream's state
// (a describe), sent with end, neither ends the transaction on its own
// socket nor, before one, opens the stream on a shared socket; on a stream
// not open it runs on a stream of its own closed in the same burst.
func TestIsolatedKeepsTransaction(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	if err := send(t, s.Isolated(), "describe before", true); err != nil {
		t.Fatal(err)
	}
	if s.Open() {
		t.Fatal("the isolated request opened the stream")
	}
	want := []string{"hello", "open_stream", "execute", "close_stream"}
	if got := f.conn(0).received(); !slices.Equal(got, want) {
		t.Fatalf("the shared socket received %q, want %q", got, want)
	}
	if err := send(t, s, "BEGIN", false); err != nil {
		t.Fatal(err)
	}
	if err := send(t, s.Isolated(), "describe inside", true); err != nil {
		t.Fatal(err)
	}
	if !s.Open() || s.Shared() {
		t.Fatal("the isolated request ended the transaction's stream")
	}
	want = []string{"hello", "open_stream", "execute", "execute"}
	if got := f.conn(1).received(); !slices.Equal(got, want) {
		t.Fatalf("the transaction's socket received %q, want %q", got, want)
	}
}

// TestServerCloseAtHello: a server that closes the socket on the hello (as
// sqld 0.24.32 does for a namespace it lacks, with 1011) fails the request
// with its close, never with the library's "use of closed network
// connection": the websocket library closes the connection when the close
// frame arrives, and a write that meets the closed connection before the
// reader has reported the close waits for that report.
func TestServerCloseAtHello(t *testing.T) {
	f := newFake(t)
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Type == "hello" {
			_ = fc.ws.Close(websocket.StatusInternalError, "")
			return true
		}
		return false
	})
	for i := range 300 {
		c := newFakeClient(t, f, nil)
		err := send(t, c.NewStream(), "SELECT 1", true)
		if err == nil || !strings.Contains(err.Error(), "the server closed the connection") {
			t.Fatalf("try %d: %v, want the server's close", i, err)
		}
		_ = c.Close()
	}
}
