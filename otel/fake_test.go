package otellibsql_test

// The spans of the driver's events over HTTP against the scripted fake
// sqld (internal/fakesqld): which spans, how they nest, their attributes.

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
	otellibsql "github.com/gohrana/libsql/otel"
)

// fakeConfig is a Config for the fake, which speaks JSON; its scripts give
// every statement a stream of its own, closed with it (keepStreams=0).
func fakeConfig(srv *fs.Server) *libsql.Config {
	cfg := libsql.NewConfig()
	cfg.URL = srv.URL
	cfg.Codec = "direct"
	cfg.DisableKeptStreams = true
	return cfg
}

// auto is an autocommit statement: execute and close on a new stream.
func auto(st fs.Stmt, res fs.StmtResult) fs.Exchange {
	return fs.Pipeline("", fs.Execute(st), fs.Close()).Respond("", fs.ExecuteOK(res), fs.CloseOK())
}

// A statement is a client span with the database conventions' attributes,
// the request under it an internal span with the driver's; neither holds
// an argument or the token.
func TestStatementSpans(t *testing.T) {
	t.Parallel()
	const secret, token = "s3cret-argument", "s3cret-token"
	const insert = "insert INTO t (v) VALUES (?)"
	srv := fs.New(t, auto(fs.SQL(insert, fs.Text(secret)).WantRows(false), fs.Inserted(1, 1)),
		auto(fs.SQL("SELECT v FROM t"), fs.Query(fs.Cols("v"), fs.Vals(fs.Text("a")), fs.Vals(fs.Text("b")))))
	cfg := fakeConfig(srv)
	cfg.AuthToken = token
	db, rec := openDB(t, cfg)
	if _, err := db.ExecContext(t.Context(), insert, secret); err != nil {
		t.Fatal(err)
	}
	readRows(t, db, "SELECT v FROM t")
	wantTree(t, rec, `INSERT
  libsql.request execute
SELECT
  libsql.request execute
`)
	u, _ := url.Parse(srv.URL)
	ins := rec.oneOfKind(t, "INSERT", trace.SpanKindClient)
	if ins.Status.Code != codes.Unset {
		t.Errorf("INSERT: status %v", ins.Status)
	}
	wantAttrs(t, ins, map[attribute.Key]string{
		semconv.DBSystemNameKey:    "sqlite",
		semconv.DBQueryTextKey:     insert,
		semconv.DBOperationNameKey: "INSERT",
		semconv.ServerAddressKey:   "127.0.0.1",
		semconv.ServerPortKey:      u.Port(),
		otellibsql.TransportKey:    "http",
		otellibsql.CallKey:         "exec",
		otellibsql.InTxKey:         "false",
		otellibsql.RowsAffectedKey: "1",
	}, semconv.DBNamespaceKey, otellibsql.BeginKey, otellibsql.DeferredKey)
	wantAttrs(t, rec.one(t, "SELECT"), map[attribute.Key]string{
		semconv.DBResponseReturnedRowsKey: "2",
		otellibsql.CallKey:                "query",
	}, otellibsql.RowsAffectedKey)
	req := rec.named("libsql.request execute")[0]
	if req.SpanKind != trace.SpanKindInternal {
		t.Errorf("request: kind %v", req.SpanKind)
	}
	wantAttrs(t, req, map[attribute.Key]string{
		otellibsql.RequestKey:    "execute",
		otellibsql.RequestsKey:   "1",
		otellibsql.ServerTimeKey: "4.2e-05", // fakesqld's query_duration_ms, 0.042
	}, otellibsql.ReplicationIndexKey)
	if a := attrs(req); a[otellibsql.BytesSentKey].AsInt64() < int64(len(insert)) || a[otellibsql.BytesReceivedKey].AsInt64() == 0 {
		t.Errorf("request: %d bytes sent, %d received", a[otellibsql.BytesSentKey].AsInt64(), a[otellibsql.BytesReceivedKey].AsInt64())
	}
	for _, s := range rec.spans() {
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, secret) || strings.Contains(v, token) {
				t.Errorf("%s: %s shows an argument or the token: %q", s.Name, kv.Key, v)
			}
		}
	}
}

