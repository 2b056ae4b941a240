package itest

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/testmatrix"
	"github.com/gohrana/libsql/transport"
)

// transportErrResponseTooLarge is the transport's error for a body over
// its limit.
var transportErrResponseTooLarge = transport.ErrResponseTooLarge

// garbageProxy is an HTTP reverse proxy to a real sqld that, while a mode is
// set, answers POST requests (pipelines and cursors) itself with whatever
// the mode does: garbage from the network path. GET requests (the driver's
// version probe) always go through.
type garbageProxy struct {
	url    string
	target *url.URL
	rp     *httputil.ReverseProxy
	mode   atomic.Pointer[garbageMode]
	served atomic.Int64 // POSTs answered by a mode, but for cleanups
	// cleanups counts the POSTs answered by a mode that only close a
	// stream: the driver closes a failed request's stream in the
	// background, which is no retry of the request.
	cleanups atomic.Int64
	quit     chan struct{} // closed when the test ends: silent handlers return
}

// garbageMode answers a POST instead of sqld. If path is set, only POSTs
// to paths ending in it are answered; the rest go through.
type garbageMode struct {
	path  string
	serve func(p *garbageProxy, w http.ResponseWriter, r *http.Request)
}

func garbageStartProxy(t testing.TB, target string) *garbageProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &garbageProxy{target: u, quit: make(chan struct{})}
	p.rp = httputil.NewSingleHostReverseProxy(u)
	// A fresh connection to sqld per request: after some errors (the 500 for
	// invalid UTF-8) sqld closes its end, and a proxy reusing that connection
	// for the next POST would answer 502 on its own.
	p.rp.Transport = &http.Transport{DisableKeepAlives: true}
	p.rp.FlushInterval = -1
	p.rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewUnstartedServer(p)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)                // runs second: waits for handlers
	t.Cleanup(func() { close(p.quit) }) // runs first: releases silent handlers
	p.url = srv.URL
	return p
}

func (p *garbageProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m := p.mode.Load(); m != nil && r.Method == http.MethodPost && (m.path == "" || strings.HasSuffix(r.URL.Path, m.path)) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if onlyClose(r.URL.Path, body) {
			p.cleanups.Add(1)
		} else {
			p.served.Add(1)
		}
		m.serve(p, w, r)
		return
	}
	p.rp.ServeHTTP(w, r)
}

// onlyClose reports whether body, POSTed to path, is a pipeline that only
// closes a stream.
func onlyClose(path string, body []byte) bool {
	if !strings.Contains(path, "protobuf") {
		var js struct{ Requests []struct{ Type string } }
		return json.Unmarshal(body, &js) == nil && len(js.Requests) == 1 && js.Requests[0].Type == "close"
	}
	// PipelineReqBody: the baton (field 1), then the requests: compare
	// with the close-only request on that baton, as the codec writes it.
	req := codec.PipelineRequest{Requests: []codec.StreamRequest{{Type: codec.RequestClose}}}
	if len(body) > 0 && body[0] == 0x0a {
		n, k := binary.Uvarint(body[1:])
		if k <= 0 || uint64(len(body)) < 1+uint64(k)+n {
			return false
		}
		req.Baton = string(body[1+k : 1+uint64(k)+n])
	}
	want, err := protobuf.Codec.AppendPipelineRequest(nil, &req)
	return err == nil && bytes.Equal(body, want)
}

// set makes the proxy answer with m (nil: pass everything through).
func (p *garbageProxy) set(m *garbageMode) { p.mode.Store(m) }

// forward sends r to sqld and returns its response.
func (p *garbageProxy) forward(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	p.rp.ServeHTTP(rec, r)
	return rec
}

// wait blocks until the client goes away or the test ends.
func (p *garbageProxy) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-p.quit:
	}
}

// garbageReply answers with a status, content type and body.
func garbageReply(status int, contentType, body string) *garbageMode {
	return &garbageMode{serve: func(_ *garbageProxy, w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}}
}

// garbageRaw hijacks the connection, writes raw bytes and closes it. With
// forward set, the request first goes to sqld and raw gets its response
// body.
func garbageRaw(forward bool, raw func(body []byte) string) *garbageMode {
	return &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
		var body []byte
		if forward {
			body = p.forward(r).Body.Bytes()
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		conn, bufrw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		_, _ = bufrw.WriteString(raw(body))
		_ = bufrw.Flush()
	}}
}

