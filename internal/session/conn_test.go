package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

// fakeStream answers each Send with the next scripted response.
type fakeStream struct {
	t       *testing.T
	answers []func(reqs []codec.StreamRequest, res *transport.Response) error
	ends    []bool
	version int
	open    bool
	shared  bool // Shared while open
	resets  int
}

func (f *fakeStream) Send(_ context.Context, reqs []codec.StreamRequest, end bool, res *transport.Response) error {
	if len(f.answers) == 0 {
		f.t.Fatalf("unexpected Send of %v", reqs)
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	f.ends = append(f.ends, end)
	return a(reqs, res)
}

func (f *fakeStream) OpenCursor(context.Context, *codec.Batch, bool, []codec.StreamRequest) (transport.Cursor, error) {
	return nil, &transport.Error{Message: "request failed", Safe: true, Resend: true}
}
func (f *fakeStream) Isolated() transport.Stream           { return f }
func (f *fakeStream) Shared() bool                         { return f.open && f.shared }
func (f *fakeStream) Open() bool                           { return f.open }
func (f *fakeStream) Busy() bool                           { return false }
func (f *fakeStream) Lost() bool                           { return false }
func (f *fakeStream) Reset()                               { f.resets++; f.open = false }
func (f *fakeStream) Version(context.Context) (int, error) { return f.version, nil }

// ok answers with one OK result per request, of the request's type, after
// fill adjusts them.
func ok(fill func(rs []codec.StreamResult)) func([]codec.StreamRequest, *transport.Response) error {
	return func(reqs []codec.StreamRequest, res *transport.Response) error {
		resp := &res.Pipeline
		resp.Results = resp.Results[:0]
		for _, r := range reqs {
			resp.Results = append(resp.Results, codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: r.Type}})
		}
		if fill != nil {
			fill(resp.Results)
		}
		return nil
	}
}

func fail(err error) func([]codec.StreamRequest, *transport.Response) error {
	return func([]codec.StreamRequest, *transport.Response) error { return err }
}

func newConn(t *testing.T, answers ...func([]codec.StreamRequest, *transport.Response) error) (*session.Conn, *fakeStream) {
	f := &fakeStream{t: t, answers: answers, version: 3}
	return session.NewConn(f), f
}

// TestHoldMovesSharedStream: Hold resets a stream open on a shared
// connection, so that the transaction begins on a new one, with the
// settings replayed; a stream of its own, or none, is kept.
func TestHoldMovesSharedStream(t *testing.T) {
	var sent []codec.StreamRequest
	record := func(reqs []codec.StreamRequest, res *transport.Response) error {
		sent = append(sent[:0], reqs...)
		return ok(nil)(reqs, res)
	}
	c, f := newConn(t, record)
	c.Persist("fk", codec.Stmt{SQL: "PRAGMA foreign_keys = ON"})
	f.open, f.shared = true, true
	c.Hold()
	if f.resets != 1 {
		t.Fatalf("%d resets of the shared stream at Hold, want 1", f.resets)
	}
	if _, err := c.Execute(context.Background(), &codec.Stmt{SQL: "BEGIN"}); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 || sent[0].Stmt.SQL != "PRAGMA foreign_keys = ON" || f.ends[0] {
		t.Fatalf("sent %+v with end %v, want the setting replayed before BEGIN, without end", sent, f.ends)
	}
	c.Release()
	f.open, f.shared = true, false
	c.Hold()
	if f.resets != 1 {
		t.Fatal("Hold reset a stream that is not shared")
	}
}

func TestExecute(t *testing.T) {
	c, f := newConn(t, ok(func(rs []codec.StreamResult) { rs[0].Response.Result.AffectedRowCount = 3 }))
	res, err := c.Execute(context.Background(), &codec.Stmt{SQL: "UPDATE t SET a = 1"})
	if err != nil || res.Stmt().AffectedRowCount != 3 {
		t.Fatalf("%v", err)
	}
	res.Release()
	if !f.ends[0] {
		t.Fatal("an operation outside Hold must end its unit of work")
	}
}

