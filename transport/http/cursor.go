package http

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// keepAliveInterval is how often a transaction's cursor touches its stream
// once its body is in. sqld starts a cursor stream's 10 s idle timer when
// the response starts, not when it ends, so rows read for longer would
// otherwise expire the stream (and the transaction on it) before the next
// request. No request goes on the stream while the body is still coming
// (PROTOCOL.md §4.4: one request in flight per stream), which is why such
// a cursor reads its body ahead (readAhead).
const keepAliveInterval = 4 * time.Second

// drainTimeout bounds how long closing a transaction's cursor early waits
// for the rest of its answer to go by.
const drainTimeout = 10 * time.Second

// lineChunkSize is the size of the memory chunks cursor lines are copied
// into. Chunks are never reused, so decoded values may point into them.
const lineChunkSize = 256 << 10

// readBufferSize bounds the buffered reader under a cursor; longer lines
// are assembled piecewise.
const readBufferSize = 64 << 10

var _ transport.Cursor = (*cursor)(nil)

// cursor reads the entries of a /v3/cursor response as they arrive.
type cursor struct {
	s       *stream
	w       *protocol
	closeOn bool // close the stream with the cursor
	body    io.ReadCloser
	r       *bufio.Reader
	cancel  context.CancelFunc
	chunk   []byte // current line chunk; only appended to
	done    bool
	err     error

	// fetched ends the body's Options.TraceFetch; rows and bytes count
	// what the body brought after its first line.
	fetched     func(rows, bytes int, err error)
	rows, bytes int

	ahead *readAhead // the body, read ahead, of a cursor in a transaction; else nil

	// The keep-alive goroutine of a cursor in a transaction owns s's baton
	// from OpenCursor until Close, which waits for it to stop (stopped)
	// before anyone else uses s.
	stop     chan struct{}
	stopped  chan struct{}
	keepBody []byte
}

// OpenCursor runs the batch through /v3/cursor and returns once the
// response's first line (the new baton) has arrived. The connector's
// timeout bounds only that wait: the body may take as long as the caller's
// context allows. Entries are then read with Next.
//
// With end, the cursor runs on a stream of its own, closed with the
// cursor, so that s is free for other requests meanwhile (PROTOCOL.md
// §4.4: one request at a time on a stream): s's open stream, whose state
// the cursor's statement may need (it holds no transaction outside a unit
// of work), goes to the cursor, and s starts a new one afterwards. setup
// goes first, as a pipeline of its own: a cursor request carries one batch
// and nothing else.
func (s *stream) OpenCursor(ctx context.Context, batch *codec.Batch, end bool, setup []codec.StreamRequest) (transport.Cursor, error) {
	s.begin()
	if end {
		s = s.detach()
	}
	if len(setup) > 0 {
		if err := s.runSetup(ctx, setup); err != nil {
			if end {
				s.Reset()
			}
			return nil, err
		}
	}
	cur, err := s.openCursor(ctx, batch, end)
	if err != nil {
		if end {
			s.Reset()
		}
		return nil, err
	}
	return cur, nil
}

// runSetup sends setup as one pipeline, keeping the stream open.
func (s *stream) runSetup(ctx context.Context, setup []codec.StreamRequest) error {
	var res transport.Response
	if err := s.pipeline(ctx, setup, &res); err != nil {
		return err
	}
	for i, r := range res.Pipeline.Results {
		if !r.OK {
			return transport.SetupError(&setup[i], &r.Error)
		}
	}
	return nil
}

// openCursor opens the cursor on the client's wire; a 404 to one that
// opens a stream has the client learn (client.learn), but never Hrana 2,
// which has no cursors.
func (s *stream) openCursor(ctx context.Context, batch *codec.Batch, end bool) (*cursor, error) {
	c := s.c
	w := c.proto.Load()
	fresh := !s.Open()
	cur, err := s.openCursorOn(ctx, w, batch, end)
	if err == nil || !fresh || !isStatus(err, http.StatusNotFound) {
		return cur, err
	}
	err = c.learn(w, err, func(next *protocol) error {
		if next.cursor == "" {
			return err
		}
		var nerr error
		cur, nerr = s.openCursorOn(ctx, next, batch, end)
		return nerr
	})
	var e *transport.Error
	if errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound {
		cp := *e
		cp.Message += " (POST " + w.cursor + ": the server may speak only Hrana 2, which has no cursors, or have no such database)"
		return nil, &cp
	}
	if err != nil {
		return nil, err
	}
	return cur, nil
}