// garbageChunked is the head of a 200 JSON response with chunked encoding.
const garbageChunked = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"

// garbageSilence answers with headers (and the first half of sqld's real
// body, if half is set) and then nothing, until the client gives up.
func garbageSilence(headers, half bool) *garbageMode {
	return &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
		if headers {
			var body []byte
			if half {
				body = p.forward(r).Body.Bytes()
				body = body[:len(body)/2]
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body)
			_ = http.NewResponseController(w).Flush()
		}
		p.wait(r)
	}}
}

// garbageCase is one kind of garbage and what the driver must make of it.
type garbageCase struct {
	name string
	mode *garbageMode
	// forwards: the request reached sqld (it may have run).
	forwards bool
	// status is the *libsql.Error's HTTPStatus (0: no HTTP status).
	status int
	// is, if set, must be in the error chain (errors.Is).
	is error
	// words must appear in the error text (case-insensitive).
	words []string
	// ctxTimeout bounds each call with a context deadline; dsnTimeout
	// uses a *sql.DB with the DSN parameter timeout= instead. The call
	// must return within the bound plus garbageSlack.
	ctxTimeout, dsnTimeout time.Duration
	// transportOnly: the body is never decoded, so the codec does not
	// matter; run with the first codec only.
	transportOnly bool
}

// garbageSlack is how much longer than its deadline a call may take to
// return on this shared machine.
const garbageSlack = 5 * time.Second

// garbageDSNTimeout is the DSN timeout of the silence cases.
const garbageDSNTimeout = 300 * time.Millisecond

func garbageCases(other string, variant testmatrix.Variant) []garbageCase {
	// The bodies that are valid HTTP but the wrong answer, in the codec's
	// encoding. An empty body is a Protobuf message with no results.
	emptyWords, wrongShape := []string{"decode"}, `{"baton":null,"results":"nope"}`
	if isProtobuf(variant) {
		emptyWords, wrongShape = []string{"results for"}, "\x1a\x01\xff" // results: a truncated message
	}
	ctype, noResults, err := wireEncode(variant, `{"baton":null,"base_url":null,"results":[]}`)
	if err != nil {
		panic(err)
	}
	const html502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
	return []garbageCase{
		{name: "html_502_page", mode: garbageReply(http.StatusBadGateway, "text/html", html502),
			status: http.StatusBadGateway, words: []string{"Bad Gateway"}},
		{name: "html_200_captive_portal", mode: garbageReply(http.StatusOK, "text/html", "<!DOCTYPE html><html><body>Please log in to the Wi-Fi</body></html>"),
			words: []string{"decode", "cannot decode response"}},
		{name: "empty_200", mode: garbageReply(http.StatusOK, ctype, ""),
			words: emptyWords},
		{name: "body_of_the_wrong_shape", mode: garbageReply(http.StatusOK, ctype, wrongShape),
			words: []string{"decode"}},
		{name: "gzip_body_not_asked_for", mode: &garbageMode{serve: func(_ *garbageProxy, w http.ResponseWriter, _ *http.Request) {
			// The driver asks loopback servers for identity; a gzip body
			// must not pass as JSON.
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, `{"baton":null,"base_url":null,"results":[]}`)
			_ = zw.Close()
		}}, words: []string{"decode"}},
		{name: "too_few_results", mode: garbageReply(http.StatusOK, ctype, string(noResults)),
			words: []string{"results for"}},
		{name: "redirect_not_followed", mode: &garbageMode{serve: func(_ *garbageProxy, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
		}}, status: http.StatusTemporaryRedirect, words: []string{"Temporary Redirect"}},
		{name: "truncated_chunked_body", mode: garbageRaw(false, func([]byte) string {
			return garbageChunked + "100\r\n{\"baton\":null,\"base_url\":null,\"results\":[{\"type\":\"ok\",\"respo"
		}), is: io.ErrUnexpectedEOF, words: []string{"read failed", "unexpected EOF"}},
		{name: "real_body_cut_in_half_chunked", forwards: true, mode: garbageRaw(true, func(b []byte) string {
			b = b[:len(b)/2]
			return garbageChunked + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + string(b) + "\r\n"
		}), is: io.ErrUnexpectedEOF, words: []string{"unexpected EOF"}},
		{name: "real_body_without_final_chunk", forwards: true, mode: garbageRaw(true, func(b []byte) string {
			// The JSON is complete; only the chunked terminator is missing.
			return garbageChunked + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + string(b) + "\r\n"
		}), is: io.ErrUnexpectedEOF, words: []string{"unexpected EOF"}},
		{name: "short_content_length", forwards: true, mode: garbageRaw(true, func(b []byte) string {
			return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b)+100, b)
		}), is: io.ErrUnexpectedEOF, words: []string{"unexpected EOF"}},
		{name: "connection_closed_without_response", mode: garbageRaw(false, func([]byte) string { return "" }),
			is: io.EOF, words: []string{"EOF"}},
		{name: "not_http_at_all", mode: garbageRaw(false, func([]byte) string { return "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" }),
			words: []string{"malformed HTTP"}},
		{name: "no_headers_ctx_deadline", mode: garbageSilence(false, false),
			is: context.DeadlineExceeded, ctxTimeout: 400 * time.Millisecond, transportOnly: true},
		{name: "headers_then_silence_ctx_deadline", mode: garbageSilence(true, false),
			is: context.DeadlineExceeded, ctxTimeout: 400 * time.Millisecond, transportOnly: true},
		{name: "headers_then_silence_dsn_timeout", mode: garbageSilence(true, false),
			is: context.DeadlineExceeded, dsnTimeout: garbageDSNTimeout, transportOnly: true},
		{name: "half_body_then_silence_dsn_timeout", forwards: true, mode: garbageSilence(true, true),
			is: context.DeadlineExceeded, dsnTimeout: garbageDSNTimeout, transportOnly: true},
	}
}

