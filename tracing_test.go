package libsql_test

// Tracing over HTTP against the scripted fake: which events each call
// leads to, how they nest (through the contexts Start returns), and what
// they carry.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// recorder is a Tracer that keeps every event, as it was at End, with its
// parent: the event whose Start returned the context it started with.
type recorder struct {
	t      *testing.T
	mu     sync.Mutex
	events []*recorded
}

type recorded struct {
	start  libsql.TraceEvent // at Start
	ev     libsql.TraceEvent // at End
	at     *libsql.TraceEvent
	parent int // index in events; -1 for none
	ended  bool
}

type recordedKey struct{}

func (r *recorder) Start(ctx context.Context, ev *libsql.TraceEvent) context.Context {
	parent, ok := ctx.Value(recordedKey{}).(int)
	if !ok {
		parent = -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, &recorded{start: *ev, ev: *ev, at: ev, parent: parent})
	return context.WithValue(ctx, recordedKey{}, len(r.events)-1)
}

func (r *recorder) End(ctx context.Context, ev *libsql.TraceEvent) {
	i, ok := ctx.Value(recordedKey{}).(int)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok || r.events[i].at != ev {
		r.t.Errorf("End of a %v got another event's context", ev.Kind)
		return
	}
	if r.events[i].ended {
		r.t.Errorf("%v ended twice", ev.Kind)
	}
	r.events[i].ev, r.events[i].ended = *ev, true
}

// tree renders the events, children indented under their parent, each on
// a line of what distinguishes it.
func (r *recorder) tree() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	var walk func(parent, depth int)
	walk = func(parent, depth int) {
		for i, e := range r.events {
			if e.parent == parent {
				b.WriteString(strings.Repeat("  ", depth) + describeEvent(e) + "\n")
				walk(i, depth+1)
			}
		}
	}
	walk(-1, 0)
	return b.String()
}

func describeEvent(e *recorded) string {
	ev := &e.ev
	s := ev.Kind.String()
	switch ev.Kind {
	case libsql.TraceStatement:
		s += " " + ev.Call.String() + " " + ev.Keyword
	case libsql.TraceBatch:
		s += " n=" + strconv.Itoa(ev.BatchSize)
	case libsql.TraceRequest:
		s += " " + ev.Request + " n=" + strconv.Itoa(ev.Requests)
	case libsql.TraceRetry:
		s += " " + ev.Retry.String() + " #" + strconv.Itoa(ev.Attempt)
	case libsql.TraceWait:
		s += " " + ev.Wait.String()
	case libsql.TraceFetch:
		s += " rows=" + strconv.Itoa(ev.Rows)
	}
	for _, f := range []struct {
		on   bool
		text string
	}{
		{ev.InTx, "tx"}, {ev.Deferred > 0, "deferred=" + strconv.Itoa(ev.Deferred)}, {ev.Begin, "begin"},
		{ev.Commit, "commit"}, {ev.Kind == libsql.TraceStatement && ev.Call == libsql.CallQuery, "rows=" + strconv.Itoa(ev.Rows)},
		{ev.Err != nil, "err"}, {!e.ended, "NOT ENDED"},
	} {
		if f.on {
			s += " " + f.text
		}
	}
	return s
}

// find returns the events of kind k.
func (r *recorder) find(k libsql.TraceKind) []libsql.TraceEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []libsql.TraceEvent
	for _, e := range r.events {
		if e.ev.Kind == k {
			out = append(out, e.ev)
		}
	}
	return out
}

// openTraced opens a database on srv, traced by a new recorder; cfg, if
// not nil, adjusts the Config.
func openTraced(t *testing.T, srv *fs.Server, cfg func(*libsql.Config)) (*sql.DB, *recorder) {
	t.Helper()
	c := fakeConfig()
	if cfg != nil {
		cfg(c)
	}
	rec := &recorder{t: t}
	return connectorDB(t, srv.URL, c, libsql.WithTracer(rec)), rec
}

func wantTree(t *testing.T, rec *recorder, want string) {
	t.Helper()
	if got := rec.tree(); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
}

