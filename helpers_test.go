package libsql_test

// Helpers shared by the black-box tests (package libsql_test) of the
// root's files, most of them against internal/fakesqld, a scripted fake
// sqld: the transports it serves, databases opened on it, the exchanges
// the driver's calls make, and checks of the errors they return.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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

// Databases and connections on a fake.

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
		// own (autocommit_test.go), and itest runs on them throughout.
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

// fakeConfig is libsql.NewConfig for the fake, which speaks JSON: the
// codec is direct; streams are not kept (see openURL).
func fakeConfig() *libsql.Config {
	cfg := libsql.NewConfig()
	cfg.Codec = "direct"
	cfg.DisableKeptStreams = true // as openURL's keepStreams=0
	return cfg
}

// setURL points cfg at the fake at url, over WebSocket for a ws:// one
// (Config.URL is http:// with Transport ws).
func setURL(cfg *libsql.Config, url string) {
	cfg.URL = url
	if rest, ok := strings.CutPrefix(url, "ws"); ok {
		cfg.URL, cfg.Transport = "http"+rest, libsql.TransportWS
	}
}

// connectorDB opens a database through NewConnector.
func connectorDB(t *testing.T, url string, cfg *libsql.Config, opts ...libsql.ConnectorOption) *sql.DB {
	t.Helper()
	if cfg == nil {
		cfg = fakeConfig()
	}
	cfg.URL = url
	db := sql.OpenDB(mustConnector(t, cfg, opts...))
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// mustConnector is libsql.NewConnector, failing the test on an error.
func mustConnector(t *testing.T, cfg *libsql.Config, opts ...libsql.ConnectorOption) *libsql.Connector {
	t.Helper()
	cn, err := libsql.NewConnector(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cn
}

// driverConn opens a driver.Conn straight from a Connector.
func driverConn(t *testing.T, url string, cfg *libsql.Config) driver.Conn {
	t.Helper()
	if cfg == nil {
		cfg = fakeConfig()
	}
	setURL(cfg, url)
	cn := mustConnector(t, cfg)
	c, err := cn.Connect(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); _ = cn.Close() })
	return c
}