func TestOperationErrors(t *testing.T) {
	stmtErr := func(reqs []codec.StreamRequest, res *transport.Response) error {
		res.Pipeline.Results = append(res.Pipeline.Results[:0], codec.StreamResult{Error: codec.Error{Code: "SQLITE_CONSTRAINT", Message: "UNIQUE constraint failed: t.a"}})
		return nil
	}
	wrongType := func(reqs []codec.StreamRequest, res *transport.Response) error {
		res.Pipeline.Results = append(res.Pipeline.Results[:0], codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestClose}})
		return nil
	}
	none := func(reqs []codec.StreamRequest, res *transport.Response) error {
		res.Pipeline.Results = res.Pipeline.Results[:0]
		return nil
	}
	ops := map[string]func(c *session.Conn) error{
		"execute": func(c *session.Conn) error {
			_, err := c.Execute(context.Background(), &codec.Stmt{SQL: "x"})
			return err
		},
		"batch": func(c *session.Conn) error {
			_, err := c.Batch(context.Background(), []codec.BatchStep{{}})
			return err
		},
		"sequence": func(c *session.Conn) error { return c.Sequence(context.Background(), "x; y") },
		"describe": func(c *session.Conn) error { _, err := c.Describe(context.Background(), "x"); return err },
		"autocommit": func(c *session.Conn) error {
			_, err := c.GetAutocommit(context.Background())
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			c, _ := newConn(t, stmtErr, wrongType, none)
			err := op(c)
			if !hasCode(err, "SQLITE_CONSTRAINT") || !isStatement(err) {
				t.Fatalf("statement error: %v", err)
			}
			if err := op(c); err == nil || isStatement(err) {
				t.Fatalf("wrong response type: %v", err)
			}
			if err := op(c); err == nil || isStatement(err) {
				t.Fatalf("missing result: %v", err)
			}
		})
	}
}

// A batch answer with more steps than the batch is an error; one with
// fewer has its trailing steps skipped (Protobuf leaves them out).
func TestBatchStepCount(t *testing.T) {
	c, _ := newConn(t, ok(func(rs []codec.StreamResult) {
		rs[0].Response.Batch.Steps = make([]codec.StepOutcome, 3)
	}), ok(func(rs []codec.StreamResult) {
		rs[0].Response.Batch.Steps = []codec.StepOutcome{{Status: codec.StepOK}}
	}), ok(func(rs []codec.StreamResult) {
		rs[0].Response.Batch.Steps = []codec.StepOutcome{{Status: codec.StepOK}, {Status: codec.StepOK, Result: codec.StmtResult{LastInsertRowID: 9}}}
	}))
	steps := make([]codec.BatchStep, 2)
	if _, err := c.Batch(context.Background(), steps); err == nil {
		t.Fatal("a batch answered with too many steps")
	}
	short, err := c.Batch(context.Background(), steps)
	if err != nil {
		t.Fatal(err)
	}
	if got := short.Batch().Steps; len(got) != 2 || got[0].Status != codec.StepOK || got[1].Status != codec.StepSkipped {
		t.Fatalf("short answer: %+v", got)
	}
	short.Release()
	res, err := c.Batch(context.Background(), steps)
	if err != nil {
		t.Fatal(err)
	}
	res.UseStep(1)
	if res.Stmt().LastInsertRowID != 9 {
		t.Fatal("UseStep does not select the step")
	}
	res.Release()
}