// TestGarbage puts a proxy in front of a sqld of its own that answers
// pipeline requests with garbage: an HTML 502 page, HTML where JSON belongs,
// truncated bodies (chunked and with a short Content-Length), a redirect,
// a closed connection, bytes that are not HTTP, and headers followed by
// silence. Each must become a clear *libsql.Error for autocommit calls and
// inside a transaction (which it ends), within its deadline, with exactly
// one request sent (nothing retried) and nothing written; afterwards the
// same pool works against the real server.
func TestGarbage(t *testing.T) {
	srvURL := startServer(t)
	p := garbageStartProxy(t, srvURL)
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		http.Error(w, "the redirect was followed", http.StatusTeapot)
	}))
	t.Cleanup(other.Close)

	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			open := func(params string) *sql.DB {
				db, err := sql.Open("libsql", p.url+"?codec="+variant.Codec+params)
				require.NoError(t, err)
				t.Cleanup(func() { _ = db.Close() })
				return db
			}
			db := open("")
			dbT := open("&timeout=" + garbageDSNTimeout.String())
			table := freshTable(t, db, "garbage", "(id INTEGER PRIMARY KEY, v TEXT)")
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('seed')")

			for _, gc := range garbageCases(other.URL, variant) {
				if gc.transportOnly && variant != httpVariants[0] {
					continue
				}
				t.Run(gc.name, func(t *testing.T) {
					t.Cleanup(func() { p.set(nil) })
					use, bound := db, 20*time.Second
					if gc.dsnTimeout > 0 {
						use, bound = dbT, gc.dsnTimeout
					}
					if gc.ctxTimeout > 0 {
						bound = gc.ctxTimeout
					}
					call := func(what string, fn func(ctx context.Context) error) error {
						t.Helper()
						ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
						if gc.ctxTimeout > 0 {
							ctx, cancel = context.WithTimeout(t.Context(), gc.ctxTimeout)
						}
						defer cancel()
						before := p.served.Load()
						start := time.Now()
						err := fn(ctx)
						took := time.Since(start)
						garbageCheck(t, gc, what, err)
						require.Less(t, took, bound+garbageSlack, "%s: returned after %v", what, took)
						require.Equal(t, int64(1), p.served.Load()-before, "%s: exactly one request (no retry)", what)
						return err
					}
					before := countRows(t, db, table)

					p.set(gc.mode)
					call("exec", func(ctx context.Context) error {
						_, err := use.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('garbage')")
						return err
					})
					call("query", func(ctx context.Context) error {
						rows, err := use.QueryContext(ctx, "SELECT id, v FROM "+table)
						if err == nil {
							rows.Close()
						}
						return err
					})
					call("ping", func(ctx context.Context) error { return use.PingContext(ctx) })

					// Inside a transaction: the first statement goes through,
					// the second meets the garbage and ends the transaction.
					// Both only read: where the garbage comes after sqld ran
					// the statement, the orphaned server stream holds no
					// write lock while it waits for its expiry.
					p.set(nil)
					tx, err := use.BeginTx(t.Context(), nil)
					require.NoError(t, err)
					var n int64
					require.NoError(t, tx.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
					p.set(gc.mode)
					err = call("tx_exec", func(ctx context.Context) error {
						_, err := tx.ExecContext(ctx, "SELECT count(*) FROM "+table)
						return err
					})
					require.True(t, errors.Is(err, libsql.ErrTxLost), "tx_exec: the transaction is lost: %v", err)
					p.set(nil)
					_, err = tx.ExecContext(t.Context(), "SELECT 1")
					require.True(t, errors.Is(err, libsql.ErrTxLost), "later statements say so: %v", err)
					require.Error(t, tx.Commit(), "COMMIT of a lost transaction fails")

					// The pool works against the real server again.
					garbageRequireHealthy(t, db, table)
					garbageRequireHealthy(t, dbT, table)
					if !gc.forwards {
						require.Equal(t, before+2, countRows(t, db, table), "only the health checks wrote")
					}
					require.Zero(t, otherHits.Load(), "no request reached the redirect's target")
				})
			}
		})
	}
}