// pinned takes one connection of db for the test; it is closed when the
// test ends, before db (a test may close it sooner).
func pinned(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pinnedTx begins a transaction with opts on a connection of its own of a
// database with the DSN params on a fake over tp that serves the script.
func pinnedTx(t *testing.T, tp, params string, opts *sql.TxOptions, script ...fs.Exchange) (*sql.Conn, *sql.Tx) {
	t.Helper()
	c := pinned(t, openDB(t, newFake(t, tp, script...), params))
	return c, mustBegin(t, c, opts)
}

// execer is what mustExec runs statements on: a *sql.DB, *sql.Conn or
// *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// mustExec runs each query on e in turn, failing the test on an error.
func mustExec(t *testing.T, e execer, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := e.ExecContext(bg, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// beginner is what mustBegin begins a transaction on: a *sql.DB or a
// *sql.Conn.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// mustBegin begins a transaction on b with opts, failing the test on an
// error.
func mustBegin(t *testing.T, b beginner, opts *sql.TxOptions) *sql.Tx {
	t.Helper()
	tx, err := b.BeginTx(bg, opts)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return tx
}

// mustCommit commits tx (a *sql.Tx, or the driver's own), failing the
// test on an error.
func mustCommit(t *testing.T, tx driver.Tx) {
	t.Helper()
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// mustRollback rolls tx (a *sql.Tx, or the driver's own) back, failing
// the test on an error.
func mustRollback(t *testing.T, tx driver.Tx) {
	t.Helper()
	if err := tx.Rollback(); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
}

// secondFails begins a transaction on db and runs first in it, which must
// succeed, then second, which must fail matching every class in is and
// mentioning has; the transaction must then roll back without error.
func secondFails(t *testing.T, db *sql.DB, first, second string, is []error, has string) {
	t.Helper()
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, first)
	_, err := tx.Exec(second)
	wantErr(t, err, is, nil, has)
	mustRollback(t, tx)
}

// mustQuery runs each query on db in turn and reads its rows to the end,
// failing the test on an error (the rows' Close's too).
func mustQuery(t *testing.T, db *sql.DB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		rows, err := db.QueryContext(bg, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
		}
		if err := rows.Close(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// wantOne runs SELECT 1 on db, failing the test unless it answers 1.
func wantOne(t *testing.T, db *sql.DB) {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
}

// bg is the context of calls that need no other.
var bg = context.Background()

// Exchanges: the requests a call sends and the fake's answers.

// begin is the first statement of a transaction: BEGIN and the statement
// in one batch, the statement guarded by BEGIN's success, on a new stream.
func begin(baton string, st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline("", beginBatch(st)).Respond(baton, fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(res)))
}

// beginBatch is the batch that begins a transaction with st: BEGIN, then
// st guarded by BEGIN's success.
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

// slowAuto is an autocommit statement answered after d.
func slowAuto(st fs.Stmt, res fs.StmtResult, d time.Duration) fs.Exchange {
	return fs.Pipeline("", fs.Execute(st), fs.Close()).
		Reply(fs.Delay(d, fs.PipelineReply("", fs.ExecuteOK(res), fs.CloseOK())))
}

// closeStream is the close of a stream the driver gives up.
func closeStream(baton string) fs.Exchange {
	return fs.Pipeline(baton, fs.Close()).Respond("", fs.CloseOK())
}

// watched is a statement sent with get_autocommit after it, on the stream
// of baton (a new one for ""), answered with next and the autocommit state.
func watched(baton, next string, st fs.Stmt, res fs.StmtResult, autocommit bool) fs.Exchange {
	return fs.Pipeline(baton, fs.Execute(st), fs.GetAutocommit()).
		Respond(next, fs.ExecuteOK(res), fs.GetAutocommitOK(autocommit))
}

// lingeringExpired is the script of lingeringExpiredSQL on a pinned
// connection: BEGIN and COMMIT on a stream that lingers (kept to learn that
// COMMIT ended the transaction) and has expired by the INSERT after them,
// which the server refuses unrun and which goes again on a new stream.
func lingeringExpired() []fs.Exchange {
	b1, b2 := fs.Baton(1), fs.Baton(2)
	return []fs.Exchange{watched("", b1, fs.SQL("BEGIN"), fs.Empty(), false),
		watched(b1, b2, fs.SQL("COMMIT"), fs.Empty(), true),
		fs.Pipeline(b2, fs.Execute(fs.SQL("INSERT INTO t VALUES (3)")), fs.Close()).Reply(fs.StreamExpired()),
		auto(fs.SQL("INSERT INTO t VALUES (3)"), fs.Inserted(1, 3))}
}

// lingeringExpiredSQL are the statements of lingeringExpired.
var lingeringExpiredSQL = []string{"BEGIN", "COMMIT", "INSERT INTO t VALUES (3)"}

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

// withIndex is a result that reports replication index n.
func withIndex(r fs.StmtResult, n uint64) fs.StmtResult {
	r.ReplicationIndex = n
	return r
}

// Batches: what Batch sends (batchSteps) and what deferred execution
// sends (guarded).

// inBatchTx is the condition of a batch statement after step i: i
// succeeded and the transaction is still open.
func inBatchTx(i int) fs.Cond { return fs.And(fs.OK(i), fs.Not(fs.IsAutocommit())) }

// batchSteps is what Batch sends outside a transaction for stmts.
func batchSteps(begin string, stmts ...fs.Stmt) fs.Req {
	steps := []fs.BatchStep{fs.Step(fs.SQL(begin))}
	for i, st := range stmts {
		steps = append(steps, fs.Step(st).If(inBatchTx(i)))
	}
	n := len(stmts)
	steps = append(steps, fs.Step(fs.SQL("COMMIT")).If(inBatchTx(n)), fs.Step(fs.SQL("ROLLBACK")).If(fs.Not(fs.OK(n+1))))
	return fs.Batch(steps...)
}

// savepointSteps is what Batch sends for st inside a transaction whose
// first request it is: begin, then st in a savepoint, released whether or
// not st succeeded (rolled back to it first if not).
func savepointSteps(begin string, st fs.Stmt) fs.Req {
	return fs.Batch(
		fs.Step(fs.SQL(begin)),
		fs.Step(fs.SQL("SAVEPOINT libsql_batch")).If(fs.OK(0)),
		fs.Step(st).If(inBatchTx(1)),
		fs.Step(fs.SQL("RELEASE libsql_batch")).If(inBatchTx(2)),
		fs.Step(fs.SQL("ROLLBACK TO libsql_batch")).If(fs.Not(fs.OK(3))),
		fs.Step(fs.SQL("RELEASE libsql_batch")).If(fs.OK(4)))
}

// ins is the i-th queued INSERT as the driver sends it: want_rows false,
// since Exec discards rows.
func ins(i int) fs.Stmt {
	return fs.SQL("INSERT INTO t VALUES (?)", fs.Int(int64(i))).WantRows(false)
}

// inserts are ins(from) to ins(to).
func inserts(from, to int) []fs.Stmt {
	var l []fs.Stmt
	for i := from; i <= to; i++ {
		l = append(l, ins(i))
	}
	return l
}

// guarded is a deferred batch: optionally BEGIN, the statements, optionally
// a final statement, each guarded by the success of the one before.
func guarded(withBegin bool, stmts []fs.Stmt, final string) fs.Req {
	begin := ""
	if withBegin {
		begin = "BEGIN"
	}
	return guardedWith(begin, stmts, final)
}

// guardedWith is guarded with the BEGIN statement begin ("": none).
func guardedWith(begin string, stmts []fs.Stmt, final string) fs.Req {
	var all []fs.Stmt
	if begin != "" {
		all = append(all, fs.SQL(begin))
	}
	all = append(all, stmts...)
	if final != "" {
		all = append(all, fs.SQL(final))
	}
	steps := make([]fs.BatchStep, len(all))
	for i, st := range all {
		steps[i] = fs.Step(st)
		if i > 0 {
			steps[i] = steps[i].If(fs.OK(i - 1))
		}
	}
	return fs.Batch(steps...)
}

// allOK answers a batch of n steps, each a one-row INSERT (rowid 100+i).
func allOK(n int) fs.Result {
	s := make([]fs.StepResult, n)
	for i := range s {
		s[i] = fs.StepOK(fs.Inserted(1, int64(100+i)))
	}
	return fs.BatchOK(s...)
}

// Results over sqld's response limit, which stream through a cursor.

// bigSQL is a query whose answer the scripts make too large for a
// pipeline (tooLargeAuto), so that its rows stream through a cursor;
// tooLarge is sqld's message for that.
const (
	bigSQL   = "SELECT id, name, at FROM big"
	tooLarge = "Response is too large"
)

// bigCols are the columns of bigSQL's result.
var bigCols = []fs.Col{{Name: "id", Decltype: "INTEGER"}, {Name: "name", Decltype: "text"}, {Name: "at", Decltype: "DATETIME"}}

// bigRow is a cursor's row of bigSQL's result.
func bigRow(id int64, name string) fs.Line {
	return fs.Row(fs.Int(id), fs.Text(name), fs.Text("2024-05-06 07:08:09"))
}

// tooLargeAuto is an autocommit query whose pipeline answer is over sqld's
// response limit.
func tooLargeAuto(sql string) fs.Exchange {
	return fs.Pipeline("", fs.Execute(fs.SQL(sql)), fs.Close()).
		Respond("", fs.Fail("RESPONSE_TOO_LARGE", tooLarge), fs.CloseOK())
}

// Errors and concurrency.

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

// errs lists error classes, for wantErr.
func errs(e ...error) []error { return e }

// runConcurrently runs fn in n goroutines, started together, and returns
// the first error.
func runConcurrently(n int, fn func() error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return errors.Join(errs...)
}
