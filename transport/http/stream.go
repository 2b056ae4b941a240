package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

var _ transport.Stream = (*stream)(nil)

// stream is the client side of one server stream over HTTP: its baton and
// base URL. It is not safe for concurrent use; Hrana requires requests on
// a stream to be serial anyway.
//
// A stream that keeps (a connection's, from NewStream) does not close its
// server stream at the end of a unit of work: it appends get_autocommit
// instead, and keeps the stream if the server says no transaction is open
// on it, so that the next unit of work goes on an open stream (sqld opens
// a SQLite connection for every new stream: a kept one saves it about a
// third of its CPU per point query, docs/dev/PERF.md "Kept streams"). A
// kept stream idle for keptIdleMax is no longer Open: the server is about
// to expire it. Other streams (Isolated, a cursor's own) close with the
// unit of work.
type stream struct {
	c         *client
	keep      bool
	baton     string
	baseURL   string
	idleSince time.Time             // when a kept stream's last unit of work ended; zero while in one
	reqs      []codec.StreamRequest // the requests plus a close or a get_autocommit, for Send with end
	req       codec.PipelineRequest // the request being encoded
	reqBuf    []byte
	trace     *sendTrace
}

// keptIdleMax is how long a kept stream may idle before it is dropped
// rather than used: sqld expires a stream after 10 s without a request.
// Using one that expired costs a refused round trip (which the session
// sends again on a new stream), so the margin covers a slow network.
const keptIdleMax = 7 * time.Second

// getAutocommit asks whether the stream is outside a transaction (Hrana 3).
var getAutocommit = codec.StreamRequest{Type: codec.RequestGetAutocommit}

// closeRequest ends a stream.
var closeRequest = codec.StreamRequest{Type: codec.RequestClose}

// Isolated returns a new stream: requests on it, sent with end, open and
// close a server stream of their own.
func (s *stream) Isolated() transport.Stream { return s.c.newStream() }

// Open reports whether the server holds a stream for s (it has a baton),
// and it is not a kept stream idle long enough to have expired.
func (s *stream) Open() bool {
	return s.baton != "" && (s.idleSince.IsZero() || time.Since(s.idleSince) < keptIdleMax)
}

// Shared reports false: each request is an exchange of its own, whose
// failure ends no other stream.
func (s *stream) Shared() bool { return false }

// Busy reports false: an HTTP request ends with its exchange, answered or
// not.
func (s *stream) Busy() bool { return false }

// Lost reports false: a stream the server dropped shows as the error of the
// request that carries its baton.
func (s *stream) Lost() bool { return false }

// Version returns the client's Hrana version, probing the server if needed.
func (s *stream) Version(ctx context.Context) (int, error) { return s.c.version(ctx) }

// forget drops the stream's baton without telling the server, after a
// failure that killed it or a close.
func (s *stream) forget() {
	s.baton = ""
	s.baseURL = ""
	s.idleSince = time.Time{}
}

// advance takes the baton and base_url of a response (PROTOCOL.md §4.2,
// §4.6): the stream's next request carries baton, and goes to baseURL
// when it is set, or else where the stream's requests went so far. A null
// baton closes the stream; a new one starts at the client's base URL.
func (s *stream) advance(baton, baseURL string) {
	s.baton = baton
	switch {
	case baton == "":
		s.baseURL = ""
	case baseURL != "":
		s.baseURL = strings.TrimRight(baseURL, "/")
	}
}