// garbageCheck checks the error of one call for a garbage case.
func garbageCheck(t *testing.T, gc garbageCase, what string, err error) {
	t.Helper()
	require.Error(t, err, "%s: garbage must not pass as a result", what)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "%s: want a *libsql.Error, got %T: %v", what, err, err)
	require.Equal(t, gc.status, le.HTTPStatus, "%s: HTTP status of %v", what, err)
	if gc.is != nil {
		require.True(t, errors.Is(err, gc.is), "%s: want %v in the chain of %v", what, gc.is, err)
	}
	for _, w := range gc.words {
		require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(w), "%s: message", what)
	}
	require.False(t, le.SafeToRetry(), "%s: the request reached the other side; it is not known to have had no effect: %v", what, err)
	for _, c := range relClasses {
		require.False(t, errors.Is(err, c.err), "%s: garbage is not %s: %v", what, c.name, err)
	}
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, "libsql: "), "%s: %q", what, msg)
	require.NotContains(t, msg, "<html", "%s: no HTML in the message", what)
	require.Less(t, len(msg), 600, "%s: a readable message: %q", what, msg)
	t.Logf("%s: %v", what, err)
}

// garbageRequireHealthy checks that db works: ping, a write, a read and a
// transaction.
func garbageRequireHealthy(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	require.NoError(t, db.PingContext(ctx))
	_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('healthy')")
	require.NoError(t, err)
	var n int64
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
	require.Positive(t, n)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "SELECT count(*) FROM "+table)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
}

// garbageBodyShape is a server error body and the *libsql.Error it must
// become.
type garbageBodyShape struct {
	name        string
	status      int
	contentType string
	body        string
	code        string // want Code
	message     string // want Message, exactly
	class       error  // the one errors.Is class (nil: none)
	safe        bool   // want Safe
}