// An autocommit Exec and Query are statements with one request each, a
// Query ending with its rows; events carry the connector's server, the
// SQL text (never its arguments, nor the token), the bytes and the
// server's time.
func TestFakeTraceAutocommit(t *testing.T) {
	t.Parallel()
	const secret, token = "s3cret-argument", "s3cret-token"
	insert := "INSERT INTO t (v) VALUES (?)"
	srv := fs.New(t, auto(fs.SQL(insert, fs.Text(secret)).WantRows(false), fs.Inserted(1, 1)),
		auto(fs.SQL("SELECT v FROM t"), fs.Query(fs.Cols("v"), fs.Vals(fs.Text("a")), fs.Vals(fs.Text("b")))))
	db, rec := openTraced(t, srv, func(c *libsql.Config) { c.AuthToken = token })
	if _, err := db.ExecContext(bg, insert, secret); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(bg, "SELECT v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.tree(), "statement query SELECT rows=0 NOT ENDED\n") {
		t.Errorf("the Query ended before its rows:\n%s", rec.tree())
	}
	for rows.Next() { // the last closes the rows
	}
	wantTree(t, rec, `statement exec INSERT
  request execute n=1
statement query SELECT rows=2
  request execute n=1
`)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	for _, ev := range append(rec.find(libsql.TraceStatement), rec.find(libsql.TraceRequest)...) {
		if ev.Transport != libsql.TransportHTTP || ev.ServerAddress != "127.0.0.1" || ev.ServerPort != port {
			t.Errorf("%v: transport %q, server %q port %d", ev.Kind, ev.Transport, ev.ServerAddress, ev.ServerPort)
		}
		if all := fmt.Sprintf("%#v", ev); strings.Contains(all, secret) || strings.Contains(all, token) {
			t.Errorf("an event shows an argument or the token: %s", all)
		}
	}
	exec := rec.find(libsql.TraceStatement)[0]
	if exec.SQL != insert || exec.RowsAffected != 1 || exec.InTx || exec.Begin {
		t.Errorf("the Exec's event: %+v", exec)
	}
	req := rec.find(libsql.TraceRequest)[0]
	if req.BytesSent < len(insert) || req.BytesReceived == 0 || req.ServerTime != 42*time.Microsecond {
		t.Errorf("the request's event: %+v", req)
	}
}

// In a transaction, the first statement carries BEGIN; Commit and
// Rollback are statements; a failed exchange is the request's error, an
// *Error like the driver's.
func TestFakeTraceTx(t *testing.T) {
	t.Parallel()
	b1, b2, b3 := fs.Baton(1), fs.Baton(2), fs.Baton(3)
	st := fs.SQL("INSERT INTO t VALUES (1)").WantRows(false)
	srv := fs.New(t, begin(b1, st, fs.Inserted(1, 1)),
		inTx(b1, b2, st, fs.Inserted(1, 2)),
		finish(b2, "COMMIT"),
		begin(b3, st, fs.Inserted(1, 3)),
		fs.Pipeline(b3, fs.Execute(st)).Reply(fs.HTTPError(500, "boom")),
	)
	db, rec := openTraced(t, srv, nil)
	tx := mustBegin(t, db, nil)
	for range 2 {
		mustExec(t, tx, "INSERT INTO t VALUES (1)")
	}
	mustCommit(t, tx)
	tx = mustBegin(t, db, nil)
	mustExec(t, tx, "INSERT INTO t VALUES (1)")
	if _, err := tx.ExecContext(bg, "INSERT INTO t VALUES (1)"); err == nil {
		t.Fatal("the failed request succeeded")
	}
	_ = tx.Rollback()
	wantTree(t, rec, `statement exec INSERT tx begin
  request batch n=1
statement exec INSERT tx
  request execute n=1
statement commit COMMIT tx
  request execute n=1
statement exec INSERT tx begin
  request batch n=1
statement exec INSERT tx err
  request execute n=1 err
statement rollback ROLLBACK tx
`)
	reqs := rec.find(libsql.TraceRequest)
	var e *libsql.Error
	if !errors.As(reqs[len(reqs)-1].Err, &e) || e.HTTPStatus != 500 {
		t.Errorf("the failed request's error: %#v", reqs[len(reqs)-1].Err)
	}
}