// Send sends the requests as one pipeline on the stream and decodes the
// response into res. With end, a stream that keeps appends get_autocommit
// (unless reqs end with one) and is kept if its answer says no transaction
// is open; otherwise, and on any stream that does not keep, a close is
// appended. A stream that is not kept is forgotten afterwards whatever
// happened (one still open after a failure is closed first, so that no
// transaction is left holding its lock until it expires).
//
// On success the stream takes the new baton. After an HTTP error status the
// server has dropped the stream, so s forgets it; after a failure with no
// response s keeps the baton it sent, which is still current if the request
// never reached the server, so that Reset can close the stream.
func (s *stream) Send(ctx context.Context, reqs []codec.StreamRequest, end bool, res *transport.Response) error {
	s.begin()
	if !end {
		return s.pipeline(ctx, reqs, res)
	}
	keep := s.keep && s.c.keeps() && s.c.proto.Load().version >= v3
	if !keep {
		s.reqs = append(append(s.reqs[:0], reqs...), closeRequest)
	} else if n := len(reqs); n > 0 && reqs[n-1].Type == codec.RequestGetAutocommit {
		s.reqs = append(s.reqs[:0], reqs...)
	} else {
		s.reqs = append(append(s.reqs[:0], reqs...), getAutocommit)
	}
	err := s.pipeline(ctx, s.reqs, res)
	if keep && s.c.proto.Load().version < v3 && !needsV3(reqs) && isResend(err) {
		// This request found the server speaking Hrana 2, which has no
		// get_autocommit, and ran nothing: send it as Hrana 2 has it.
		keep = false
		s.reqs = append(append(s.reqs[:0], reqs...), closeRequest)
		err = s.pipeline(ctx, s.reqs, res)
	}
	clear(s.reqs) // drop references to the caller's statements
	switch {
	case err != nil:
		s.abandon()
	case keep && s.Open() && autocommitAfter(&res.Pipeline):
		s.idleSince = time.Now()
		return nil
	case keep:
		s.Reset() // a transaction is open (a batch or a COMMIT failed half-way): roll it back
	}
	s.forget()
	return err
}

// begin readies s for a request: a kept stream idle too long is dropped
// (the server is about to expire it; nothing but settings lived on it, and
// the session replays those), and the stream is no longer idle.
func (s *stream) begin() {
	if !s.Open() {
		s.forget()
	}
	s.idleSince = time.Time{}
}

// detach hands s's server stream, if open, to a new stream (which does not
// keep it) and forgets it: s starts a new one with its next request.
func (s *stream) detach() *stream {
	own := s.c.newStream()
	if s.Open() {
		own.baton, own.baseURL = s.baton, s.baseURL
	}
	s.forget()
	return own
}

// abandon forgets the stream after a failed request that ended a unit of
// work, and closes it on the server in the background, within
// cleanupTimeout: the failure is the caller's answer, which the close must
// not delay (a server that does not answer would hold it for the whole
// timeout), and a stream that may hold a transaction (a COMMIT whose answer
// was lost) must not keep its lock until it expires.
func (s *stream) abandon() {
	if old := s.detach(); old.Open() {
		go old.Reset()
	}
}

// isResend reports whether err says its request never ran and may go
// again.
func isResend(err error) bool {
	var e *transport.Error
	return errors.As(err, &e) && e.Resend
}

// autocommitAfter reports whether the last result of resp, a
// get_autocommit's, says that no transaction is open.
func autocommitAfter(resp *codec.PipelineResponse) bool {
	n := len(resp.Results)
	if n == 0 {
		return false
	}
	r := &resp.Results[n-1]
	return r.OK && r.Response.Type == codec.RequestGetAutocommit && r.Response.IsAutocommit
}

func (s *stream) pipeline(ctx context.Context, reqs []codec.StreamRequest, res *transport.Response) error {
	c := s.c
	w := c.proto.Load()
	fresh := !s.Open()
	err := s.pipelineOn(ctx, w, reqs, res)
	if err == nil || !fresh || !isStatus(err, http.StatusNotFound) {
		return err
	}
	return c.learn(w, err, func(next *protocol) error {
		if next.version == v2 && needsV3(reqs) {
			// Built for Hrana 3: find out whether the server speaks 2,
			// and if so have the request built again.
			var probe transport.Response
			if err := s.pipelineOn(ctx, next, []codec.StreamRequest{closeRequest}, &probe); err != nil {
				return err
			}
			c.proto.CompareAndSwap(w, next)
			return &transport.Error{Safe: true, Resend: true,
				Message: "the server speaks Hrana 2, which the request was not built for (POST /v3/pipeline answered 404); it did not run"}
		}
		return s.pipelineOn(ctx, next, reqs, res)
	})
}

