package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

var _ transport.Stream = (*stream)(nil)

// stream is the client side of one server stream over HTTP: its baton and
// base URL. It is not safe for concurrent use; Hrana requires requests on
// a stream to be serial anyway.
type stream struct {
	c       *client
	baton   string
	baseURL string
	reqs    []codec.StreamRequest // the requests plus a close, for Send with end
	req     codec.PipelineRequest // the request being encoded
	reqBuf  []byte
	trace   *sendTrace
}

// closeRequest ends a stream.
var closeRequest = codec.StreamRequest{Type: codec.RequestClose}

// Isolated returns a new stream: requests on it, sent with end, open and
// close a server stream of their own.
func (s *stream) Isolated() transport.Stream { return s.c.newStream() }

// Open reports whether the server holds a stream for s (it has a baton).
func (s *stream) Open() bool { return s.baton != "" }

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
// response into res. With end a close is appended, and the stream is
// forgotten afterwards whatever happened (a stream still open after a
// failure is closed first, so that no transaction is left holding its
// lock until it expires).
//
// On success the stream takes the new baton. After an HTTP error status the
// server has dropped the stream, so s forgets it; after a failure with no
// response s keeps the baton it sent, which is still current if the request
// never reached the server, so that Reset can close the stream.
func (s *stream) Send(ctx context.Context, reqs []codec.StreamRequest, end bool, res *transport.Response) error {
	if end {
		s.reqs = append(append(s.reqs[:0], reqs...), closeRequest)
		reqs = s.reqs
	}
	err := s.pipeline(ctx, reqs, res)
	if end {
		if err != nil {
			s.Reset()
		}
		s.forget()
		clear(s.reqs) // drop references to the caller's statements
	}
	return err
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
	cp.Safe = true
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