// A statement the server refused has an error span with the Hrana code;
// its request, an exchange that succeeded, has none. A failed exchange is
// an error on the request and the statement.
func TestErrorSpans(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL(ins)), fs.Close()).
		Respond("", fs.Fail("SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.id"), fs.CloseOK()),
		fs.Pipeline("", fs.Execute(fs.SQL(ins)), fs.Close()).Reply(fs.HTTPError(500, "boom")))
	db, rec := openDB(t, fakeConfig(srv))
	if _, err := db.ExecContext(t.Context(), ins); !errors.Is(err, libsql.ErrUniqueViolation) {
		t.Fatalf("the refused INSERT: %v", err)
	}
	stmt, req := rec.one(t, "INSERT"), rec.one(t, "libsql.request execute")
	if stmt.Status.Code != codes.Error || !strings.Contains(stmt.Status.Description, "UNIQUE constraint failed") {
		t.Errorf("statement status %+v", stmt.Status)
	}
	wantAttrs(t, stmt, map[attribute.Key]string{semconv.ErrorTypeKey: "SQLITE_CONSTRAINT", semconv.DBResponseStatusCodeKey: "SQLITE_CONSTRAINT"})
	if len(stmt.Events) != 1 || stmt.Events[0].Name != "exception" {
		t.Errorf("statement events %+v, want the exception", stmt.Events)
	}
	if req.Status.Code != codes.Unset {
		t.Errorf("the request of a statement error: status %+v", req.Status)
	}
	rec.reset()
	if _, err := db.ExecContext(t.Context(), ins); err == nil {
		t.Fatal("the INSERT answered 500 succeeded")
	}
	for _, s := range []string{"INSERT", "libsql.request execute"} {
		if sp := rec.one(t, s); sp.Status.Code != codes.Error || !strings.Contains(sp.Status.Description, "HTTP 500") {
			t.Errorf("%s: status %+v", s, sp.Status)
		}
	}
}

// In a transaction with deferred execution, the Execs are spans that send
// nothing, and Commit's batch (internal) says which it sends, with BEGIN
// and COMMIT.
func TestDeferredSpans(t *testing.T) {
	t.Parallel()
	ins := func(i int64) fs.Stmt { return fs.SQL("INSERT INTO t VALUES (?)", fs.Int(i)).WantRows(false) }
	srv := fs.New(t, fs.Pipeline("", fs.Batch(fs.Step(fs.SQL("BEGIN")), fs.Step(ins(1)).If(fs.OK(0)), fs.Step(ins(2)).If(fs.OK(1)),
		fs.Step(fs.SQL("COMMIT")).If(fs.OK(2))), fs.Close()).
		Respond("", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)), fs.StepOK(fs.Inserted(1, 2)), fs.StepOK(fs.Empty())), fs.CloseOK()))
	cfg := fakeConfig(srv)
	cfg.DeferredExec = true
	db, rec := openDB(t, cfg)
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := tx.ExecContext(t.Context(), "INSERT INTO t VALUES (?)", i+1); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wantTree(t, rec, `INSERT
INSERT
COMMIT
  BATCH
    libsql.request batch
`)
	for i, s := range rec.named("INSERT") {
		wantAttrs(t, s, map[attribute.Key]string{otellibsql.DeferredKey: []string{"1", "2"}[i], otellibsql.InTxKey: "true"}, otellibsql.RowsAffectedKey)
	}
	wantAttrs(t, rec.oneOfKind(t, "BATCH", trace.SpanKindInternal), map[attribute.Key]string{
		otellibsql.DeferredKey:          "1",
		semconv.DBOperationBatchSizeKey: "2",
		otellibsql.BeginKey:             "true",
		otellibsql.CommitKey:            "true",
	}, semconv.DBQueryTextKey)
}

// A Batch is a client span BATCH with its statements' texts.
func TestBatchSpan(t *testing.T) {
	t.Parallel()
	inTx := func(i int) fs.Cond { return fs.And(fs.OK(i), fs.Not(fs.IsAutocommit())) }
	srv := fs.New(t, fs.Pipeline("", fs.Batch(fs.Step(fs.SQL("BEGIN DEFERRED")), fs.Step(fs.SQL("INSERT INTO t VALUES (1)")).If(inTx(0)),
		fs.Step(fs.SQL("DELETE FROM u")).If(inTx(1)), fs.Step(fs.SQL("COMMIT")).If(inTx(2)), fs.Step(fs.SQL("ROLLBACK")).If(fs.Not(fs.OK(3)))), fs.Close()).
		Respond("", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)), fs.StepOK(fs.Updated(2)), fs.StepOK(fs.Empty()), fs.StepSkipped()), fs.CloseOK()))
	db, rec := openDB(t, fakeConfig(srv))
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := libsql.Batch(t.Context(), conn, []libsql.Statement{{SQL: "INSERT INTO t VALUES (1)"}, {SQL: "DELETE FROM u"}}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, rec, "BATCH\n  libsql.request batch\n")
	wantAttrs(t, rec.oneOfKind(t, "BATCH", trace.SpanKindClient), map[attribute.Key]string{
		semconv.DBQueryTextKey:          "INSERT INTO t VALUES (1); DELETE FROM u",
		semconv.DBOperationNameKey:      "BATCH",
		semconv.DBOperationBatchSizeKey: "2",
	}, otellibsql.DeferredKey)
}

