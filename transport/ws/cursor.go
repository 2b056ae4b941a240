package ws

import (
	"context"
	"errors"
	"io"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// firstFetchBuffer is the size of the buffer a cursor's first fetch is
// read into; later ones are sized after the fetch before them.
const firstFetchBuffer = 32 << 10

var _ transport.Cursor = (*cursor)(nil)

// cursor reads the entries of a cursor on a stream, one fetch_cursor (the
// client's cursor batch of entries) at a time, with the next fetches
// (cursorAhead of them) already asked for while the current one is read:
// sqld serves a stream's requests one after another and collects a fetch's
// entries only while it serves that fetch, so a fetch already waiting when
// one is answered keeps the query running while the answer travels and is
// read. Memory stays bounded by cursorAhead+1 fetches whatever the size of
// the result. Each fetch is read into a buffer
// of its own that is never reused, so values stay valid after later calls.
//
// The stream serves nothing else while its cursor is open: a request on it
// closes the cursor first (its Next then fails).
type cursor struct {
	s     *stream
	sk    *socket
	id    int32
	ctx   context.Context // OpenCursor's: it bounds the reading too
	cur   *exchange       // the fetch being read; nil before the first
	next  int             // the next entry of cur
	ahead []*exchange     // the fetches asked for, oldest first
	spare *exchange       // a fetch read to the end, for the next one
	size  int             // of the last fetch's message
	last  bool            // the server said there are no more entries
	done  bool            // the final entry has been read
	// skipped: the latest entry was of a type unknown to the codec.
	skipped bool
	err     error
	reqs    [1]codec.SocketRequest
	bufs    [1][]byte
}

// OpenCursor runs the batch through a cursor on the stream: open_stream if
// needed, setup and open_cursor go in one burst, and it returns once they
// are answered (within transport.Options.Timeout, if set), with the first fetch
// asked for. The stream stays open when the cursor closes; without end, a
// stream not open yet opens on a socket of its own (see bind).
func (s *stream) OpenCursor(ctx context.Context, batch *codec.Batch, end bool, setup []codec.StreamRequest) (transport.Cursor, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &transport.Error{Message: "cursor failed", Safe: true, Err: err}
	}
	sk, opening, err := s.bind(ctx, end)
	if err != nil {
		return nil, err
	}
	if sk.version < v3 {
		s.abort(opening)
		return nil, &transport.Error{Safe: true, Message: "cursor failed: the server does not support Hrana 3 cursors"}
	}
	s.reqs = s.reqs[:0]
	if opening {
		s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketOpenStream, StreamID: s.id})
	}
	interrupted := s.interruptCursor()
	for i := range setup {
		r, err := s.request(sk, &setup[i])
		if err != nil {
			s.abort(opening)
			return nil, err
		}
		s.reqs = append(s.reqs, r)
	}
	b, err := s.batch(sk, batch)
	if err != nil {
		s.abort(opening)
		return nil, err
	}
	token, terr := s.c.helloToken(ctx)
	if terr != nil {
		s.abort(opening)
		return nil, terr
	}
	id := sk.alloc(&sk.cursors)
	s.reqs = append(s.reqs, codec.SocketRequest{Type: codec.SocketOpenCursor, StreamID: s.id, CursorID: id, Batch: *b})
	ex := s.exchange()
	ex.reset(len(s.reqs), nil)
	if opening {
		ex.open = 0
	}
	led := sk.lead()
	if _, err := sk.send(ex, s.reqs, token); err != nil {
		if led {
			sk.yieldRead()
		}
		sk.release(&sk.cursors, id)
		s.abort(opening)
		if !sk.alive() {
			s.forget()
		}
		return nil, err
	}
	s.sent(interrupted)
	total := len(s.reqs)
	clear(s.reqs)
	if err := s.wait(ctx, sk, ex, led); err != nil {
		// What the open left on the stream is unknown: close the stream,
		// which closes the cursor too once the server gets to it.
		s.ex = nil
		s.Reset()
		sk.release(&sk.cursors, id)
		return nil, &transport.Error{Message: "cursor failed", Err: err}
	}
	if err := s.answered(ex); err != nil {
		ex.recycle()
		sk.release(&sk.cursors, id)
		return nil, err
	}
	defer ex.recycle()
	m := ex.msgs[total-1]
	if m.Type != codec.ServerResponseOK {
		if m.Error.Code == "STREAM_NOT_OPEN" {
			// Failed inside the stream: the server keeps the id until the
			// stream closes.
			s.heldCursor = id
		} else {
			sk.release(&sk.cursors, id)
		}
		return nil, transport.StatementError(&m.Error)
	}
	cur := &cursor{s: s, sk: sk, id: id, ctx: ctx}
	s.cursor = cur
	for i := range setup {
		if m := ex.msgs[total-1-len(setup)+i]; m.Type != codec.ServerResponseOK {
			cur.Close()
			return nil, transport.SetupError(&setup[i], &m.Error)
		}
	}
	if err := cur.fill(); err != nil {
		cur.Close()
		return nil, err
	}
	return cur, nil
}

// fill asks for fetches until cursorAhead of them are outstanding.
func (cur *cursor) fill() error {
	for len(cur.ahead) < cur.s.c.cursorAhead {
		if err := cur.fetch(); err != nil {
			return err
		}
	}
	return nil
}