// TestHoldClearsBadConn: a request that never left is BadConn outside
// Hold, and not inside it, where the stream holds a transaction.
func TestHoldClearsBadConn(t *testing.T) {
	unsent := &transport.Error{Message: "request failed", Safe: true, Resend: true}
	c, f := newConn(t, fail(unsent), fail(unsent), ok(nil))
	if err := c.Ping(context.Background()); !isResend(err) {
		t.Fatalf("outside Hold: %v", err)
	}
	c.Hold()
	if !c.Held() {
		t.Fatal("Held")
	}
	err := c.Ping(context.Background())
	if isResend(err) || !isSafe(err) {
		t.Fatalf("inside Hold: %v", err)
	}
	if unsent.Resend != true {
		t.Fatal("the transport's error was changed in place")
	}
	if _, err := c.OpenCursor(context.Background(), nil); isResend(err) {
		t.Fatalf("cursor inside Hold: %v", err)
	}
	c.Release()
	if _, err := c.OpenCursor(context.Background(), nil); !isResend(err) {
		t.Fatalf("cursor outside Hold: %v", err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.ends[1] || !f.ends[2] {
		t.Fatalf("ends %v", f.ends)
	}
	f.open = true
	if !c.StreamOpen() {
		t.Fatal("StreamOpen")
	}
	c.Reset()
	if f.resets != 1 || c.StreamOpen() {
		t.Fatal("Reset")
	}
}

func TestDescribeCopies(t *testing.T) {
	c, _ := newConn(t, ok(func(rs []codec.StreamResult) {
		rs[0].Response.Describe = codec.DescribeResult{IsReadonly: true, Cols: []codec.Col{{Name: "a"}}}
	}))
	d, err := c.Describe(context.Background(), "SELECT a FROM t")
	if err != nil || !d.IsReadonly || len(d.Cols) != 1 {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestGetAutocommit(t *testing.T) {
	c, f := newConn(t, ok(func(rs []codec.StreamResult) { rs[0].Response.IsAutocommit = true }))
	if auto, err := c.GetAutocommit(context.Background()); err != nil || !auto {
		t.Fatalf("%v %v", auto, err)
	}
	f.version = 2
	if _, err := c.GetAutocommit(context.Background()); err == nil || !isSafe(err) {
		t.Fatalf("Hrana 2: %v", err)
	}
}

func TestSequence(t *testing.T) {
	c, _ := newConn(t, ok(nil))
	if err := c.Sequence(context.Background(), "CREATE TABLE a(x); CREATE TABLE b(y)"); err != nil {
		t.Fatal(err)
	}
}

// TestPersist: settings go first on a stream not open yet, in order, the
// latest per key, at most MaxSetup; never on an open stream; the caller
// sees only its own results.
func TestPersist(t *testing.T) {
	var sent [][]codec.StreamRequest
	record := func(reqs []codec.StreamRequest, res *transport.Response) error {
		sent = append(sent, append([]codec.StreamRequest(nil), reqs...))
		return ok(func(rs []codec.StreamResult) { rs[len(rs)-1].Response.Result.LastInsertRowID = 5 })(reqs, res)
	}
	c, f := newConn(t, record, record, record)
	c.Persist("a", codec.Stmt{SQL: "PRAGMA a = 1"})
	c.Persist("b", codec.Stmt{SQL: "PRAGMA b = 1"})
	c.Persist("a", codec.Stmt{SQL: "PRAGMA a = 2"})
	res, err := c.Execute(context.Background(), &codec.Stmt{SQL: "INSERT"})
	if err != nil || res.Stmt().LastInsertRowID != 5 || len(res.Results()) != 1 {
		t.Fatalf("%v", err)
	}
	res.Release()
	var got []string
	for _, r := range sent[0] {
		got = append(got, r.Stmt.SQL)
	}
	if want := []string{"PRAGMA b = 1", "PRAGMA a = 2", "INSERT"}; !slices.Equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	f.open = true
	if _, err := c.Execute(context.Background(), &codec.Stmt{SQL: "INSERT"}); err != nil || len(sent[1]) != 1 {
		t.Fatalf("on an open stream: %v, %d requests", err, len(sent[1]))
	}
	f.open = false
	for i := range session.MaxSetup + 3 {
		c.Persist(string(rune('c'+i)), codec.Stmt{SQL: "PRAGMA x"})
	}
	if _, err := c.Execute(context.Background(), &codec.Stmt{SQL: "INSERT"}); err != nil || len(sent[2]) != session.MaxSetup+1 {
		t.Fatalf("capped: %v, %d requests", err, len(sent[2]))
	}
}

func TestSetupFailure(t *testing.T) {
	c, _ := newConn(t, func(reqs []codec.StreamRequest, res *transport.Response) error {
		resp := &res.Pipeline
		resp.Results = append(resp.Results[:0], codec.StreamResult{Error: codec.Error{Code: "SQL_PARSE_ERROR", Message: "no"}},
			codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestExecute}})
		return nil
	})
	c.Persist("a", codec.Stmt{SQL: "PRAGMA a = 1"})
	_, err := c.Execute(context.Background(), &codec.Stmt{SQL: "SELECT 1"})
	if !hasCode(err, "SQL_PARSE_ERROR") || !strings.Contains(err.Error(), `connection setting "PRAGMA a = 1" failed: no`) {
		t.Fatalf("%v", err)
	}
}

// The facts of a *transport.Error the tests check.
func asError(err error) *transport.Error {
	var e *transport.Error
	if errors.As(err, &e) {
		return e
	}
	return &transport.Error{}
}

func hasCode(err error, code string) bool { return asError(err).Code == code }
func isStatement(err error) bool          { return asError(err).Statement }
func isSafe(err error) bool               { return asError(err).Safe }
func isResend(err error) bool             { return asError(err).Resend }

// sideTransport records the cursors opened on its streams.
type sideTransport struct {
	opened []bool // the end of each OpenCursor
	setups [][]codec.StreamRequest
}

func (s *sideTransport) NewStream() transport.Stream { return &sideStream{t: s} }
func (s *sideTransport) Close() error                { return nil }

type sideStream struct {
	fakeStream
	t *sideTransport
}

func (s *sideStream) OpenCursor(_ context.Context, _ *codec.Batch, end bool, setup []codec.StreamRequest) (transport.Cursor, error) {
	s.t.opened = append(s.t.opened, end)
	s.t.setups = append(s.t.setups, setup)
	return nil, &transport.Error{Message: "side cursor opened", Safe: true}
}

// TestSideCursors: with a side transport, a cursor outside Hold on a
// stream that holds no state runs there, on a stream that ends with it,
// with the settings replayed; inside Hold, or for a statement that reads
// the connection's own values, it stays on the Conn's stream.
func TestSideCursors(t *testing.T) {
	c, _ := newConn(t)
	side := &sideTransport{}
	c.SetSideCursors(side)
	c.Persist("fk", codec.Stmt{SQL: "PRAGMA foreign_keys = OFF"})
	ctx := context.Background()
	steps := []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT * FROM big", WantRows: true}}}
	if _, err := c.OpenCursor(ctx, steps); err == nil || !strings.Contains(err.Error(), "side cursor opened") {
		t.Fatalf("outside Hold: %v, want the side cursor", err)
	}
	if len(side.opened) != 1 || !side.opened[0] || len(side.setups[0]) != 1 {
		t.Fatalf("side cursors %v with setups %v", side.opened, side.setups)
	}
	own := []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT last_insert_rowid()", WantRows: true}}}
	if _, err := c.OpenCursor(ctx, own); err == nil || strings.Contains(err.Error(), "side cursor opened") {
		t.Fatalf("a connection value went to a side cursor: %v", err)
	}
	c.Hold()
	if _, err := c.OpenCursor(ctx, steps); err == nil || strings.Contains(err.Error(), "side cursor opened") {
		t.Fatalf("inside Hold: %v, want the Conn's stream", err)
	}
	if len(side.opened) != 1 {
		t.Fatalf("%d side cursors, want 1", len(side.opened))
	}
}
