package libsql_test

// libsql.Batch over HTTP against the scripted fake: the steps it sends and
// what it makes of the answers.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync/atomic"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

func TestFakeBatch(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		ins := fs.SQL("INSERT INTO t (v) VALUES (?)", fs.Text("a"))
		sel := fs.SQL("SELECT id, v, d FROM t")
		srv := newFake(t, tp, fs.Pipeline("", batchSteps("BEGIN IMMEDIATE", ins, sel), fs.Close()).Respond("", fs.BatchOK(
			fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 7)),
			fs.StepOK(fs.Query(fs.Cols("id", "v", "d"), fs.Vals(fs.Int(7), fs.Text("a"), fs.Blob([]byte{1, 2})))),
			fs.StepOK(fs.Empty()), fs.StepSkipped()), fs.CloseOK()))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		out, err := libsql.Batch(bg, c, []libsql.Statement{
			{SQL: "INSERT INTO t (v) VALUES (?)", Args: []any{"a"}},
			{SQL: "SELECT id, v, d FROM t"},
		}, libsql.WithBatchMode(libsql.BatchWrite))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || out[0].RowsAffected != 1 || out[0].LastInsertID != 7 {
			t.Fatalf("results %+v", out)
		}
		r := out[1]
		if len(r.Columns) != 3 || r.Columns[1] != "v" || len(r.Rows) != 1 {
			t.Fatalf("query result %+v", r)
		}
		if id, v, d := r.Rows[0][0], r.Rows[0][1], r.Rows[0][2].([]byte); id != int64(7) || v != "a" || len(d) != 2 || d[1] != 2 {
			t.Fatalf("row %#v", r.Rows[0])
		}
	})
}

// A failing statement names itself, keeps its class, and the batch rolled
// back: nothing is returned.
func TestFakeBatchFails(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		a, b := fs.SQL("INSERT INTO t VALUES (1)"), fs.SQL("INSERT INTO t VALUES (1)")
		srv := newFake(t, tp, fs.Pipeline("", batchSteps("BEGIN DEFERRED", a, b), fs.Close()).Respond("", fs.BatchOK(
			fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 1)),
			fs.StepFailed("SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.x"),
			fs.StepSkipped(), fs.StepOK(fs.Empty())), fs.CloseOK()))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		out, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "INSERT INTO t VALUES (1)"}, {SQL: "INSERT INTO t VALUES (1)"}})
		wantErr(t, err, errs(libsql.ErrUniqueViolation), errs(libsql.ErrTxLost), "batch statement #2", "rolled back", "UNIQUE constraint failed")
		if out != nil {
			t.Fatalf("results after a failure: %+v", out)
		}
	})
}

// Inside a transaction a batch runs in a savepoint; as the transaction's
// first request it carries its BEGIN.
func TestFakeBatchInTx(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		st := fs.SQL("UPDATE t SET v = 1")
		c, tx := pinnedTx(t, tp, "", nil, fs.Pipeline("", savepointSteps("BEGIN", st)).Respond(b1, fs.BatchOK(
			fs.StepOK(fs.Empty()), fs.StepOK(fs.Empty()), fs.StepOK(fs.Updated(3)), fs.StepOK(fs.Empty()),
			fs.StepSkipped(), fs.StepSkipped())),
			finish(b1, "COMMIT"))
		out, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "UPDATE t SET v = 1"}})
		if err != nil || len(out) != 1 || out[0].RowsAffected != 3 {
			t.Fatalf("%+v, %v", out, err)
		}
		mustCommit(t, tx)
	})
}

// A read batch refuses a statement that would write before sending
// anything but the describe.
func TestFakeBatchRead(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp, fs.Pipeline("", fs.Describe("DELETE FROM t"), fs.Close()).Respond("", fs.DescribeOK(false), fs.CloseOK()))
		db := openDB(t, srv, "")
		c := pinned(t, db)
		_, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "DELETE FROM t"}}, libsql.WithBatchMode(libsql.BatchRead))
		wantErr(t, err, errs(libsql.ErrReadOnly), nil, "batch statement #1")
	})
}

// wrappedDriver wraps the driver's connections as instrumentation does
// (github.com/XSAM/otelsql's connections have Raw() driver.Conn).
// Its connections count the writes Batch tells them of (ObserveWrite), as
// the embedded replica's do.
type wrappedDriver struct {
	inner  driver.Connector
	writes *atomic.Int32
}

func (w wrappedDriver) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := w.inner.Connect(ctx)
	return wrappedConn{c, w.writes}, err
}
func (w wrappedDriver) Driver() driver.Driver { return w.inner.Driver() }

type wrappedConn struct {
	driver.Conn
	writes *atomic.Int32
}

func (w wrappedConn) Raw() driver.Conn { return w.Conn }
func (w wrappedConn) ObserveWrite()    { w.writes.Add(1) }

func TestFakeBatchThroughWrapper(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		st := fs.SQL("DELETE FROM t")
		srv := newFake(t, tp, fs.Pipeline("", batchSteps("BEGIN DEFERRED", st), fs.Close()).Respond("", fs.BatchOK(
			fs.StepOK(fs.Empty()), fs.StepOK(fs.Updated(2)), fs.StepOK(fs.Empty()), fs.StepSkipped()), fs.CloseOK()))
		cfg := fakeConfig()
		setURL(cfg, srv.URL)
		var writes atomic.Int32
		db := sql.OpenDB(wrappedDriver{mustConnector(t, cfg), &writes})
		t.Cleanup(func() { _ = db.Close() }) // after c's, as pinned closes it
		c := pinned(t, db)
		out, err := libsql.Batch(bg, c, []libsql.Statement{{SQL: "DELETE FROM t"}})
		if err != nil || out[0].RowsAffected != 2 {
			t.Fatalf("%+v, %v", out, err)
		}
		if n := writes.Load(); n != 1 {
			t.Fatalf("the wrapper was told of %d writes, want 1", n)
		}
		// A read batch refused before it was sent wrote nothing.
		_, err = libsql.Batch(bg, c, []libsql.Statement{{SQL: "DELETE FROM t", Args: []any{make(chan int)}}})
		if err == nil || writes.Load() != 1 {
			t.Fatalf("a batch whose argument was refused: %v, %d writes told", err, writes.Load())
		}
	})
}
