package otellibsql_test

// The driver wrapped by github.com/XSAM/otelsql: every optional
// database/sql interface it forwards reaches the driver (each is shown by
// what only the driver does), the driver's spans nest under otelsql's, and
// libsql.Batch works on a *sql.Conn of the wrapped database.

import (
	"database/sql"
	"database/sql/driver"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/XSAM/otelsql"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// parentOf returns the name of the parent of the one span named name.
func (r *recording) parentOf(t *testing.T, name string) string {
	t.Helper()
	s := r.one(t, name)
	for _, p := range r.spans() {
		if p.SpanContext.SpanID() == s.Parent.SpanID() {
			return p.Name
		}
	}
	return ""
}

// wantParent checks that the one span named child is a child of one named
// parent.
func wantParent(t *testing.T, r *recording, child, parent string) {
	t.Helper()
	if got := r.parentOf(t, child); got != parent {
		t.Errorf("the parent of %s is %q, want %q; spans:\n%s", child, got, parent, r.tree())
	}
}

// openWrapped opens srv's database through otelsql, both tracing into r.
func openWrapped(t *testing.T, srv *fs.Server, r *recording) *sql.DB {
	t.Helper()
	cfg := fakeConfig(srv)
	cfg.DisableReadYourWrites = true
	c, err := libsql.NewConnector(cfg, libsql.WithTracer(newTracer(r)))
	if err != nil {
		t.Fatal(err)
	}
	db := otelsql.OpenDB(c, otelsql.WithTracerProvider(r), otelsql.WithSpanOptions(otelsql.SpanOptions{Ping: true}))
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

func TestOtelsql(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t (v) VALUES (?)"
	b1 := fs.Baton(1)
	srv := fs.New(t)
	rec := newRecording(t)
	db := openWrapped(t, srv, rec)
	ctx := t.Context()

	t.Run("Pinger", func(t *testing.T) {
		srv.Add(fs.Pipeline("", fs.Close()).Respond("", fs.CloseOK()))
		if err := db.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		wantParent(t, rec, "libsql.request", "sql.conn.ping") // the ping reached the server
	})

	t.Run("ExecerContext and NamedValueChecker", func(t *testing.T) {
		rec.reset()
		// NaN goes out as NULL: the driver's CheckNamedValue did that.
		srv.Add(auto(fs.SQL(ins, fs.Null()).WantRows(false), fs.Inserted(1, 1)))
		if _, err := db.ExecContext(ctx, ins, math.NaN()); err != nil {
			t.Fatal(err)
		}
		wantParent(t, rec, "INSERT", "sql.conn.exec")
		wantParent(t, rec, "libsql.request execute", "INSERT")
		// Text that is not UTF-8 is refused before anything is sent.
		n := srv.Count()
		if _, err := db.ExecContext(ctx, ins, string([]byte{0xff, 'a'})); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Fatalf("invalid UTF-8: %v", err)
		}
		if srv.Count() != n {
			t.Fatal("invalid UTF-8 was sent")
		}
	})

	t.Run("QueryerContext", func(t *testing.T) {
		rec.reset()
		srv.Add(auto(fs.SQL("SELECT v FROM t"), fs.Query(fs.Cols("v"), fs.Vals(fs.Text("a")))))
		var v string
		if err := db.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != "a" {
			t.Fatalf("%q, %v", v, err)
		}
		wantParent(t, rec, "SELECT", "sql.conn.query")
	})

	t.Run("ConnPrepareContext", func(t *testing.T) {
		rec.reset()
		// Prepare checks the statement with describe.
		srv.Add(fs.Pipeline("", fs.Describe(ins), fs.Close()).Respond("", fs.DescribeParamsOK(false, ""), fs.CloseOK()))
		srv.Add(auto(fs.SQL(ins, fs.Text("b")).WantRows(false), fs.Inserted(1, 2)))
		st, err := db.PrepareContext(ctx, ins)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.ExecContext(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		rec.one(t, "sql.conn.prepare")
		wantParent(t, rec, "INSERT", "sql.stmt.exec")
	})

	t.Run("ConnBeginTx", func(t *testing.T) {
		rec.reset()
		// The driver's own errors and options: serializable only, and
		// read-only transactions that ask describe before they write.
		if _, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted}); err == nil ||
			!strings.Contains(err.Error(), "SQLite transactions are serializable") {
			t.Fatalf("BeginTx at read committed: %v", err)
		}
		srv.Add(fs.Pipeline("", fs.Describe("DELETE FROM t"), fs.Close()).Respond("", fs.DescribeOK(false), fs.CloseOK()))
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM t"); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Fatalf("a write in a read-only transaction: %v", err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		wantParent(t, rec, "libsql.request describe", "DELETE")
		// driver.Tx's Rollback takes no context: the driver's span is
		// one of the context BeginTx had.
		wantParent(t, rec, "ROLLBACK", "sql.conn.begin_tx")
	})

	t.Run("Validator and SessionResetter", func(t *testing.T) {
		rec.reset()
		// A transaction begun with SQL makes the connection invalid for
		// the pool; ResetSession abandons it, which closes its stream.
		srv.Add(fs.Pipeline("", fs.Execute(fs.SQL("BEGIN")), fs.GetAutocommit()).
			Respond(b1, fs.ExecuteOK(fs.Empty()), fs.GetAutocommitOK(false)),
			fs.Pipeline(b1, fs.Close()).Respond("", fs.CloseOK()))
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		err = conn.Raw(func(dc any) error {
			v, r := dc.(driver.Validator), dc.(driver.SessionResetter)
			if v.IsValid() {
				t.Error("IsValid with a transaction open")
			}
			if err := r.ResetSession(ctx); err != nil {
				t.Errorf("ResetSession: %v", err)
			}
			if !v.IsValid() {
				t.Error("not IsValid after ResetSession")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !srv.Await(5 * time.Second) {
			t.Fatal("the abandoned transaction's stream was not closed")
		}
	})

	t.Run("Batch", func(t *testing.T) {
		rec.reset()
		inTx := func(i int) fs.Cond { return fs.And(fs.OK(i), fs.Not(fs.IsAutocommit())) }
		srv.Add(fs.Pipeline("", fs.Batch(fs.Step(fs.SQL("BEGIN DEFERRED")), fs.Step(fs.SQL(ins, fs.Text("c"))).If(inTx(0)),
			fs.Step(fs.SQL("COMMIT")).If(inTx(1)), fs.Step(fs.SQL("ROLLBACK")).If(fs.Not(fs.OK(2)))), fs.Close()).
			Respond("", fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Inserted(1, 3)), fs.StepOK(fs.Empty()), fs.StepSkipped()), fs.CloseOK()))
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		out, err := libsql.Batch(ctx, conn, []libsql.Statement{{SQL: ins, Args: []any{"c"}}})
		if err != nil || len(out) != 1 || out[0].LastInsertID != 3 {
			t.Fatalf("%+v, %v", out, err)
		}
		wantParent(t, rec, "libsql.request batch", "BATCH")
	})
}