// garbageShapes are the three error body shapes of sqld (text/plain
// protocol errors, Hrana {"message","code"}, and {"error"}), byte for byte as
// sqld 0.24.32 sends them, plus bodies that fit none of them.
var garbageShapes = []garbageBodyShape{
	{name: "text_plain_baton_reused", status: 400, contentType: "text/plain; charset=utf-8",
		body: "Received a baton that has already been used", message: "Received a baton that has already been used"},
	{name: "text_plain_invalid_baton", status: 400, contentType: "text/plain; charset=utf-8",
		body: "Received an invalid baton", message: "Received an invalid baton"},
	// sqld finds the stream of a baton gone before it runs anything.
	{name: "hrana_stream_expired", status: 400, contentType: "application/json",
		body: `{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}`,
		code: "STREAM_EXPIRED", message: "The stream has expired due to inactivity", safe: true},
	{name: "error_401", status: 401, contentType: "application/json",
		body: "{\"error\":\"Unauthorized: `The JWT is invalid`\"}", message: "The JWT is invalid", class: libsql.ErrAuth},
	{name: "error_403", status: 403, contentType: "application/json",
		body:    `{"error":"Authorization forbidden: Current session doesn't not have Write permission to namespace default"}`,
		message: "Authorization forbidden: Current session doesn't not have Write permission to namespace default", class: libsql.ErrPermission},
	{name: "error_404_namespace", status: 404, contentType: "application/json",
		body: "{\"error\":\"Namespace `nosuch` doesn't exist\"}", message: "Namespace `nosuch` doesn't exist", class: libsql.ErrNotFound, safe: true}, // a 404 ran nothing (PROTOCOL.md §9.3)
	{name: "error_429", status: 429, contentType: "application/json",
		body: `{"error":"Too many concurrent requests"}`, message: "Too many concurrent requests", class: libsql.ErrTooManyRequests, safe: true},
	{name: "error_503", status: 503, contentType: "application/json",
		body: `{"error":"Replicator exited"}`, message: "Replicator exited", class: libsql.ErrTooManyRequests},
	{name: "error_500", status: 500, contentType: "application/json",
		body: `{"error":"Internal Error: ` + "`invalid utf-8 sequence`" + `"}`, message: "Internal Error: `invalid utf-8 sequence`"},
	{name: "json_charset_param", status: 400, contentType: "application/json; charset=utf-8",
		body: `{"message":"The stream has expired due to inactivity","code":"STREAM_EXPIRED"}`,
		code: "STREAM_EXPIRED", message: "The stream has expired due to inactivity", safe: true},
	{name: "json_of_no_known_shape", status: 400, contentType: "application/json",
		body: `{"detail":"something"}`, message: "Bad Request"},
	{name: "invalid_json", status: 500, contentType: "application/json",
		body: `{"error":`, message: "Internal Server Error"},
	{name: "empty_404", status: 404, message: "Not Found", class: libsql.ErrNotFound, safe: true},
	{name: "long_text_plain", status: 400, contentType: "text/plain",
		body: strings.Repeat("x", 3000), message: strings.Repeat("x", 1024) + "..."},
}

