package ws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

func rowsBatch(sql string) *codec.Batch {
	return &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: sql, WantRows: true}}}}
}

// fetches returns how many fetch_cursor requests the socket got.
func (fc *fconn) fetchCount() int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.fetches
}

// mustOpenCursor opens a cursor on s for rowsBatch(sql), the last unit of
// work on s; a failure fails the test.
func mustOpenCursor(t *testing.T, s transport.Stream, sql string) transport.Cursor {
	t.Helper()
	cur, err := s.OpenCursor(context.Background(), rowsBatch(sql), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// TestCursor: a cursor reads its entries fetch by fetch, keeping
// cursorAhead fetches in flight ahead of the reader and no more, so that
// what it holds is bounded; Close closes it, and the stream serves requests
// again.
func TestCursor(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.cursorBatch = 100 })
	s := c.NewStream()
	cur := mustOpenCursor(t, s, "ROWS 2500")
	fc := f.conn(0)
	var e codec.CursorEntry
	var rows []int64
	for {
		err := cur.Next(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case codec.EntryStepBegin:
			if len(e.Cols) != 2 || e.Cols[0].Name != "i" {
				t.Fatalf("step_begin %+v", e)
			}
		case codec.EntryRow:
			rows = append(rows, e.Row[0].Int)
			// The reader is never more than cursorAhead fetches behind
			// the server.
			if n, read := fc.fetchCount(), len(rows)+1; n > read/100+1+c.cursorAhead {
				t.Fatalf("%d fetches sent after %d entries read", n, read)
			}
		}
	}
	if len(rows) != 2500 || rows[0] != 0 || rows[2499] != 2499 || !cur.Done() {
		t.Fatalf("%d rows, Done %t", len(rows), cur.Done())
	}
	if err := cur.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := execute(context.Background(), s, "after"); err != nil || got[0] != "1:after" {
		t.Fatalf("after the cursor: %q, %v", got, err)
	}
	types := strings.Join(fc.received(), " ")
	if !strings.Contains(types, "open_stream open_cursor fetch_cursor") || !strings.HasSuffix(types, "close_cursor execute") {
		t.Fatalf("the server received %s", types)
	}
	if n := fc.fetchCount(); n < 26 || n > 27 {
		t.Fatalf("%d fetches for 2503 entries by 100", n)
	}
}

// TestCursorValuesOutliveFetches: the bytes of values read earlier stay as
// they were through later fetches (each is read into memory of its own).
func TestCursorValuesOutliveFetches(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.cursorBatch = 3 })
	s := c.NewStream()
	cur := mustOpenCursor(t, s, "ROWS 50")
	defer cur.Close()
	var e codec.CursorEntry
	var texts [][]byte
	for cur.Next(&e) == nil {
		if e.Type == codec.EntryRow {
			texts = append(texts, e.Row[1].Bytes) // not copied
		}
	}
	// Other traffic on the socket reuses the buffers it may.
	for range 10 {
		mustExecute(t, c.NewStream(), strings.Repeat("y", 100))
	}
	for i, b := range texts {
		if want := fmt.Sprint("row ", i); string(b) != want {
			t.Fatalf("row %d reads %q", i, b)
		}
	}
}

// TestCursorInterrupted: a request on the stream closes its cursor first,
// in the same burst; the cursor then fails.
func TestCursorInterrupted(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.cursorBatch = 10 })
	s := c.NewStream()
	cur := mustOpenCursor(t, s, "ROWS 1000")
	var e codec.CursorEntry
	for range 5 {
		if err := cur.Next(&e); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := execute(context.Background(), s, "next"); err != nil || got[0] != "1:next" {
		t.Fatalf("a request during the cursor: %q, %v", got, err)
	}
	types := f.conn(0).received()
	if i := slices.Index(types, "close_cursor"); i < 0 || types[i+1] != "execute" {
		t.Fatalf("the server received %q", types)
	}
	for {
		if err := cur.Next(&e); err != nil {
			if err == io.EOF {
				t.Fatal("an interrupted cursor ended normally")
			}
			break
		}
	}
	_ = cur.Close()
	if got := f.conn(0).received(); strings.Count(strings.Join(got, " "), "close_cursor") != 1 {
		t.Fatalf("the cursor was closed twice: %q", got)
	}
}

// TestCursorOpenFails: an open_cursor the server refuses is the
// statement's error; no fetch follows it (sqld would close the socket on a
// fetch of a cursor it never opened), and the socket lives on.
func TestCursorOpenFails(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	_, err := s.OpenCursor(context.Background(), rowsBatch("ERR"), true, nil)
	if !isStatement(err) || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("error %v", err)
	}
	if got, err := execute(context.Background(), s, "after"); err != nil || got[0] != "1:after" {
		t.Fatalf("after: %q, %v", got, err)
	}
	if got := f.conn(0).received(); slices.Contains(got, "fetch_cursor") {
		t.Fatalf("the server received %q", got)
	}
}

// TestCursorSetup: setup runs before the cursor in the same burst; a
// setup that fails is the error, and the cursor is closed.
func TestCursorSetup(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, nil)
	s := c.NewStream()
	setup := []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "ERR pragma"}}}
	_, err := s.OpenCursor(context.Background(), rowsBatch("ROWS 3"), true, setup)
	if err == nil || !strings.Contains(err.Error(), `connection setting "ERR pragma" failed`) {
		t.Fatalf("error %v", err)
	}
	want := []string{"hello", "open_stream", "execute", "open_cursor", "close_cursor"}
	eventually(t, "the close", func() bool { return slices.Equal(f.conn(0).received(), want) })
}

// TestCursorSocketDeath: a cursor whose socket dies fails, not Safe.
func TestCursorSocketDeath(t *testing.T) {
	f := newFake(t)
	c := newFakeClient(t, f, func(o *options) { o.cursorBatch = 10 })
	s := c.NewStream().(*stream)
	cur := mustOpenCursor(t, s, "ROWS 1000")
	var e codec.CursorEntry
	if err := cur.Next(&e); err != nil {
		t.Fatal(err)
	}
	f.closeAll()
	var err error
	for err == nil {
		err = cur.Next(&e)
	}
	if err == io.EOF || isSafe(err) {
		t.Fatalf("error %v", err)
	}
	_ = cur.Close()
	if !s.Lost() {
		t.Fatal("the stream is not Lost")
	}
}

// TestCursorContext: the context of OpenCursor bounds the reading.
func TestCursorContext(t *testing.T) {
	f := newFake(t)
	stall := make(chan struct{})
	defer close(stall)
	f.setHook(func(fc *fconn, m *cmsg) bool {
		if m.Request.Type == "fetch_cursor" && fc.fetchCount() >= 1 {
			<-stall
			return true
		}
		return false
	})
	c := newFakeClient(t, f, func(o *options) { o.cursorBatch = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	cur, err := c.NewStream().OpenCursor(ctx, rowsBatch("ROWS 10"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e codec.CursorEntry
	for err == nil {
		err = cur.Next(&e)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	_ = cur.Close()
}