// needsV3 reports whether reqs use what Hrana 2 lacks: get_autocommit, or
// an is_autocommit condition.
func needsV3(reqs []codec.StreamRequest) bool {
	for i := range reqs {
		switch r := &reqs[i]; r.Type {
		case codec.RequestGetAutocommit:
			return true
		case codec.RequestBatch:
			for j := range r.Batch.Steps {
				if r.Batch.Steps[j].Condition != nil && condNeedsV3(r.Batch.Steps[j].Condition) {
					return true
				}
			}
		}
	}
	return false
}

func condNeedsV3(c *codec.BatchCond) bool {
	if c.Type == codec.CondIsAutocommit {
		return true
	}
	if c.Cond != nil && condNeedsV3(c.Cond) {
		return true
	}
	for i := range c.Conds {
		if condNeedsV3(&c.Conds[i]) {
			return true
		}
	}
	return false
}

// pipelineOn is pipeline on the wire w.
func (s *stream) pipelineOn(ctx context.Context, w *protocol, reqs []codec.StreamRequest, res *transport.Response) error {
	res.BytesSent, res.BytesReceived = 0, 0
	s.req = codec.PipelineRequest{Baton: s.baton, Requests: reqs}
	var err error
	s.reqBuf, err = w.codec.AppendPipelineRequest(s.reqBuf[:0], &s.req)
	s.req.Requests = nil // the caller's
	if err != nil {
		return err
	}
	endpoint := s.endpoint(w.pipeline)
	res.BytesSent = len(s.reqBuf)
	if answered, err := s.c.post(ctx, w, s.trace, endpoint, s.reqBuf, &res.Body); err != nil {
		if s.baton != "" {
			err = streamGone(err)
		}
		// sqld drops the stream on an HTTP error, except when it refused
		// the request before touching the stream (429): then the stream,
		// and any transaction and lock it holds, lives on until Reset
		// closes it.
		if answered && !isStatus(err, http.StatusTooManyRequests) {
			s.forget()
		}
		return err
	}
	res.BytesReceived = len(res.Body)
	resp := &res.Pipeline
	if err := w.codec.DecodePipelineResponse(res.Body, resp); err != nil {
		s.forget()
		return &transport.Error{Message: "decode failed", Err: err}
	}
	if len(resp.Results) != len(reqs) {
		s.forget()
		return &transport.Error{Message: fmt.Sprintf("server sent %d results for %d requests", len(resp.Results), len(reqs))}
	}
	s.advance(resp.Baton, resp.BaseURL)
	return nil
}

// streamGone words the refusal of a request that carried a baton the
// server no longer knows: sqld says "Received an invalid baton" after a
// restart, STREAM_EXPIRED once the stream has been idle too long, and
// PROTOCOL.md's servers 404 (§4.5). It is the same thing to the user, and
// the server refused the request before running any of it: the error says
// so in plain words, Safe.
func streamGone(err error) error {
	var e *transport.Error
	if !errors.As(err, &e) {
		return err
	}
	gone := e.HTTPStatus == http.StatusNotFound || e.Code == codeStreamExpired ||
		e.HTTPStatus == http.StatusBadRequest && strings.Contains(strings.ToLower(e.Message), "invalid baton")
	if !gone {
		return err
	}
	cp := *e
	cp.Safe, cp.StreamGone = true, true
	cp.Message = "the server no longer has this connection's stream (it restarted, or the stream was idle past its timeout): " +
		"anything open on it (a transaction) is gone, and this request did not run; the server said: " + e.Message
	return &cp
}

// Reset closes the server stream if it is open, ignoring failures (an
// unclosed stream expires on its own within seconds), and forgets it.
func (s *stream) Reset() {
	if !s.Open() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var res transport.Response
	_ = s.pipeline(ctx, []codec.StreamRequest{closeRequest}, &res)
	s.forget()
}

// endpoint returns the URL of path ("/v3/pipeline") for the stream: under
// the base_url the server gave it, or the client's base URL.
func (s *stream) endpoint(path string) string {
	if s.baseURL != "" {
		return s.baseURL + path
	}
	return s.c.base + path
}