// openCursorOn is openCursor on the wire w. A cursor without end holds a
// transaction's stream: its body is read ahead, and its stream kept alive
// once the body is in.
func (s *stream) openCursorOn(ctx context.Context, w *protocol, batch *codec.Batch, end bool) (*cursor, error) {
	c := s.c
	if w.cursor == "" {
		return nil, &transport.Error{Safe: true, Message: "cursor failed: the server does not support Hrana 3 cursors"}
	}
	var err error
	s.reqBuf, err = w.codec.AppendCursorRequest(s.reqBuf[:0], &codec.CursorRequest{Baton: s.baton, Batch: *batch})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var timer *time.Timer
	if c.timeout > 0 {
		timer = time.AfterFunc(c.timeout, cancel)
	}
	stopTimer := func() bool { return timer == nil || timer.Stop() }
	// fail reports err; once the server answered, the baton sent is spent.
	fail := func(answered bool, err error) (*cursor, error) {
		stopTimer()
		cancel()
		if answered {
			s.forget()
		}
		return nil, err
	}
	// Rows must flow as the server produces them; gzip would batch them.
	resp, answered, err := c.roundTrip(ctx, w, s.trace, s.endpoint(w.cursor), s.reqBuf, true)
	if err != nil && s.baton != "" {
		err = streamGone(err)
	}
	if err != nil {
		var te *transport.Error
		if !answered && errors.As(err, &te) && te.Err != nil {
			te.Err = timeoutCause(ctx, te.Err)
		}
		return fail(answered, err)
	}
	cur := &cursor{s: s, w: w, closeOn: end, body: resp.Body, cancel: cancel}
	var ahead *readAhead
	if !end {
		ahead = newReadAhead(resp.Body, readAheadMax)
		cur.body, cur.ahead = ahead, ahead
	}
	// An autocommit cursor's body is read as it arrives. Reading it in
	// batches (a socket low-water mark, from issue 13 until 2026-12-05)
	// saved client CPU but cost throughput and server CPU: sqld writes a
	// row or two per system call to a reader that keeps up either way
	// (docs/dev/PERF.md "The million-row cursor and the reader's pace").
	cur.r = bufio.NewReaderSize(cur.body, readBufferSize)
	line, err := cur.readMessage()
	if err != nil {
		cur.body.Close()
		return fail(true, readFailed(timeoutCause(ctx, err)))
	}
	var h codec.CursorHeader
	if err := w.codec.DecodeCursorHeader(line, &h); err != nil {
		cur.body.Close()
		return fail(true, &transport.Error{Message: "decode failed", Err: err})
	}
	if !stopTimer() {
		cur.body.Close()
		return fail(true, readFailed(context.DeadlineExceeded))
	}
	s.advance(h.Baton, h.BaseURL)
	if ahead != nil && s.baton != "" {
		cur.stop = make(chan struct{})
		cur.stopped = make(chan struct{})
		go cur.keepAlive(ahead.complete)
	}
	if c.traceFetch != nil {
		cur.bytes = 0
		cur.fetched = c.traceFetch(ctx)
	}
	return cur, nil
}

// timeoutCause reports a cancellation by the connector's timer as a
// deadline, which is what it is to the caller.
func timeoutCause(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return fmt.Errorf("%w (timeout)", context.DeadlineExceeded)
	}
	return err
}

