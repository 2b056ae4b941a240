package ws

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gohrana/libsql/transport"
)

// TestLockstepCancel: on a socket of its own, the goroutine that waits
// reads the answer itself; when its context (or the client's timeout)
// ends first, it closes the socket, so the Send returns at once with an
// error that is not Safe, the stream is Lost, and its next request fails
// Safe and Resend before a new stream opens on a new socket.
func TestLockstepCancel(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
	}{{"context", 0}, {"timeout", 100 * time.Millisecond}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c := newFakeClient(t, f, func(o *options) { o.Sockets = -1; o.Timeout = tt.timeout })
			s := c.NewStream().(*stream)
			mustExecute(t, s, "first")
			if !s.sock.lockstep {
				t.Fatal("the stream's own socket is not lockstep")
			}
			ctx := context.Background()
			if tt.timeout == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			}
			start := time.Now()
			_, err := execute(ctx, s, "SLEEP 2000 slow")
			if !errors.Is(err, context.DeadlineExceeded) || isSafe(err) {
				t.Fatalf("error %v, want a deadline that is not Safe", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("the abandoned Send took %v", d)
			}
			if !s.Lost() || s.Busy() {
				t.Fatalf("Lost %t, Busy %t: want the stream lost with its socket", s.Lost(), s.Busy())
			}
			_, err = execute(context.Background(), s, "next")
			if e := asError(t, err); !e.Safe || !e.Resend {
				t.Fatalf("the request after: %v, want Safe and Resend", err)
			}
			if got, err := execute(context.Background(), s, "again"); err != nil || len(got) != 1 {
				t.Fatalf("on a new stream: %q, %v", got, err)
			}
			if n := f.dials.Load(); n != 2 {
				t.Fatalf("%d dials, want 2", n)
			}
		})
	}
}

// TestLockstepIdleDeath: nothing reads a lockstep socket while it is idle;
// when the server closed it meanwhile, the probe before the next burst
// finds it, so the request fails Safe and Resend (it was never written)
// rather than as one in flight.
func TestLockstepIdleDeath(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = -1 })
	s := c.NewStream().(*stream)
	mustExecute(t, s, "first")
	f.conn(0).ws.Drop()
	eventually(t, "the server side closed", func() bool { return f.live.Load() == 0 })
	time.Sleep(2 * probeFresh)
	_, err := execute(context.Background(), s, "next")
	if e := asError(t, err); !e.Safe || !e.Resend {
		t.Fatalf("the request after the socket died: %v, want Safe and Resend", err)
	}
	if got, err := execute(context.Background(), s, "again"); err != nil || len(got) != 1 {
		t.Fatalf("on a new stream: %q, %v", got, err)
	}
}

// TestLockstepDrain: answers awaited when the holder of the read role
// has its own (a Reset's close, which nobody waits for) are read by a
// drain, which then ends: the socket awaits nothing and nobody holds the
// role.
func TestLockstepDrain(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = -1 })
	s := c.NewStream().(*stream)
	mustExecute(t, s, "first")
	sk := s.sock
	s.Reset()
	eventually(t, "the close read", func() bool {
		sk.mu.Lock()
		defer sk.mu.Unlock()
		return len(sk.pending) == 0 && !sk.reading
	})
	if !sk.alive() {
		t.Fatal("the socket died")
	}
	// The socket given back serves the next stream without a dial.
	if _, err := execute(context.Background(), c.NewStream(), "next"); err != nil || f.dials.Load() != 1 {
		t.Fatalf("%v, %d dials", err, f.dials.Load())
	}
}

// TestSocketPerStream: with Options.Sockets < 0 each stream has a socket
// of its own for its whole life: a Send with end keeps it, only Reset
// gives it back.
func TestSocketPerStream(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.Sockets = -1 })
	a, b := c.NewStream(), c.NewStream()
	for _, s := range []transport.Stream{a, b, a, b} {
		mustExecute(t, s, "x")
	}
	if !a.Open() || a.Shared() || f.dials.Load() != 2 {
		t.Fatalf("Open %t, Shared %t, %d dials: want a socket per stream", a.Open(), a.Shared(), f.dials.Load())
	}
	if got := f.conn(0).received(); len(got) != 4 || got[3] != "execute" {
		t.Fatalf("the first socket received %q: want hello, open_stream, two executes", got)
	}
}

// TestTimeoutBeforeSend: a request whose client timeout runs out before it
// is written (here 1 ns) is not sent: it fails Safe with a deadline, on a
// shared socket and on one of its own alike, however fast the server
// would have answered.
func TestTimeoutBeforeSend(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sockets int
	}{{"shared", 0}, {"own", -1}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			c := newFakeClient(t, f, func(o *options) { o.Sockets = tt.sockets; o.Timeout = time.Nanosecond })
			for i := range 20 {
				s := c.NewStream()
				_, err := execute(context.Background(), s, "fast")
				if !errors.Is(err, context.DeadlineExceeded) || !isSafe(err) {
					t.Fatalf("request %d: %v, want a Safe deadline", i, err)
				}
			}
		})
	}
}