// SQLITE_BUSY retries are spans under the statement, each with its
// backoff and its request.
func TestRetrySpans(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL(ins)), fs.Close()).
		Respond("", fs.Fail("SQLITE_BUSY", "SQLite error: database is locked"), fs.CloseOK()),
		auto(fs.SQL(ins), fs.Inserted(1, 1)))
	db, rec := openDB(t, fakeConfig(srv))
	if _, err := db.ExecContext(t.Context(), ins); err != nil {
		t.Fatal(err)
	}
	wantTree(t, rec, `INSERT
  libsql.request execute
  libsql.retry busy
    libsql.wait busy_backoff
    libsql.request execute
`)
	r := rec.one(t, "libsql.retry busy")
	wantAttrs(t, r, map[attribute.Key]string{otellibsql.RetryReasonKey: "busy", otellibsql.RetryAttemptKey: "2"})
	if c := attrs(r)[otellibsql.RetryCauseKey].AsString(); !strings.Contains(c, "database is locked") {
		t.Errorf("the retry's cause: %q", c)
	}
	wantAttrs(t, rec.one(t, "libsql.wait busy_backoff"), map[attribute.Key]string{otellibsql.WaitReasonKey: "busy_backoff"})
}

// A result too large for a pipeline streams through a cursor: the Query's
// span holds its requests and the cursor's fetch.
func TestCursorSpans(t *testing.T) {
	t.Parallel()
	const sel = "SELECT v FROM big"
	c1 := fs.Baton(1)
	srv := fs.New(t, fs.Pipeline("", fs.Execute(fs.SQL(sel)), fs.Close()).Respond("", fs.Fail("RESPONSE_TOO_LARGE", "Response is too large"), fs.CloseOK()),
		fs.Pipeline("", fs.Describe(sel), fs.Close()).Respond("", fs.DescribeOK(true), fs.CloseOK()),
		fs.Cursor("", fs.Step(fs.SQL(sel))).Stream(c1, fs.StepBegin(0, fs.Cols("v")...),
			fs.Row(fs.Text("a")), fs.Row(fs.Text("b")), fs.Row(fs.Text("c")), fs.StepEnd(), fs.ReplicationIndex(3)),
		fs.Pipeline(c1, fs.Close()).Respond("", fs.CloseOK()))
	cfg := fakeConfig(srv)
	cfg.DisableReadYourWrites = true
	db, rec := openDB(t, cfg)
	readRows(t, db, sel)
	wantTree(t, rec, `SELECT
  libsql.request execute
  libsql.request describe
  libsql.request cursor
  libsql.fetch
`)
	wantAttrs(t, rec.one(t, "SELECT"), map[attribute.Key]string{semconv.DBResponseReturnedRowsKey: "3"})
	f := rec.one(t, "libsql.fetch")
	wantAttrs(t, f, map[attribute.Key]string{otellibsql.RowsKey: "3"})
	if attrs(f)[otellibsql.BytesReceivedKey].AsInt64() == 0 {
		t.Error("the fetch brought no bytes")
	}
}

// Spans that are not sampled cost nothing more: statements work and
// nothing is recorded.
func TestNotSampled(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, auto(fs.SQL("DELETE FROM t"), fs.Updated(3)))
	rec := newRecording(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSyncer(rec.exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c, err := libsql.NewConnector(fakeConfig(srv), libsql.WithTracer(otellibsql.NewTracer(otellibsql.WithTracerProvider(tp))))
	if err != nil {
		t.Fatal(err)
	}
	db := sqlOpenDB(t, c)
	if _, err := db.ExecContext(t.Context(), "DELETE FROM t"); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.spans()); n != 0 {
		t.Errorf("%d spans recorded, none sampled", n)
	}
}