// Next decodes the next entry into e. It returns io.EOF after the final
// entry (replication_index, or error, which is returned as an entry).
// Value bytes in e point into memory that is never reused, so they stay
// valid after later calls.
func (cur *cursor) Next(e *codec.CursorEntry) error {
	if cur.err != nil {
		return cur.err
	}
	if cur.done {
		return io.EOF
	}
	for {
		msg, err := cur.readMessage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = transport.ErrCursorTruncated
			}
			cur.err = readFailed(err)
			cur.endFetch(cur.err)
			return cur.err
		}
		if cur.w.codec.Format() == codec.FormatJSON && len(bytes.TrimSpace(msg)) == 0 || len(msg) == 0 {
			// Blank lines; a Protobuf entry of zero length is one whose
			// oneof is unset (sqld's missing replication index).
			continue
		}
		if err := cur.w.codec.DecodeCursorEntry(msg, e); err != nil {
			cur.err = &transport.Error{Message: "decode failed", Err: err}
			cur.endFetch(cur.err)
			return cur.err
		}
		switch e.Type {
		case codec.EntryUnknown:
			continue
		case codec.EntryRow:
			cur.rows++
		case codec.EntryReplicationIndex, codec.EntryError:
			cur.done = true
			cur.endFetch(nil)
		}
		return nil
	}
}

// readMessage returns the next message of the body in memory that is never
// reused: a line without its newline for JSON, a varint-length-delimited
// message without its length for Protobuf. It returns io.EOF only when the
// body ends between two messages.
func (cur *cursor) readMessage() ([]byte, error) {
	if cur.w.codec.Format() == codec.FormatProtobuf {
		return cur.readDelimited()
	}
	return cur.readLine()
}

// readDelimited reads a varint length and that many bytes, copied into the
// cursor's append-only chunks (or, for a message longer than a chunk, a
// slice of its own).
func (cur *cursor) readDelimited() ([]byte, error) {
	var n uint64
	for i := 0; ; i++ {
		b, err := cur.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if i == 9 && b > 1 {
			return nil, errors.New("invalid message length in the cursor body: varint overflows 64 bits")
		}
		n |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			cur.bytes += i + 1
			break
		}
	}
	if n > uint64(cur.s.c.maxResp) {
		return nil, fmt.Errorf("%w: a cursor message of %d bytes, over the limit of %d", transport.ErrResponseTooLarge, n, cur.s.c.maxResp)
	}
	size := int(n)
	cur.bytes += size
	if size > cap(cur.chunk)-len(cur.chunk) {
		if size > lineChunkSize {
			msg := make([]byte, size)
			if _, err := io.ReadFull(cur.r, msg); err != nil {
				return nil, unexpectedEOF(err)
			}
			return msg, nil
		}
		cur.chunk = make([]byte, 0, lineChunkSize)
	}
	start := len(cur.chunk)
	cur.chunk = cur.chunk[:start+size]
	if _, err := io.ReadFull(cur.r, cur.chunk[start:]); err != nil {
		cur.chunk = cur.chunk[:start]
		return nil, unexpectedEOF(err)
	}
	return cur.chunk[start:len(cur.chunk):len(cur.chunk)], nil
}

// unexpectedEOF reports a body that ended inside a message.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readLine returns the next line without its newline, in memory that is
// never reused: copied into the cursor's append-only chunks, or, for a line
// longer than the read buffer, assembled in a slice of its own.
func (cur *cursor) readLine() ([]byte, error) {
	line, err := cur.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return cur.readLongLine(line)
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	cur.bytes += len(line)
	line = line[:len(line)-1]
	if len(line) > cap(cur.chunk)-len(cur.chunk) {
		cur.chunk = make([]byte, 0, max(lineChunkSize, len(line)))
	}
	start := len(cur.chunk)
	cur.chunk = append(cur.chunk, line...)
	return cur.chunk[start:len(cur.chunk):len(cur.chunk)], nil
}

