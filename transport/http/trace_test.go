package http

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/transport"
)

// TestResponseBytes: a Send reports the size of the pipeline it posted
// (the close it appends included) and of the body it read.
func TestResponseBytes(t *testing.T) {
	var posted int
	srv := fakeServer(t, 200, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posted = len(body)
		_, _ = io.WriteString(w, okClose)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec})
	var res transport.Response
	if err := c.NewStream().Send(context.Background(), nil, true, &res); err != nil {
		t.Fatal(err)
	}
	if res.BytesSent != posted || posted == 0 || res.BytesReceived != len(okClose) {
		t.Fatalf("BytesSent %d, BytesReceived %d; the server read %d and wrote %d", res.BytesSent, res.BytesReceived, posted, len(okClose))
	}
}

// fetchTrace records the fetches TraceFetch is told of.
type fetchTrace struct {
	started, ended int
	rows, bytes    int
	err            error
	ctxValue       any
}

type traceKey struct{}

func (ft *fetchTrace) trace(ctx context.Context) func(rows, bytes int, err error) {
	ft.started++
	ft.ctxValue = ctx.Value(traceKey{})
	return func(rows, bytes int, err error) {
		ft.ended++
		ft.rows, ft.bytes, ft.err = rows, bytes, err
	}
}

// TestCursorTraceFetch: the body of a cursor is one fetch, from its first
// line to its last, with the cursor's context, its rows and its bytes; one
// cut short ends with the error, and one closed early ends at Close.
func TestCursorTraceFetch(t *testing.T) {
	body := 0
	for _, l := range cursorLines[1:] {
		if l != "PAUSE" {
			body += len(l) + 1
		}
	}
	ctx := context.WithValue(context.Background(), traceKey{}, "the cursor's")
	batch := &codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT x"}}}}
	open := func(t *testing.T, lines []string) (transport.Cursor, *fetchTrace) {
		t.Helper()
		cs := &cursorServer{lines: lines}
		srv := fakeServer(t, 200, cs.handler(t))
		ft := &fetchTrace{}
		c := newTestClient(t, transport.Options{URL: srv.URL, Codec: direct.Codec, TraceFetch: ft.trace})
		cur, err := c.NewStream().OpenCursor(ctx, batch, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ft.started != 1 || ft.ended != 0 || ft.ctxValue != "the cursor's" {
			t.Fatalf("after the first line: %+v", ft)
		}
		return cur, ft
	}

	t.Run("whole", func(t *testing.T) {
		cur, ft := open(t, cursorLines)
		readCursor(t, cur)
		if ft.ended != 1 || ft.rows != 2 || ft.bytes != body || ft.err != nil {
			t.Fatalf("read to the end: %+v, want 2 rows and %d bytes", ft, body)
		}
		cur.Close()
		if ft.ended != 1 {
			t.Fatalf("Close ended the fetch again: %+v", ft)
		}
	})
	t.Run("cut", func(t *testing.T) {
		cur, ft := open(t, cursorLines[:3])
		var e codec.CursorEntry
		var err error
		for err == nil {
			err = cur.Next(&e)
		}
		if ft.ended != 1 || ft.rows != 1 || !errors.Is(ft.err, transport.ErrCursorTruncated) {
			t.Fatalf("a body cut short: %+v", ft)
		}
		cur.Close()
	})
	t.Run("closed", func(t *testing.T) {
		cur, ft := open(t, cursorLines)
		var e codec.CursorEntry
		if err := cur.Next(&e); err != nil {
			t.Fatal(err)
		}
		cur.Close()
		if ft.ended != 1 || ft.err != nil || ft.bytes != len(cursorLines[1])+1 {
			t.Fatalf("closed after one entry: %+v", ft)
		}
	})
}

// TestCursorTraceFetchProtobuf: a Protobuf body's bytes are its
// messages with their length prefixes, after the first.
func TestCursorTraceFetchProtobuf(t *testing.T) {
	header := pbDelimited(pbCursorHeader)
	body := pbDelimited(pbStepBegin, pbRow, nil, pbRow, pbStepEnd, pbIndex)
	srv := protobufServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		if r.URL.Path != "/v3-protobuf/cursor" {
			_, _ = w.Write(pbOKClose)
			return
		}
		_, _ = w.Write(append(header, body...))
	})
	ft := &fetchTrace{}
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec, TraceFetch: ft.trace})
	batch := codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT 42", WantRows: true}}}}
	cur, err := c.NewStream().OpenCursor(context.Background(), &batch, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	readCursor(t, cur)
	if ft.started != 1 || ft.ended != 1 || ft.rows != 2 || ft.bytes != len(body) || ft.err != nil {
		t.Fatalf("%+v, want 2 rows and %d bytes", ft, len(body))
	}
}