// Deferred Execs are statements that send nothing; the batch that sends
// them later is a child of what sent it (a Query, Commit) and says which
// it sends, whether BEGIN went with them and whether COMMIT ended them.
func TestFakeTraceDeferred(t *testing.T) {
	t.Parallel()
	b1 := fs.Baton(1)
	sel := fs.SQL("SELECT 1")
	srv := fs.New(t, fs.Pipeline("", guarded(true, inserts(1, 2), "")).Respond(b1, allOK(3)),
		fs.Pipeline(b1, fs.Execute(sel)).Respond(b1, fs.ExecuteOK(fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1))))),
		fs.Pipeline(b1, guarded(false, inserts(3, 3), "COMMIT"), fs.Close()).Respond("", allOK(2), fs.CloseOK()),
	)
	db, rec := openTraced(t, srv, func(c *libsql.Config) { c.DeferredExec = true })
	tx := mustBegin(t, db, nil)
	exec := func(i int) {
		if _, err := tx.ExecContext(bg, "INSERT INTO t VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	exec(1)
	exec(2)
	var n int
	if err := tx.QueryRowContext(bg, "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	exec(3)
	mustCommit(t, tx)
	wantTree(t, rec, `statement exec INSERT tx deferred=1
statement exec INSERT tx deferred=2
statement query SELECT tx rows=1
  batch n=2 tx deferred=1 begin
    request batch n=1
  request execute n=1
statement exec INSERT tx deferred=3
statement commit COMMIT tx
  batch n=1 tx deferred=3 commit
    request batch n=1
`)
}

// A Batch is one batch event holding its statements' texts, whether or
// not in a transaction; inside a pending one it carries BEGIN.
func TestFakeTraceBatch(t *testing.T) {
	t.Parallel()
	ins := fs.SQL("INSERT INTO t (v) VALUES (?)", fs.Text("a"))
	sel := fs.SQL("SELECT v FROM t")
	srv := fs.New(t, fs.Pipeline("", batchSteps("BEGIN DEFERRED", ins, sel), fs.Close()).Respond("", fs.BatchOK(
		fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 7)), fs.StepOK(fs.Query(fs.Cols("v"), fs.Vals(fs.Text("a")))),
		fs.StepOK(fs.Empty()), fs.StepSkipped()), fs.CloseOK()))
	db, rec := openTraced(t, srv, nil)
	c := pinned(t, db)
	stmts := []libsql.Statement{{SQL: "INSERT INTO t (v) VALUES (?)", Args: []any{"a"}}, {SQL: "SELECT v FROM t"}}
	if _, err := libsql.Batch(bg, c, stmts); err != nil {
		t.Fatal(err)
	}
	wantTree(t, rec, `batch n=2
  request batch n=1
`)
	if b := rec.events[0].start; b.SQL != "INSERT INTO t (v) VALUES (?); SELECT v FROM t" || b.BatchSize != 2 {
		t.Errorf("the batch's start: SQL %q, BatchSize %d", b.SQL, b.BatchSize)
	}
}

// SQLITE_BUSY retries are children of the statement, each with its
// backoff and its request, the error it retries and its own outcome.
func TestFakeTraceBusy(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	busy := fs.Pipeline("", fs.Execute(fs.SQL(ins)), fs.Close()).
		Respond("", fs.Fail("SQLITE_BUSY", "SQLite error: database is locked"), fs.CloseOK())
	srv := fs.New(t, busy, busy, auto(fs.SQL(ins), fs.Inserted(1, 1)))
	db, rec := openTraced(t, srv, nil)
	mustExec(t, db, ins)
	wantTree(t, rec, `statement exec INSERT
  request execute n=1
  retry busy #2 err
    wait busy_backoff
    request execute n=1
  retry busy #3
    wait busy_backoff
    request execute n=1
`)
	for _, r := range rec.find(libsql.TraceRetry) {
		if !errors.Is(r.Cause, libsql.ErrBusy) {
			t.Errorf("retry #%d's cause: %v", r.Attempt, r.Cause)
		}
	}
}