// TestGarbageErrorBodies checks that server error bodies in sqld's three
// shapes become typed *libsql.Error values with HTTPStatus, Code and the
// server's message: produced by the real sqld where that is possible (a
// tampered or replayed baton gives text/plain; an expired stream gives
// {"message","code"}; invalid UTF-8 gives a 500 {"error"}; a wrong path an
// empty 404; 401 and 403 are in TestAuth), and byte for byte by a fake for
// the rest.
//
// It runs in parallel with the package's other parallel tests: most of it
// is waiting for the stream to expire.
func TestGarbageErrorBodies(t *testing.T) {
	t.Parallel()
	srvURL := startServer(t)
	p := garbageStartProxy(t, srvURL)

	// Real STREAM_EXPIRED (JSON or Protobuf, by the route): start a
	// transaction per codec now, touch it again after the other cases, once
	// sqld's 10 s stream expiry has passed.
	expDB, expTx := map[testmatrix.Variant]*sql.DB{}, map[testmatrix.Variant]*sql.Tx{}
	for _, c := range httpVariants {
		db, err := sql.Open("libsql", p.url+"?codec="+c.Codec)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		tx, err := db.BeginTx(t.Context(), nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(t.Context(), "SELECT 1")
		require.NoError(t, err)
		expDB[c], expTx[c] = db, tx
	}
	expStart := time.Now()

	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			db, err := sql.Open("libsql", p.url+"?codec="+variant.Codec)
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()

			for _, s := range garbageShapes {
				t.Run("fake/"+s.name, func(t *testing.T) {
					p.set(garbageReply(s.status, s.contentType, s.body))
					defer p.set(nil)
					_, err := db.ExecContext(ctx, "SELECT 1")
					le := relRequireHTTPError(t, err, s.status, s.class)
					require.Equal(t, s.code, le.Code, "code of %v", err)
					// The server's words first; a 404 to Protobuf adds a hint.
					require.True(t, strings.HasPrefix(le.Message, s.message), "message of %v", err)
					require.Equal(t, s.safe, le.SafeToRetry(), "Safe of %v", err)
					require.Contains(t, err.Error(), s.message)
					if s.code != "" {
						require.Contains(t, err.Error(), s.code)
					}
					require.NotErrorIs(t, le, libsql.ErrTxLost)
					require.NoError(t, func() error { p.set(nil); return db.PingContext(ctx) }())
				})
			}

			t.Run("real/text_plain_invalid_baton", func(t *testing.T) {
				// A proxy that garbles the baton: sqld answers 400 text/plain.
				p.set(&garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
					garbageRewriteBaton(r, variant, func(string) string { return strings.Repeat("A", 64) })
					p.rp.ServeHTTP(w, r)
				}})
				defer p.set(nil)
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "SELECT 1") // baton null: untouched
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "SELECT 2")
				le := relRequireHTTPError(t, err, 400, nil, "Received an invalid baton")
				// The stream is gone, in plain words, and the server's (§4.5).
				require.Contains(t, le.Message, "the server no longer has this connection's stream")
				require.Contains(t, le.Message, "Received an invalid baton")
				require.True(t, le.SafeToRetry(), "the statement did not run")
				require.Empty(t, le.Code)
				require.True(t, errors.Is(err, libsql.ErrTxLost), "%v", err)
				require.Error(t, tx.Commit())
			})

			t.Run("real/text_plain_baton_reused", func(t *testing.T) {
				// A proxy that replays a request: sqld answers the second
				// copy with 400 text/plain.
				p.set(&garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if pipelineBaton(variant, body) == "" {
						p.rp.ServeHTTP(w, r)
						return
					}
					p.forward(r)
					r2 := r.Clone(r.Context())
					r2.Body = io.NopCloser(bytes.NewReader(body))
					p.rp.ServeHTTP(w, r2)
				}})
				defer p.set(nil)
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "SELECT 1")
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "SELECT 2")
				le := relRequireHTTPError(t, err, 400, nil, "already been used")
				require.Equal(t, "Received a baton that has already been used", le.Message)
				require.True(t, errors.Is(err, libsql.ErrTxLost), "%v", err)
				require.NoError(t, tx.Rollback())
			})

			t.Run("real/error_500_invalid_utf8", func(t *testing.T) {
				_, err := db.ExecContext(ctx, "SELECT CAST(x'ff' AS TEXT)")
				le := relRequireHTTPError(t, err, 500, nil)
				require.NotEmpty(t, le.Message)
				require.NotEqual(t, "Internal Server Error", le.Message, "the server's own message: %v", err)
				require.Empty(t, le.Code)
				t.Logf("%v", err)
			})

			t.Run("real/empty_404_wrong_path", func(t *testing.T) {
				bad, err := sql.Open("libsql", p.url+"/no/such/path?codec="+variant.Codec)
				require.NoError(t, err)
				defer bad.Close()
				_, err = bad.ExecContext(ctx, "SELECT 1")
				le := relRequireHTTPError(t, err, 404, libsql.ErrNotFound)
				if isProtobuf(variant) {
					// The first request's 404 says what it may mean.
					require.Contains(t, le.Message, "may not speak Hrana 3 over Protobuf")
				} else {
					require.Equal(t, "Not Found", le.Message)
				}
			})
			require.NoError(t, db.PingContext(ctx))
		})
	}

	// sqld expires an idle stream after 10 s, rounded up to a whole
	// second: 10-11 s.
	if d := 11500*time.Millisecond - time.Since(expStart); d > 0 {
		time.Sleep(d)
	}
	for _, c := range httpVariants {
		t.Run(c.Name+"/real/hrana_stream_expired", func(t *testing.T) {
			_, err := expTx[c].ExecContext(t.Context(), "SELECT 2")
			le := relRequireHTTPError(t, err, 400, nil)
			require.Equal(t, "STREAM_EXPIRED", le.Code, "%v", err)
			require.Contains(t, le.Message, "the server no longer has this connection's stream")
			require.Contains(t, le.Message, "The stream has expired due to inactivity")
			require.True(t, le.SafeToRetry(), "the statement did not run")
			require.True(t, errors.Is(err, libsql.ErrTxLost), "%v", err)
			require.Error(t, expTx[c].Commit())
			require.NoError(t, expDB[c].PingContext(t.Context()))
		})
	}
}

// garbageRewriteBaton changes the baton of a pipeline request in the
// codec's encoding, if it has one.
func garbageRewriteBaton(r *http.Request, variant testmatrix.Variant, fn func(string) string) {
	body, _ := io.ReadAll(r.Body)
	_, body = rewriteBaton(variant, body, fn)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
}

// garbageRewriteJSONBaton is rewriteBaton for a JSON body.
func garbageRewriteJSONBaton(body []byte, fn func(string) string) (string, []byte) {
	var m map[string]json.RawMessage
	var baton string
	if json.Unmarshal(body, &m) == nil && json.Unmarshal(m["baton"], &baton) == nil && baton != "" && fn != nil {
		nb, _ := json.Marshal(fn(baton))
		m["baton"] = nb
		body, _ = json.Marshal(m)
	}
	return baton, body
}