// readLongLine collects a line that overflows the read buffer in blocks, so
// that a line over the limit costs the limit and no more.
func (cur *cursor) readLongLine(first []byte) ([]byte, error) {
	var blocks blockBuffer
	piece, err := first, bufio.ErrBufferFull
	for {
		if blocks.len()+len(piece) > int(min(cur.s.c.maxResp, int64(^uint(0)>>1))) {
			return nil, fmt.Errorf("%w: a cursor line over %d bytes", transport.ErrResponseTooLarge, cur.s.c.maxResp)
		}
		// ReadSlice's result is overwritten by the next read: copy it.
		blocks.add(append([]byte(nil), piece...))
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		piece, err = cur.r.ReadSlice('\n')
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line := blocks.join()
	cur.bytes += len(line)
	return line[: len(line)-1 : len(line)-1], nil
}

// endFetch ends the body's Options.TraceFetch, if it has not ended yet.
func (cur *cursor) endFetch(err error) {
	if done := cur.fetched; done != nil {
		cur.fetched = nil
		done(cur.rows, cur.bytes, err)
	}
}

// Done reports whether the final entry has been read.
func (cur *cursor) Done() bool { return cur.done }

// Close stops reading. A body not read to the end is closed, which discards
// its HTTP connection. A cursor opened with end closes its stream, and so
// does one whose body failed (it ended without its terminator, or could not
// be decoded: fatal for the stream, PROTOCOL.md §7.2.5); otherwise the
// stream stays as it is, for the transaction on it.
func (cur *cursor) Close() error {
	if cur.stop != nil {
		close(cur.stop)
		<-cur.stopped
		cur.stop = nil
	}
	if cur.ahead != nil && cur.err == nil && !cur.done {
		// A transaction's next request must wait for this one to end
		// (PROTOCOL.md §4.4): the rest of the answer goes by unread,
		// within drainTimeout; past it the stream is dropped below
		// rather than risk a request the server may refuse.
		t := time.NewTimer(drainTimeout)
		select {
		case <-cur.ahead.DiscardRest():
			if !cur.ahead.endedCleanly() {
				cur.err = errors.New("libsql: cursor closed, and its answer was cut off")
			}
		case <-t.C:
			cur.err = errors.New("libsql: cursor closed before its answer ended")
		}
		t.Stop()
	}
	if cur.body != nil {
		cur.body.Close()
		cur.body = nil
	}
	cur.cancel()
	cur.endFetch(nil)
	broken := cur.err != nil
	if cur.err == nil && !cur.done {
		cur.err = errors.New("libsql: cursor closed")
	}
	if cur.closeOn || broken {
		cur.closeOn = false
		cur.s.Reset()
	}
	return nil
}

// keepAlive keeps a transaction's stream alive while its cursor's rows are
// read: once the body is in (complete), and at least keepAliveInterval
// after the cursor began or the last touch, it touches the stream with a
// get_autocommit (a request of its own, never an empty pipeline: PROTOCOL.md
// §5.1), each answer carrying the stream's next baton, until Close.
func (cur *cursor) keepAlive(complete <-chan struct{}) {
	defer close(cur.stopped)
	last := time.Now()
	select {
	case <-cur.stop:
		return
	case <-complete:
	}
	var resp codec.PipelineResponse
	for {
		if wait := cur.s.c.keepAlive - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-cur.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if !cur.touch(&resp) {
			return
		}
		last = time.Now()
	}
}

// keepAliveRequests is what a touch sends.
var keepAliveRequests = []codec.StreamRequest{{Type: codec.RequestGetAutocommit}}

func (cur *cursor) touch(resp *codec.PipelineResponse) bool {
	s, c := cur.s, cur.s.c
	req := codec.PipelineRequest{Baton: s.baton, Requests: keepAliveRequests}
	payload, err := cur.w.codec.AppendPipelineRequest(nil, &req)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), keepAliveInterval)
	defer cancel()
	if _, err := c.post(ctx, cur.w, s.trace, s.endpoint(cur.w.pipeline), payload, &cur.keepBody); err != nil {
		// The stream is gone; the next request on it will say so.
		return false
	}
	if err := cur.w.codec.DecodePipelineResponse(cur.keepBody, resp); err != nil || resp.Baton == "" || len(resp.Results) != 1 {
		return false
	}
	s.advance(resp.Baton, resp.BaseURL)
	return true
}
