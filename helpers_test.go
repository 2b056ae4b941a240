package libsql_test

// Helpers for the fake_*_test.go files: black-box tests of the driver's
// wire behaviour against internal/fakesqld, a scripted fake sqld.

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
	"github.com/gohrana/libsql/transport"
)

// The transports the fake serves. A test whose behaviour is meant to be
// the same on both runs once per transport (forTransports) on a fake from
// newFake; the script is the HTTP one, which fakesqld.NewWS maps onto
// WebSocket requests.
const (
	overHTTP = "http"
	overWS   = "ws"
)

// forTransports runs f as a parallel subtest per transport.
func forTransports(t *testing.T, f func(t *testing.T, tp string)) {
	t.Helper()
	for _, tp := range []string{overHTTP, overWS} {
		t.Run(tp, func(t *testing.T) {
			t.Parallel()
			f(t, tp)
		})
	}
}

// newFake starts a fake that serves the script over the transport tp; a
// DB opened on its URL speaks that transport.
func newFake(t *testing.T, tp string, script ...fs.Exchange) *fs.Server {
	t.Helper()
	if tp == overWS {
		return fs.NewWS(t, script...)
	}
	return fs.New(t, script...)
}

// httpOnly skips a subtest over WebSocket, saying why.
func httpOnly(t *testing.T, tp, why string) {
	t.Helper()
	if tp == overWS {
		t.Skip("HTTP only: " + why)
	}
}

// refusedURL is fakesqld.RefusedURL for the transport tp.
func refusedURL(t *testing.T, tp string) string {
	u := fs.RefusedURL(t)
	if tp == overWS {
		u = "ws" + strings.TrimPrefix(u, "http")
	}
	return u
}

// roundTrips is the number of exchanges of the script the client reached:
// on HTTP its pipeline requests, on WebSocket the bursts of stream
// requests (open_stream, close_stream and hello aside).
func roundTrips(srv *fs.Server) int {
	seen := map[int]bool{}
	for _, r := range srv.Requests() {
		if r.Exchange >= 0 && r.Path != "/v3" {
			seen[r.Exchange] = true
		}
	}
	return len(seen)
}

// openDB opens a database on the fake server with DSN parameters (for
// example "deferredExec=1"); it is closed when the test ends, before the
// server checks its script.
func openDB(t *testing.T, srv *fs.Server, params string) *sql.DB {
	t.Helper()
	return openURL(t, srv.URL, params)
}

// openURL opens a DB on the fake at url with the DSN params. The fake
// speaks JSON: the codec is direct unless params name one.
func openURL(t *testing.T, url, params string) *sql.DB {
	t.Helper()
	if !strings.Contains(params, "codec=") {
		params = strings.TrimPrefix(params+"&codec=direct", "&")
	}
	if !strings.Contains(params, "keepStreams=") {
		// The scripts give every statement a stream of its own, closed
		// with it; the kept streams of the default have tests of their
		// own (fake_keep_test.go), and itest runs on them throughout.
		params += "&keepStreams=0"
	}
	dsn := url + "?" + params
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// begin is the first statement of a transaction: BEGIN and the statement
// in one batch, the statement guarded by BEGIN's success, on a new stream.
func begin(baton string, st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline("", beginBatch(st)).Respond(baton, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(res)))
}

func beginBatch(st fs.Stmt) fs.Req {
	return fs.Batch(fs.Step(fs.SQL("BEGIN")), fs.Step(st).If(fs.OK(0)))
}

// inTx is a later statement of a transaction.
func inTx(baton, next string, st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline(baton, fs.Execute(st)).Respond(next, fs.ExecuteOK(res))
}

// finish is COMMIT or ROLLBACK with the stream's close.
func finish(baton, sql string) fs.Exchange {
	return fs.Pipeline(baton, fs.Execute(fs.SQL(sql)), fs.Close()).Respond("", fs.ExecuteOK(fs.Empty()), fs.CloseOK())
}

// auto is an autocommit statement: execute and close on a new stream.
func auto(st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline("", fs.Execute(st), fs.Close()).Respond("", fs.ExecuteOK(res), fs.CloseOK())
}

// closeStream is the close of a stream the driver gives up.
func closeStream(baton string) fs.Exchange {
	return fs.Pipeline(baton, fs.Close()).Respond("", fs.CloseOK())
}

// prepared is the describe with which Prepare checks a statement that has
// parameters of the given names ("" for an anonymous ?).
func prepared(sql string, readOnly bool, names ...string) fs.Exchange {
	return fs.Pipeline("", fs.Describe(sql), fs.Close()).Respond("", fs.DescribeParamsOK(readOnly, names...), fs.CloseOK())
}

// preparedInTx is prepared inside a transaction that has begun on the
// stream baton: over HTTP on a stream of its own, over WebSocket on the
// transaction's stream (transport.Stream.Isolated).
func preparedInTx(tp, baton, sql string, readOnly bool, names ...string) fs.Exchange {
	if tp == overWS {
		return fs.Pipeline(baton, fs.Describe(sql)).Respond(baton, fs.DescribeParamsOK(readOnly, names...))
	}
	return prepared(sql, readOnly, names...)
}

// describe is the driver's describe of a statement, on a stream of its own.
func describe(sql string, readOnly bool) fs.Exchange {
	return fs.Pipeline("", fs.Describe(sql), fs.Close()).Respond("", fs.DescribeOK(readOnly), fs.CloseOK())
}

// asError returns err as a *libsql.Error, failing the test if it is not one.
func asError(t *testing.T, err error) *libsql.Error {
	t.Helper()
	var e *libsql.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *libsql.Error", err, err)
	}
	return e
}

// wantErr checks that err matches every class in is, none in isNot, and
// mentions every string in has.
func wantErr(t *testing.T, err error, is, isNot []error, has ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one matching %v", is)
	}
	var internal *transport.Error
	if errors.As(err, &internal) {
		t.Errorf("error %q carries the transport's error type: the driver reports *libsql.Error", err)
	}
	for _, c := range is {
		if !errors.Is(err, c) {
			t.Errorf("error %q does not match %v", err, c)
		}
	}
	for _, c := range isNot {
		if errors.Is(err, c) {
			t.Errorf("error %q matches %v", err, c)
		}
	}
	for _, s := range has {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func errs(e ...error) []error { return e }

var bg = context.Background()

// setURL points cfg at the fake at url, over WebSocket for a ws:// one
// (Config.URL is http:// with Transport ws).
func setURL(cfg *libsql.Config, url string) {
	cfg.URL = url
	if rest, ok := strings.CutPrefix(url, "ws"); ok {
		cfg.URL, cfg.Transport = "http"+rest, libsql.TransportWS
	}
}

// fakeConfig is libsql.NewConfig for the fake, which speaks JSON: the
// codec is direct; streams are not kept (see openURL).
func fakeConfig() *libsql.Config {
	cfg := libsql.NewConfig()
	cfg.Codec = "direct"
	cfg.DisableKeptStreams = true // as openURL's keepStreams=0
	return cfg
}