// garbageHugeSize is the size of the bodies of TestGarbageHugeBody: far
// over the driver's 64 MB response limit.
const garbageHugeSize = 300 << 20

// garbageHugeMemBound bounds the memory the child of TestGarbageHugeBody
// takes while the driver meets 300 MB bodies.
const garbageHugeMemBound = 150 << 20

// garbageGenerate writes prefix and then n filler bytes to w (n a multiple
// of 64 KiB), generated as it goes, stopping at the first write error (the
// client gave up) or when the test ends.
func garbageGenerate(w io.Writer, p *garbageProxy, prefix string, n int64, filler byte) {
	chunk := bytes.Repeat([]byte{filler}, 64<<10)
	if _, err := io.WriteString(w, prefix); err != nil {
		return
	}
	for sent := int64(0); sent < n; sent += int64(len(chunk)) {
		select {
		case <-p.quit:
			return
		default:
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// garbageHugePrefix starts a pipeline response whose first value is a
// text that never ends.
const garbageHugePrefix = `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"x","decltype":null}],"rows":[[{"type":"text","value":"`

// garbageOver10MB is a read-only statement whose result (12,000 blobs of
// 1000 bytes) is over sqld's default 10 MB response limit.
const garbageOver10MB = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 12000) SELECT zeroblob(1000) FROM c"

// garbageHugeModes are the 300 MB answers of TestGarbageHugeBody.
func garbageHugeModes() []struct {
	name   string
	mode   *garbageMode
	query  string // the statement to run; "" means SELECT 1
	params string // extra DSN parameters
	check  func(t *testing.T, err error)
} {
	tooLarge := func(t *testing.T, err error) {
		le := requireGarbageErr(t, err)
		require.Zero(t, le.HTTPStatus)
		require.True(t, errors.Is(err, transportErrResponseTooLarge), "want the response-too-large error in the chain of %v", err)
		require.Contains(t, err.Error(), "too large")
		require.Contains(t, err.Error(), "bytes", "the message gives the limit")
		require.False(t, errors.Is(err, context.DeadlineExceeded), "the limit, not the deadline, ended it: %v", err)
	}
	// One gzip member of 1 MiB of filler; members may be concatenated.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(bytes.Repeat([]byte("a"), 1<<20))
	_ = zw.Close()
	member := gz.Bytes()
	var gzPrefix bytes.Buffer
	zw = gzip.NewWriter(&gzPrefix)
	_, _ = io.WriteString(zw, garbageHugePrefix)
	_ = zw.Close()

	return []struct {
		name   string
		mode   *garbageMode
		query  string
		params string
		check  func(t *testing.T, err error)
	}{
		{"chunked_300MB", &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			garbageGenerate(w, p, garbageHugePrefix, garbageHugeSize, 'a')
		}}, "", "", tooLarge},
		{"content_length_300MB", &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(garbageHugePrefix)+garbageHugeSize))
			garbageGenerate(w, p, garbageHugePrefix, garbageHugeSize, 'a')
		}}, "", "", tooLarge},
		// With compression=gzip the driver asks for gzip and net/http
		// inflates the body as it is read.
		{"gzip_bomb_300MB_from_300KB", &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			if _, err := w.Write(gzPrefix.Bytes()); err != nil {
				return
			}
			for i := 0; i < garbageHugeSize>>20; i++ {
				if _, err := w.Write(member); err != nil {
					return
				}
			}
		}}, "", "&compression=gzip", tooLarge},
		{"error_status_300MB_html", &garbageMode{serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			garbageGenerate(w, p, "<html><body><h1>502 Bad Gateway</h1>", garbageHugeSize, ' ')
		}}, "", "", func(t *testing.T, err error) {
			le := requireGarbageErr(t, err)
			require.Equal(t, http.StatusBadGateway, le.HTTPStatus)
			require.Contains(t, err.Error(), "Bad Gateway")
		}},
		{"cursor_line_300MB", &garbageMode{path: "/cursor", serve: func(p *garbageProxy, w http.ResponseWriter, r *http.Request) {
			// The pipeline went to sqld, which refused the 11 MB result
			// (RESPONSE_TOO_LARGE); the driver retries the read-only
			// statement through a cursor, whose second line never ends.
			w.Header().Set("Content-Type", "text/plain")
			garbageGenerate(w, p, `{"baton":null,"base_url":null}`+"\n"+`{"type":"step_begin","step":0,"cols":[{"name":"x","decltype":null}]}`+"\n"+`{"type":"row","row":[{"type":"text","value":"`,
				garbageHugeSize, 'a')
		}}, garbageOver10MB, "", tooLarge},
	}
}

