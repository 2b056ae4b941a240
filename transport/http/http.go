package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
	"github.com/gohrana/libsql/transport/internal/neterr"
)

// sendTrace tells whether a request obtained a connection, through
// httptrace's GotConn (which internal/http1 calls as soon as it has a TCP
// connection): one that did not certainly never left this process. A
// Stream keeps one for its requests, one at a time, so that tracing costs
// a request one small allocation (the context value).
type sendTrace struct {
	got   atomic.Bool
	trace httptrace.ClientTrace
}

func newSendTrace() *sendTrace {
	t := new(sendTrace)
	t.trace.GotConn = t.gotConn
	return t
}

func (t *sendTrace) gotConn(httptrace.GotConnInfo) { t.got.Store(true) }

// attach resets the trace and returns ctx carrying it.
func (t *sendTrace) attach(ctx context.Context) context.Context {
	t.got.Store(false)
	if httptrace.ContextClientTrace(ctx) != nil {
		// The caller traces too. Composing with its trace changes the
		// trace given, so give a fresh one.
		return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: t.gotConn})
	}
	return httptrace.WithClientTrace(ctx, &t.trace)
}

// do sends req, whose context carries tr, and reports whether it may have
// left this process.
func (c *client) do(req *http.Request, tr *sendTrace) (resp *http.Response, sent bool, err error) {
	resp, err = c.hc.Do(req)
	if err != nil {
		return nil, tr.got.Load(), unwrapURLError(err)
	}
	return resp, true, nil
}

