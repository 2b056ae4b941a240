package libsql_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// Every request after a result that reported an index carries the
// highest index seen, on any connection of the pool: statements, scripts,
// describes and cursors; a cursor's final entry leaves it alone
// (PROTOCOL.md §7.2.6: a client MUST NOT interpret it); a write
// answered with less than it asked for (the primary's log was reset)
// lowers it; a context's index goes out when it is higher.
func TestFakeReplicationIndexSent(t *testing.T) {
	t.Parallel()
	const ins, sel, script = "INSERT INTO t VALUES (1)", "SELECT a FROM t", "CREATE TABLE a (x); CREATE TABLE b (y)"
	c1 := fs.Baton(1)
	srv := fs.New(t, auto(fs.SQL(ins), withIndex(fs.Inserted(1, 1), 5)),
		fs.Pipeline("", fs.Execute(fs.SQL(sel)).Index(5), fs.Close()).Respond("", fs.ExecuteOK(withIndex(fs.Query(fs.Cols("a")), 5)), fs.CloseOK()),
		// A context asks for 3845; the answer, 24, proves a reset.
		fs.Pipeline("", fs.Execute(fs.SQL(ins)).Index(3845), fs.Close()).Respond("", fs.ExecuteOK(withIndex(fs.Inserted(1, 2), 24)), fs.CloseOK()),
		fs.Pipeline("", fs.Execute(fs.SQL(script)).Index(24), fs.Close()).Respond("", fs.Fail("SQL_MANY_STATEMENTS", "many"), fs.CloseOK()),
		fs.Pipeline("", fs.Sequence(script).Index(24), fs.Close()).Respond("", fs.SequenceOK(), fs.CloseOK()),
		// A result over the response limit, streamed: describe and the
		// cursor carry the index too (the cursor's batch is not compared
		// here), and the cursor's final entry (30) is not read.
		fs.Pipeline("", fs.Execute(fs.SQL(bigSQL)).Index(24), fs.Close()).Respond("", fs.Fail("RESPONSE_TOO_LARGE", tooLarge), fs.CloseOK()),
		fs.Pipeline("", fs.Describe(bigSQL).Index(24), fs.Close()).Respond("", fs.DescribeOK(true), fs.CloseOK()),
		fs.Cursor("", fs.Step(fs.SQL(bigSQL))).AnyBody().Stream(c1, fs.StepBegin(0, bigCols...), bigRow(1, "ada"), fs.StepEnd(), fs.ReplicationIndex(30)),
		closeStream(c1),
		fs.Pipeline("", fs.Execute(fs.SQL(sel)).Index(24), fs.Close()).Respond("", fs.ExecuteOK(fs.Query(fs.Cols("a"))), fs.CloseOK()),
	)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(2)
	ctx := context.Background()
	mustExec := func(ctx context.Context, sql string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(ctx, ins)
	pinned(t, db) // another connection of the pool, held open meanwhile
	mustQuery(t, db, sel)
	mustExec(libsql.WithReplicationIndex(ctx, 3845), ins)
	if idx, err := libsql.ReplicationIndex(ctx, db); err != nil || idx != 24 {
		t.Fatalf("ReplicationIndex after the reset = %d, %v; want 24", idx, err)
	}
	mustExec(ctx, script)
	mustQuery(t, db, bigSQL, sel)
	srv.Verify()
}

// With readYourWrites=0 nothing is kept or sent but an index from the
// context.
func TestFakeReplicationOff(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	srv := fs.New(t, auto(fs.SQL(ins), withIndex(fs.Inserted(1, 1), 5)),
		auto(fs.SQL(ins), withIndex(fs.Inserted(1, 2), 6)),
		fs.Pipeline("", fs.Execute(fs.SQL(ins)).Index(77), fs.Close()).Respond("", fs.ExecuteOK(withIndex(fs.Inserted(1, 3), 7)), fs.CloseOK()),
	)
	cfg, err := libsql.ParseDSN(srv.URL + "?readYourWrites=0&codec=direct&keepStreams=0")
	if err != nil {
		t.Fatal(err)
	}
	connector := mustConnector(t, cfg)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	for _, ctx := range []context.Context{context.Background(), context.Background(), libsql.WithReplicationIndex(context.Background(), 77)} {
		if _, err := db.ExecContext(ctx, ins); err != nil {
			t.Fatal(err)
		}
	}
	if idx := connector.ReplicationIndex(); idx != 0 {
		t.Fatalf("index %d kept with readYourWrites=0", idx)
	}
	srv.Verify()
}
