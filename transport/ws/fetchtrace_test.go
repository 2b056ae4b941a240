package ws

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// TestResponseBytes: a Send reports the size of the burst it wrote and of
// the answers it read: on an open stream, 1000 more bytes of SQL are 1000
// more each way (the fake echoes the SQL).
func TestResponseBytes(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	send := func(sql string) transport.Response {
		t.Helper()
		var res transport.Response
		reqs := []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql, WantRows: true}}}
		if err := s.Send(context.Background(), reqs, false, &res); err != nil {
			t.Fatal(err)
		}
		if res.BytesSent == 0 || res.BytesReceived == 0 {
			t.Fatalf("%q: BytesSent %d, BytesReceived %d", sql, res.BytesSent, res.BytesReceived)
		}
		return res
	}
	send("open") // open_stream rides with it
	short, long := send("a"), send("a"+strings.Repeat("x", 1000))
	if d := long.BytesSent - short.BytesSent; d != 1000 {
		t.Errorf("BytesSent grew by %d for 1000 more bytes of SQL", d)
	}
	if d := long.BytesReceived - short.BytesReceived; d != 1000 {
		t.Errorf("BytesReceived grew by %d for 1000 more bytes of answer", d)
	}
}

type traceKey struct{}

// TestCursorTraceFetch: every fetch_cursor is traced, with the cursor's
// context, from when it is asked for until the cursor takes its answer
// or no longer needs it (those asked for ahead of the last); the rows of
// all add up to the result's.
func TestCursorTraceFetch(t *testing.T) {
	f := newFake(t)
	var started, ended, rows, bytes int
	var ctxOK bool
	c := newFakeClient(t, f, func(o *options) {
		o.cursorBatch = 100
		o.TraceFetch = func(ctx context.Context) func(int, int, error) {
			started++
			ctxOK = ctx.Value(traceKey{}) == "the cursor's"
			return func(r, b int, err error) {
				if err != nil {
					t.Errorf("fetch %d failed: %v", ended+1, err)
				}
				ended++
				rows += r
				bytes += b
			}
		}
	})
	ctx := context.WithValue(context.Background(), traceKey{}, "the cursor's")
	cur, err := c.NewStream().OpenCursor(ctx, rowsBatch("ROWS 2500"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e codec.CursorEntry
	for {
		if err := cur.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if ended > started || started > ended+c.cursorAhead+1 {
			t.Fatalf("%d fetches started, %d ended", started, ended)
		}
	}
	cur.Close()
	// The last fetches asked for may still be on their way to the fake.
	for deadline := time.Now().Add(5 * time.Second); f.conn(0).fetchCount() < started && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := f.conn(0).fetchCount(); started != n || ended != n || !ctxOK {
		t.Fatalf("%d fetches sent, %d traced, %d ended (context kept: %t)", n, started, ended, ctxOK)
	}
	if rows != 2500 || bytes < 2500*len(`{"type":"row"}`) {
		t.Fatalf("%d rows in %d bytes", rows, bytes)
	}
}