// fetch asks for the next entries.
func (cur *cursor) fetch() error {
	ex := cur.spare
	cur.spare = nil
	if ex == nil {
		ex = newExchange()
	}
	size := firstFetchBuffer
	if cur.size > 0 {
		size = cur.size + cur.size/4 + 512
	}
	// A buffer of its own, never reused: the entries read from it hand
	// out values that point into it.
	cur.bufs[0] = make([]byte, 0, size)
	ex.reset(1, cur.bufs[:])
	cur.reqs[0] = codec.SocketRequest{Type: codec.SocketFetchCursor, CursorID: cur.id, MaxCount: cur.s.c.cursorBatch}
	cur.traceFetch(ex)
	if _, err := cur.sk.send(ex, cur.reqs[:], ""); err != nil {
		// The cursor's batch runs on the server whatever becomes of the
		// fetch: its failure is never Safe.
		e := *err
		e.Safe, e.Resend = false, false
		fetched(ex, nil, &e)
		return &e
	}
	cur.ahead = append(cur.ahead, ex)
	return nil
}

// Next decodes the next entry into e. It returns io.EOF after the final
// entry (replication_index, or error, which is returned as an entry).
func (cur *cursor) Next(e *codec.CursorEntry) error {
	if cur.err != nil {
		return cur.err
	}
	if cur.done {
		return io.EOF
	}
	for {
		if cur.cur != nil {
			entries := cur.cur.msgs[0].Response.Entries
			if cur.next < len(entries) {
				copyEntry(e, &entries[cur.next])
				cur.next++
				cur.skipped = e.Type == codec.EntryUnknown
				switch e.Type {
				case codec.EntryUnknown:
					continue
				case codec.EntryReplicationIndex, codec.EntryError:
					cur.done = true
				}
				return nil
			}
			if cur.last {
				if cur.skipped && cur.sk.codec.Format() == codec.FormatProtobuf {
					// sqld writes the final replication_index entry
					// without an index as a Protobuf entry with no member
					// set, which decodes as unknown.
					e.Reset()
					e.Type = codec.EntryReplicationIndex
					cur.done = true
					return nil
				}
				cur.err = &transport.Error{Message: "read failed", Err: transport.ErrCursorTruncated}
				return cur.err
			}
			// Read to the end: its buffer stays with the values handed
			// out, its message and slices serve the next fetch.
			cur.cur.bufs[0] = nil
			cur.spare, cur.cur = cur.cur, nil
		}
		if err := cur.receive(); err != nil {
			cur.err = err
			return err
		}
	}
}

// receive waits for the fetch asked for, makes it the current one, and
// asks for the next if the server has more.
func (cur *cursor) receive() error {
	if len(cur.ahead) == 0 {
		return &transport.Error{Message: "read failed", Err: errCursorDetached}
	}
	ex := cur.ahead[0]
	if cur.sk.lead() {
		if err := cur.sk.readUntil(cur.ctx, ex, 0); err != nil {
			return &transport.Error{Message: "read failed", Err: err}
		}
	} else {
		select {
		case <-ex.done:
		case <-cur.ctx.Done():
			// The fetch is answered all the same; Close closes the cursor
			// behind it.
			return &transport.Error{Message: "read failed", Err: cur.ctx.Err()}
		}
	}
	cur.ahead = append(cur.ahead[:0], cur.ahead[1:]...)
	if ex.err != nil {
		e := *ex.err
		e.Safe, e.Resend = false, false
		fetched(ex, nil, &e)
		return &e
	}
	m := ex.msgs[0]
	if m.Type != codec.ServerResponseOK {
		err := &transport.Error{Code: m.Error.Code, Message: "fetch_cursor failed: " + m.Error.Message}
		fetched(ex, nil, err)
		return err
	}
	fetched(ex, m.Response.Entries, nil)
	cur.cur, cur.next = ex, 0
	cur.size = len(ex.bufs[0])
	cur.last = m.Response.Done
	if cur.last {
		// The fetches asked for after it are answered empty; nothing
		// waits for them.
		dropFetches(cur.ahead)
		clear(cur.ahead)
		cur.ahead = cur.ahead[:0]
		return nil
	}
	if cur.s.cursor == cur {
		return cur.fill()
	}
	return nil
}

// errCursorDetached is the cause of a read from a cursor whose stream
// served another request, or was reset or lost.
var errCursorDetached = errors.New("the cursor was closed: its stream served another request or was reset")

// copyEntry copies the entry src into e, reusing e's slices: src's are
// decoded into again by a later fetch, while the bytes the values point
// into are not.
func copyEntry(e *codec.CursorEntry, src *codec.CursorEntry) {
	cols, row := e.Cols[:0], e.Row[:0]
	*e = *src
	e.Cols = append(cols, src.Cols...)
	e.Row = append(row, src.Row...)
}

// Done reports whether the final entry has been read.
func (cur *cursor) Done() bool { return cur.done }

// Close closes the cursor on the server (close_cursor, not waited for);
// the stream stays open. Entries already asked for still arrive and are
// dropped.
func (cur *cursor) Close() error {
	if cur.s.cursor == cur {
		cur.sk.sendDetached([]codec.SocketRequest{{Type: codec.SocketCloseCursor, CursorID: cur.id}})
		cur.sk.release(&cur.sk.cursors, cur.id)
		cur.detach()
	}
	if cur.err == nil && !cur.done {
		cur.err = errors.New("libsql: cursor closed")
	}
	return nil
}

// detach ends the cursor's tie to its stream, which has closed it (or
// lost it): reads that need the server fail.
func (cur *cursor) detach() {
	if cur.s.cursor == cur {
		cur.s.cursor = nil
	}
	dropFetches(cur.ahead)
	clear(cur.ahead)
	cur.ahead = cur.ahead[:0]
	if cur.err == nil && !cur.done {
		cur.err = &transport.Error{Message: "read failed", Err: errCursorDetached}
	}
}