// A statement on a lingering stream that expired is sent again on a new
// one: a retry around the new request.
func TestFakeTraceStreamExpired(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, lingeringExpired()...)
	db, rec := openTraced(t, srv, nil)
	c := pinned(t, db)
	mustExec(t, c, lingeringExpiredSQL...)
	wantTree(t, rec, `statement exec BEGIN
  request execute n=2
statement exec COMMIT tx
  request execute n=2
statement exec INSERT
  request execute n=1 err
  retry stream_expired #2
    request execute n=1
`)
}

// A result too large for a pipeline streams through a cursor: the Query
// holds the failed request, the describe, the cursor's opening and its
// fetch, and ends with its rows.
func TestFakeTraceCursor(t *testing.T) {
	t.Parallel()
	c1 := fs.Baton(1)
	body := []fs.Line{fs.StepBegin(0, bigCols...), bigRow(1, "ada"), bigRow(2, "bob"), fs.StepEnd(), fs.ReplicationIndex(9)}
	srv := fs.New(t, tooLargeAuto(bigSQL),
		describe(bigSQL, true),
		fs.Cursor("", fs.Step(fs.SQL(bigSQL))).Stream(c1, body...),
		closeStream(c1))
	db, rec := openTraced(t, srv, func(c *libsql.Config) { c.DisableReadYourWrites = true })
	mustQuery(t, db, bigSQL)
	wantTree(t, rec, `statement query SELECT rows=2
  request execute n=1
  request describe n=1
  request cursor n=1
  fetch rows=2
`)
	if f := rec.find(libsql.TraceFetch)[0]; f.BytesReceived == 0 || f.Transport != libsql.TransportHTTP {
		t.Errorf("the fetch's event: %+v", f)
	}
}

// A write that finds no write slot free waits for one, and says so; one
// that finds a slot at once does not.
func TestFakeTraceWriteSlot(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	srv := fs.New(t, auto(fs.SQL(ins), fs.Inserted(1, 1)),
		slowAuto(fs.SQL(ins), fs.Inserted(1, 1), 300*time.Millisecond),
		slowAuto(fs.SQL(ins), fs.Inserted(1, 1), 300*time.Millisecond))
	db, rec := openTraced(t, srv, func(c *libsql.Config) { c.MaxWriters = 1 })
	mustExec(t, db, ins) // a first write, alone
	if err := runConcurrently(2, func() error { _, err := db.ExecContext(bg, ins); return err }); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(rec.tree()), "\n")
	slices.Sort(got)
	want := []string{
		"  request execute n=1", "  request execute n=1", "  request execute n=1",
		"  wait write_slot",
		"statement exec INSERT", "statement exec INSERT", "statement exec INSERT",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s", rec.tree())
	}
}

// A request that carries a replication index says which: a replica runs
// it only once it has applied that frame.
func TestFakeTraceReplicationIndex(t *testing.T) {
	t.Parallel()
	const ins, sel = "INSERT INTO t VALUES (1)", "SELECT a FROM t"
	srv := fs.New(t, auto(fs.SQL(ins), withIndex(fs.Inserted(1, 1), 5)),
		fs.Pipeline("", fs.Execute(fs.SQL(sel)).Index(5), fs.Close()).Respond("", fs.ExecuteOK(withIndex(fs.Query(fs.Cols("a")), 5)), fs.CloseOK()))
	db, rec := openTraced(t, srv, nil)
	mustExec(t, db, ins)
	if _, err := db.QueryContext(bg, sel); err != nil {
		t.Fatal(err)
	}
	reqs := rec.find(libsql.TraceRequest)
	if len(reqs) != 2 || reqs[0].ReplicationIndex != 0 || reqs[1].ReplicationIndex != 5 {
		t.Errorf("requests %+v, want the second to carry index 5", reqs)
	}
}