// sendFailed is the error for a request that got no response. One that
// never left is safe to repeat, and database/sql may repeat it on another
// connection (BadConn) unless the caller's context is what stopped it.
func sendFailed(sent bool, err error) *transport.Error {
	e := &transport.Error{Message: "request failed", Safe: !sent, Resend: !sent && !isContextErr(err), Err: err}
	if op := neterr.Dial(err); op != nil && !sent {
		e.Message, e.Err = "cannot connect to the server", op
	}
	return e
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// readFailed is the error for a response that could not be read.
func readFailed(err error) *transport.Error {
	return &transport.Error{Message: "read failed", Err: err}
}

// post sends one request and reads a 2xx body into *body; anything else
// becomes a *transport.Error. answered reports whether a response arrived
// (the server then acted on the request and its baton).
func (c *client) post(ctx context.Context, w *protocol, tr *sendTrace, endpoint string, payload []byte, body *[]byte) (answered bool, err error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, answered, err := c.roundTrip(ctx, w, tr, endpoint, payload, false)
	if err != nil {
		return answered, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.maxResp {
		return true, readFailed(fmt.Errorf("%w: the server announced %d bytes, over the limit of %d",
			transport.ErrResponseTooLarge, resp.ContentLength, c.maxResp))
	}
	if n := resp.ContentLength; n > 0 && int64(cap(*body)) <= n {
		// One allocation of the right size; +1 leaves room to see EOF.
		*body = make([]byte, 0, n+1)
	}
	*body, err = readLimited((*body)[:0], resp.Body, c.maxResp)
	if err != nil {
		return true, readFailed(err)
	}
	return true, nil
}

// roundTrip POSTs payload to endpoint and returns a 2xx response, whose
// body the caller reads and closes; anything else becomes a
// *transport.Error, with answered telling whether a response arrived. A
// refusal that certainly ran nothing and asks to come back later (see
// retryWait) is sent again after the wait the server asks for, as long as
// ctx allows it. stream asks for the body as the server writes it (no
// compression).
func (c *client) roundTrip(ctx context.Context, w *protocol, tr *sendTrace, endpoint string, payload []byte, stream bool) (resp *http.Response, answered bool, err error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(tr.attach(ctx), http.MethodPost, endpoint, bytes.NewReader(payload))
		if err != nil {
			return nil, false, sendFailed(false, err)
		}
		if err := c.setHeaders(req, w); err != nil {
			return nil, false, err
		}
		if stream {
			req.Header.Set("Accept-Encoding", "identity")
		}
		resp, sent, err := c.do(req, tr)
		if err != nil {
			return nil, false, sendFailed(sent, err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			return resp, true, nil
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			c.strained()
		}
		if wait, ok := retryWait(resp, attempt); ok && sleepCtx(ctx, wait) {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			continue
		}
		err = c.statusError(resp, w)
		resp.Body.Close()
		return nil, true, err
	}
}

// Retries of refusals (429, 503 with Retry-After): at most maxRetries,
// each waiting what Retry-After says, or retryBase doubled per attempt
// without it; a wait over maxRetryWait is not worth it, and the refusal is
// returned at once.
const (
	maxRetries   = 4
	retryBase    = 100 * time.Millisecond
	maxRetryWait = 10 * time.Second
)

// retryWait reports whether resp refused a request that certainly ran
// nothing and may be sent again, and after how long. sqld answers 429
// before reading the request; a 503 counts only with a Retry-After, a
// server's own "come back later" (a proxy's 503 after forwarding the
// request might hide a request that ran). PROTOCOL.md §9.3.
func retryWait(resp *http.Response, attempt int) (time.Duration, bool) {
	if attempt >= maxRetries {
		return 0, false
	}
	ra := resp.Header.Get("Retry-After")
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
	case resp.StatusCode == http.StatusServiceUnavailable && ra != "":
	default:
		return 0, false
	}
	wait := retryBase << attempt
	if ra != "" {
		d, ok := parseRetryAfter(ra, time.Now())
		if !ok {
			return 0, false
		}
		wait = d
	}
	return wait, wait <= maxRetryWait
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// sleepCtx waits d, unless ctx ends first or would end before d is up
// (then there is no point in waiting): it reports whether it waited.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// readLimited appends r to dst, failing once more than limit bytes arrive.
// When dst's capacity runs out it reads into fixed-size blocks and joins
// them at the end: a body the limit rejects then costs the limit, not the
// chain of ever larger copies that growing one slice leaves behind.
func readLimited(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	var blocks blockBuffer
	buf := dst
	total := int64(len(dst))
	for {
		if len(buf) == cap(buf) {
			blocks.add(buf)
			buf = make([]byte, 0, blockSize)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		total += int64(n)
		if total > limit {
			return dst[:0], fmt.Errorf("%w: over %d bytes", transport.ErrResponseTooLarge, limit)
		}
		if err == io.EOF {
			if blocks.len() == 0 {
				return buf, nil
			}
			blocks.add(buf)
			return blocks.join(), nil
		}
		if err != nil {
			return dst[:0], err
		}
	}
}

// blockSize is the unit in which large bodies and lines are collected.
const blockSize = 1 << 20

// blockBuffer collects bytes in separate blocks, joined once at the end.
type blockBuffer struct {
	blocks [][]byte
	n      int
}

func (b *blockBuffer) add(p []byte) {
	if len(p) > 0 {
		b.blocks = append(b.blocks, p)
		b.n += len(p)
	}
}

func (b *blockBuffer) len() int { return b.n }

// join returns the bytes in one new slice of exactly their length.
func (b *blockBuffer) join() []byte {
	out := make([]byte, 0, b.n)
	for _, p := range b.blocks {
		out = append(out, p...)
	}
	*b = blockBuffer{}
	return out
}

// statusError turns a non-2xx response into a *transport.Error, decoding the
// body shapes sqld uses, told apart by their Content-Type: text/plain
// (protocol errors), JSON {"message","code"} (STREAM_EXPIRED on the JSON
// routes) or {"error"} (everything else, on every route), and the Protobuf
// Error message (STREAM_EXPIRED on the Protobuf routes).
func (c *client) statusError(resp *http.Response, w *protocol) error {
	raw, _ := readLimited(nil, resp.Body, 64<<10)
	e := &transport.Error{HTTPStatus: resp.StatusCode}
	ct := resp.Header.Get("Content-Type")
	var he codec.Error
	switch {
	case strings.HasPrefix(ct, "application/json") && c.json.DecodeError(raw, &he) == nil && he.Message != "":
		e.Code, e.Message = he.Code, he.Message
	case strings.HasPrefix(ct, "application/x-protobuf") && w.codec.Format() == codec.FormatProtobuf &&
		w.codec.DecodeError(raw, &he) == nil && he.Message != "":
		e.Code, e.Message = he.Code, he.Message
	case strings.HasPrefix(ct, "text/plain") && len(raw) > 0:
		e.Message = string(raw)
	default:
		e.Message = http.StatusText(resp.StatusCode)
	}
	// sqld words some as "<status text>: `<reason>`"; the status is the
	// error's own.
	e.Message = neterr.StatusMessage(e.Message, resp.StatusCode)
	e.Message, e.Code = c.hdr.Redact(e.Message), c.hdr.Redact(e.Code)
	if len(e.Message) > 1024 {
		e.Message = e.Message[:1024] + "..."
	}
	// sqld refuses with 429 before running anything, and with
	// STREAM_EXPIRED once it finds the baton's stream gone, which it checks
	// first; a 404 is a path, a database or a stream the server does not
	// have (PROTOCOL.md §9.3), so nothing ran. A proxy might send 503 after
	// forwarding the request, so that does not count as no effect.
	e.Safe = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusNotFound || e.Code == codeStreamExpired
	return e
}

// unwrapURLError drops *url.Error, whose text repeats the URL; the caller's
// message says what failed.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// codeStreamExpired is sqld's code for a baton whose stream it no longer
// has.
const codeStreamExpired = "STREAM_EXPIRED"

// isStatus reports whether err is a *transport.Error with the HTTP status.
func isStatus(err error, status int) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.HTTPStatus == status
}