func requireGarbageErr(t *testing.T, err error) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error, got %T: %v", err, err)
	require.True(t, strings.HasPrefix(err.Error(), "libsql: "), "%v", err)
	require.Less(t, len(err.Error()), 600, "a readable message: %v", err)
	return le
}

// TestGarbageHugeBody answers pipeline requests with 300 MB bodies,
// generated as they are sent (chunked, with a Content-Length, as a gzip
// bomb of 300 KB, under an error status) and a cursor with a 300 MB line.
// The driver must fail each with a clear error within the deadline while
// the memory it takes stays far below 300 MB, and the pool must work
// against the real server afterwards. It runs in a child process so that
// runtime.MemStats measures this test alone; the parent runs in parallel
// with the package's other parallel tests.
func TestGarbageHugeBody(t *testing.T) {
	if testing.Short() {
		t.Skip("300 MB bodies skipped in -short mode")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGarbageHugeBodyChild$", "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "LIBSQL_ITEST_URL="+serverURL, "GARBAGE_HUGE_CHILD=1")
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "HUGE ") {
			t.Log(strings.TrimSpace(line))
		}
	}
	if ru, ok := garbageRusage(cmd); ok {
		t.Logf("child max RSS %d MiB (includes the race detector's shadow memory)", ru.Maxrss>>10)
	}
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestGarbageHugeBodyChild", "child:\n%s", out)
}

// TestGarbageHugeBodyChild is the child half of TestGarbageHugeBody; it
// does nothing unless started by it.
func TestGarbageHugeBodyChild(t *testing.T) {
	if os.Getenv("GARBAGE_HUGE_CHILD") == "" {
		t.Skip("run by TestGarbageHugeBody")
	}
	p := garbageStartProxy(t, serverURL)
	for _, hm := range garbageHugeModes() {
		t.Run(hm.name, func(t *testing.T) {
			db, err := sql.Open("libsql", p.url+"?codec=direct"+hm.params)
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.PingContext(t.Context()))
			// Start each case from a clean heap, with the memory of the
			// previous one given back to the OS.
			var base runtime.MemStats
			debug.FreeOSMemory()
			runtime.ReadMemStats(&base)
			// held is the memory the runtime holds from the OS: Sys less
			// what it has given back.
			held := func(ms *runtime.MemStats) uint64 { return ms.Sys - ms.HeapReleased }
			var peakHeap, peakHeld atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				var ms runtime.MemStats
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					runtime.ReadMemStats(&ms)
					peakHeap.Store(max(peakHeap.Load(), ms.HeapInuse))
					peakHeld.Store(max(peakHeld.Load(), held(&ms)))
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			const deadline = 60 * time.Second
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			q := hm.query
			if q == "" {
				q = "SELECT 1"
			}
			before := p.served.Load()
			p.set(hm.mode)
			start := time.Now()
			rows, err := db.QueryContext(ctx, q)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			took := time.Since(start)
			p.set(nil)
			close(stop)
			<-sampled
			hm.check(t, err)
			require.Equal(t, int64(1), p.served.Load()-before, "one garbage answer, no retry")
			require.Less(t, took, deadline, "returned before the deadline")
			heap := int64(peakHeap.Load()) - int64(base.HeapInuse)
			sys := int64(peakHeld.Load()) - int64(held(&base))
			fmt.Printf("HUGE %s: %v after %v; peak heap in use +%.1f MiB, peak memory held from the OS +%.1f MiB\n",
				hm.name, err, took.Round(time.Millisecond), float64(heap)/(1<<20), float64(sys)/(1<<20))
			require.Less(t, heap, int64(garbageHugeMemBound), "peak heap in use")
			require.Less(t, sys, int64(garbageHugeMemBound), "peak memory held from the OS (Sys - HeapReleased)")

			// The pool works against the real server.
			var s string
			require.NoError(t, db.QueryRowContext(ctx, "SELECT 'still works'").Scan(&s))
			require.Equal(t, "still works", s)
			require.NoError(t, db.PingContext(ctx))
		})
	}
}

// garbageRusage returns the resource usage of a finished command.
func garbageRusage(cmd *exec.Cmd) (*syscall.Rusage, bool) {
	if cmd.ProcessState == nil {
		return nil, false
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru, ok
}
