package libsql_test

import (
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

const pragmaOff, pragmaOn = "PRAGMA foreign_keys = OFF", "PRAGMA foreign_keys = ON"

// A PRAGMA assignment on a connection is replayed at the head of every
// server stream the connection opens afterwards, in the same request: the
// next autocommit statement, a transaction's first request (before BEGIN,
// where foreign_keys takes effect), and not its later ones. A new
// assignment of the same setting replaces the old one.
func TestFakePragmaPersists(t *testing.T) {
	t.Parallel()
	b1, b2 := fs.Baton(1), fs.Baton(2)
	const ins, del = "INSERT INTO t VALUES (1)", "DELETE FROM t"
	srv := fs.New(t, auto(fs.SQL(pragmaOff), fs.Empty()),
		fs.Pipeline("", fs.Execute(fs.SQL(pragmaOff)), fs.Execute(fs.SQL(ins)), fs.Close()).
			Respond("", fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(fs.Inserted(1, 1)), fs.CloseOK()),
		fs.Pipeline("", fs.Execute(fs.SQL(pragmaOff)), beginBatch(fs.SQL(del))).
			Respond(b1, fs.ExecuteOK(fs.Empty()), fs.BatchOK(fs.StepOK(fs.Empty()), fs.StepOK(fs.Updated(1)))),
		inTx(b1, b2, fs.SQL(ins), fs.Inserted(1, 2)),
		finish(b2, "COMMIT"),
		fs.Pipeline("", fs.Execute(fs.SQL(pragmaOff)), fs.Execute(fs.SQL(pragmaOn)), fs.Close()).
			Respond("", fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(fs.Empty()), fs.CloseOK()),
		fs.Pipeline("", fs.Execute(fs.SQL(pragmaOn)), fs.Execute(fs.SQL(ins)), fs.Close()).
			Respond("", fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(fs.Inserted(1, 3)), fs.CloseOK()),
	)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, pragmaOff)
	mustExec(t, db, ins)
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, del)
	mustExec(t, tx, ins)
	mustCommit(t, tx)
	mustExec(t, db, pragmaOn)
	mustExec(t, db, ins)
}

// _pragma settings of the DSN go first on every stream, and a setting that
// fails to apply is the statement's error, naming the setting.
func TestFakeDSNPragma(t *testing.T) {
	t.Parallel()
	const fk, busy = "PRAGMA foreign_keys(0)", "PRAGMA busy_timeout(100)"
	srv := fs.New(t, selectAfter(fk, busy, fs.ExecuteOK(fs.Empty())),
		selectAfter(fk, busy, fs.Fail("SQL_PARSE_ERROR", "bad pragma")))
	db := openDB(t, srv, "_pragma=foreign_keys(0)&_pragma=busy_timeout(100)")
	db.SetMaxOpenConns(1)
	wantOne(t, db)
	var n int
	err := db.QueryRow("SELECT 1").Scan(&n)
	wantErr(t, err, errs(libsql.ErrSyntax), nil, `connection setting "PRAGMA foreign_keys(0)" failed`, "bad pragma")
}

// Each _pragma setting of the DSN is replayed under its own key, its name
// with its schema: two settings of one schema both go first (the key was
// the schema alone for pragmas that are no connection setting, so the
// second replaced the first).
func TestFakeDSNPragmaSchema(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, selectAfter("PRAGMA main.journal_mode(WAL)", "PRAGMA main.user_version(3)", fs.ExecuteOK(fs.Empty())))
	db := openDB(t, srv, "_pragma=main.journal_mode(WAL)&_pragma=main.user_version(3)")
	wantOne(t, db)
}

// selectAfter is SELECT 1 on a new stream after the DSN's two settings a
// and b, a answered with aRes.
func selectAfter(a, b string, aRes fs.Result) fs.Exchange {
	return fs.Pipeline("", fs.Execute(fs.SQL(a)), fs.Execute(fs.SQL(b)), fs.Execute(fs.SQL("SELECT 1")), fs.Close()).
		Respond("", aRes, fs.ExecuteOK(fs.Empty()), fs.ExecuteOK(fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))), fs.CloseOK())
}
