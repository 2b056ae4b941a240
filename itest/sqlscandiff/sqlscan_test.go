// Package sqlscandiff checks sqlscan against SQLite itself
// (modernc.org/sqlite's C API): parameters against a prepared statement's
// sqlite3_bind_parameter_count and _name, statement boundaries against
// sqlite3_prepare_v2's tail and sqlite3_complete, ReadOnly against
// sqlite3_stmt_readonly and TxControl against the opcodes of the compiled
// statement. Only texts SQLite prepares are compared. It needs no server,
// so it lives apart from the itest package, whose TestMain starts one.
package sqlscandiff

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gohrana/libsql/sqlscan"
)

const schema = `CREATE TABLE t (a, b, c);
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, created INTEGER);
CREATE TABLE "odd ""name""" (x);`

var corpus = []string{
	// Parameters of every kind, and SQLite's numbering of them.
	"SELECT ?",
	"SELECT ?, ?, ?",
	"SELECT ?3, ?, ?1",
	"SELECT ?, ?1",
	"SELECT ?01, ?1, ?2",
	"SELECT ?32766",
	"SELECT :a, @b, $c, #d, :a, @b",
	"SELECT :a, :A",
	"SELECT :a, ?, ?1, ?5, :b",
	"SELECT ?2, :a, :a, ?",
	"SELECT $a::b, $a::b(c), $x(y:z), @w(1), :v::u",
	"SELECT :::a, $::b",
	"SELECT :é, $表, @ü1",
	"SELECT :a$b, $a$b",
	"SELECT a FROM t WHERE a = :a AND b = $b OR c = @c",
	"INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
	"INSERT INTO t VALUES (:a, :b, :c) RETURNING a",
	"UPDATE t SET a = ?1 WHERE b = ?2 AND c = ?1",
	"DELETE FROM t WHERE a IN (?, ?, ?)",

	// What hides a parameter or a ';'.
	"SELECT ':a' AS \"?\", 1 AS `$c`, 2 AS [d:e] -- :x\n /* @y */ , :z FROM \"odd \"\"name\"\"\"",
	"SELECT 'it''s :a ; ?' || :b",
	"SELECT x'ab', X'', 1e5, 0x1F, .5, 1., 1_000 FROM t WHERE a = ?",
	"SELECT /* ; :a */ ? -- ; ?\n",
	"SELECT 1 /* unterminated ; :a",
	"SELECT 1 -- ; :a",
	"SELECT a||b, a->'x', a->>'y', a<>b, a!=b, a==b, a<<1, a>>1, ~a FROM t WHERE a >= ? AND b <= ?",
	"\xef\xbb\xbfSELECT ?",
	"SELECT 1 \v, ?",
	"SELECT [a;b] FROM (SELECT 1 AS [a;b])",

	// Several statements, empty ones, and a trigger whose body has ';'.
	"SELECT 1; SELECT ?",
	"SELECT :a; SELECT :b, :a;",
	";; SELECT 1 ;; ; SELECT 2 ; ",
	"; SELECT ?",
	"SELECT 1;-- done",
	"SELECT 1; /* done */",
	";",
	"",
	"  -- nothing\n",
	"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; UPDATE t SET a = 1; END",
	"CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT ';'; END; SELECT ?",
	"CREATE TRIGGER t1r1 UPDATE ON t BEGIN SELECT 1; END;",
	"create temporary trigger tr delete on t begin delete from users; insert into users (name) values ('x'); end ; ;",
	"CREATE TRIGGER tr AFTER INSERT ON t WHEN new.a > 0 BEGIN SELECT CASE WHEN new.a = 1 THEN 2 END; END; SELECT 1",
	"CREATE TRIGGER IF NOT EXISTS tr BEFORE DELETE ON t FOR EACH ROW BEGIN SELECT RAISE(ABORT, 'no'); END /* c */ ; -- d\n",
	"EXPLAIN CREATE TRIGGER tr INSERT ON t BEGIN SELECT 1; END; SELECT :x",
	"EXPLAIN QUERY PLAN SELECT ?; CREATE TRIGGER tr INSERT ON t BEGIN UPDATE t SET b = new.a; END",
	"CREATE TABLE trigger (x); SELECT 1",
	"CREATE VIEW v AS SELECT 1 AS \"end\"; SELECT * FROM t",

	// Reads, writes and EXPLAIN.
	"SELECT * FROM users",
	"VALUES (1), (?)",
	"WITH x AS (SELECT 1 AS n) SELECT n FROM x",
	"WITH x AS (SELECT 'insert' AS v, 1 AS \"delete\") SELECT * FROM x",
	"WITH x AS (SELECT 1) INSERT INTO t (a) SELECT * FROM x",
	"WITH x AS (SELECT a FROM t) UPDATE t SET a = 1",
	"WITH x AS (SELECT replace(a, 'b', 'c') FROM t) SELECT * FROM x",
	"EXPLAIN SELECT ?",
	"EXPLAIN QUERY PLAN DELETE FROM t WHERE a = ?",
	"EXPLAIN BEGIN",
	"REPLACE INTO t VALUES (1, 2, 3)",
	"CREATE TABLE u (x)",
	"PRAGMA foreign_keys = OFF",
	"PRAGMA main.cache_size = -2000",
	"PRAGMA table_info(t)",

	// Transaction control.
	"BEGIN",
	"/* note */ BEGIN",
	"-- note\nbegin immediate",
	"BEGIN DEFERRED TRANSACTION",
	"BEGIN EXCLUSIVE TRANSACTION tx",
	"BEGIN TRANSACTION 'tx'",
	"COMMIT",
	"COMMIT TRANSACTION",
	"END",
	"END TRANSACTION tx",
	"ROLLBACK",
	"ROLLBACK TRANSACTION tx",
	"ROLLBACK TO sp",
	"ROLLBACK TO SAVEPOINT sp",
	"ROLLBACK TRANSACTION TO SAVEPOINT \"sp\"",
	"ROLLBACK TRANSACTION tx TO [sp]",
	"SAVEPOINT sp",
	"SAVEPOINT 'sp';",
	"RELEASE sp",
	"RELEASE SAVEPOINT sp",
	"BEGIN; COMMIT",
}

func TestSQLScanCorpus(t *testing.T) {
	o := theOracle(t)
	for _, sql := range corpus {
		if !o.compare(t, sql) {
			t.Errorf("SQLite refuses %q; the corpus is of texts SQLite prepares", sql)
		}
	}
}

func FuzzSQLScanDifferential(f *testing.F) {
	for _, sql := range corpus {
		f.Add(sql)
	}
	o := theOracle(f)
	f.Fuzz(func(t *testing.T, sql string) {
		o.compare(t, sql)
	})
}

// oracle is an in-memory SQLite database with the schema, for one
// goroutine at a time.
type oracle struct {
	mu  sync.Mutex
	tls *libc.TLS
	db  uintptr
}

var (
	once      sync.Once
	shared    *oracle
	sharedErr string
)

func theOracle(tb testing.TB) *oracle {
	once.Do(func() { shared, sharedErr = open() })
	if sharedErr != "" {
		tb.Fatal(sharedErr)
	}
	return shared
}

func open() (*oracle, string) {
	o := &oracle{tls: libc.NewTLS()}
	pDB := o.tls.Alloc(8)
	defer o.tls.Free(8)
	name := o.cstring(":memory:")
	defer libc.Xfree(o.tls, name)
	if rc := sqlite3.Xsqlite3_open(o.tls, name, pDB); rc != sqlite3.SQLITE_OK {
		return nil, "sqlite3_open failed"
	}
	o.db = load(pDB)
	z := o.cstring(schema)
	defer libc.Xfree(o.tls, z)
	if rc := sqlite3.Xsqlite3_exec(o.tls, o.db, z, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return nil, "creating the schema: " + libc.GoString(sqlite3.Xsqlite3_errmsg(o.tls, o.db))
	}
	return o, ""
}

// load returns the pointer stored at p, in C memory: libc's allocator
// maps it outside the Go heap, so the address is stable.
func load(p uintptr) uintptr { return *(*uintptr)(unsafe.Add(nil, p)) }

func (o *oracle) cstring(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		panic(err) // out of memory
	}
	return p
}

// statement is what SQLite makes of one statement of a text.
type statement struct {
	start, end int // the statement's span in the text, from the previous tail to its own
	names      []string
	explain    bool
	readOnly   bool           // sqlite3_stmt_readonly, which for EXPLAIN is the listed program's
	tx         sqlscan.TxKind // from the program's opcodes
}

// prepare prepares every statement of sql in turn, as sqlite3_prepare_v2
// splits it; ok is false if SQLite refuses any.
func (o *oracle) prepare(sql string) (stmts []statement, ok bool) {
	z := o.cstring(sql)
	defer libc.Xfree(o.tls, z)
	pp := o.tls.Alloc(16)
	defer o.tls.Free(16)
	ppStmt, pzTail := pp, pp+8
	for off := 0; off < len(sql); {
		rc := sqlite3.Xsqlite3_prepare_v2(o.tls, o.db, z+uintptr(off), -1, ppStmt, pzTail)
		stmt := load(ppStmt)
		tail := int(load(pzTail) - z)
		if rc != sqlite3.SQLITE_OK {
			sqlite3.Xsqlite3_finalize(o.tls, stmt)
			return nil, false
		}
		if stmt != 0 {
			st := statement{start: off, end: tail,
				explain:  sqlite3.Xsqlite3_stmt_isexplain(o.tls, stmt) != 0,
				readOnly: sqlite3.Xsqlite3_stmt_readonly(o.tls, stmt) != 0}
			for i := range sqlite3.Xsqlite3_bind_parameter_count(o.tls, stmt) {
				st.names = append(st.names, libc.GoString(sqlite3.Xsqlite3_bind_parameter_name(o.tls, stmt, i+1)))
			}
			st.tx = o.txKind(stmt)
			sqlite3.Xsqlite3_finalize(o.tls, stmt)
			stmts = append(stmts, st)
		}
		if tail <= off {
			break
		}
		off = tail
	}
	return stmts, true
}

// txKind lists the program of stmt, without running it, and returns the
// transaction control its opcodes do: OP_AutoCommit for BEGIN, COMMIT and
// ROLLBACK, OP_Savepoint for SAVEPOINT, RELEASE and ROLLBACK TO. An
// EXPLAIN statement runs nothing.
func (o *oracle) txKind(stmt uintptr) sqlscan.TxKind {
	if sqlite3.Xsqlite3_stmt_isexplain(o.tls, stmt) != 0 {
		return sqlscan.NotTx
	}
	if sqlite3.Xsqlite3_stmt_explain(o.tls, stmt, 1) != sqlite3.SQLITE_OK {
		panic("sqlite3_stmt_explain failed")
	}
	k := sqlscan.NotTx
	for sqlite3.Xsqlite3_step(o.tls, stmt) == sqlite3.SQLITE_ROW {
		op := libc.GoString(sqlite3.Xsqlite3_column_text(o.tls, stmt, 1))
		p1 := sqlite3.Xsqlite3_column_int(o.tls, stmt, 2)
		p2 := sqlite3.Xsqlite3_column_int(o.tls, stmt, 3)
		switch {
		case op == "AutoCommit" && p1 == 0:
			k = sqlscan.TxBegin
		case op == "AutoCommit" && p2 == 0:
			k = sqlscan.TxCommit
		case op == "AutoCommit":
			k = sqlscan.TxRollback
		case op == "Savepoint":
			k = [...]sqlscan.TxKind{sqlscan.TxSavepoint, sqlscan.TxRelease, sqlscan.TxRollbackTo}[p1]
		}
	}
	return k
}

// complete is sqlite3_complete.
func (o *oracle) complete(sql string) bool {
	z := o.cstring(sql)
	defer libc.Xfree(o.tls, z)
	return sqlite3.Xsqlite3_complete(o.tls, z) != 0
}

// compare checks sqlscan against SQLite on sql, if SQLite prepares all of
// it, and reports whether it did.
func (o *oracle) compare(t *testing.T, sql string) bool {
	t.Helper()
	if strings.IndexByte(sql, 0) >= 0 {
		return false // a C string ends there
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	stmts, ok := o.prepare(sql)
	if !ok {
		return false
	}
	multi := sqlscan.ScanParams(sql).Multi
	if want := len(stmts) > 1; multi != want {
		t.Errorf("ScanParams(%q).Multi = %v; SQLite prepares %d statements", sql, multi, len(stmts))
	}
	for _, st := range stmts {
		text := sql[st.start:st.end]
		if names := sqlscan.ScanParams(text).Names; !slices.Equal(names, st.names) {
			t.Errorf("ScanParams(%q).Names = %q; SQLite has %q", text, names, st.names)
		}
		if end := sqlscan.StatementEnd(sql[st.start:]); st.start+end != st.end {
			t.Errorf("in %q the statement at %d ends at %d; sqlite3_prepare_v2's tail is at %d", sql, st.start, st.start+end, st.end)
		}
		if sqlscan.ReadOnly(text) && !st.readOnly && !st.explain {
			t.Errorf("ReadOnly(%q), but SQLite's program writes (sqlite3_stmt_readonly)", text)
		}
		if k := sqlscan.TxControl(text); k != st.tx {
			t.Errorf("TxControl(%q) = %v; SQLite's program is %v", text, k, st.tx)
		}
	}
	// sqlite3_complete's own tokenizer takes a vertical tab and a byte
	// order mark for other tokens than SQLite's parser does (and sqlscan,
	// which follows the parser): a "\v;" is no end to it.
	if strings.Contains(sql, "\v") || strings.Contains(sql, "\xef\xbb\xbf") {
		return true
	}
	// After every token but white space and comments, the text so far is
	// complete just when the token is a ';' outside a trigger's body.
	inBody := bodySemicolons(sql)
	s := sqlscan.NewScanner(sql)
	for tok := s.Next(); tok.Kind != sqlscan.EOF; tok = s.Next() {
		if tok.Kind == sqlscan.Space || tok.Kind == sqlscan.Comment {
			continue
		}
		if want := tok.Kind == sqlscan.Semicolon && !inBody[tok.Start]; o.complete(sql[:tok.End]) != want {
			t.Errorf("sqlite3_complete(%q) = %v after a %v token", sql[:tok.End], !want, tok.Kind)
		}
	}
	return true
}

// bodySemicolons returns the offsets of the ';' that sqlscan puts inside
// a statement (a trigger's body): after the statement's first token but
// ';', before its end.
func bodySemicolons(sql string) map[int]bool {
	in := map[int]bool{}
	for off := 0; off < len(sql); {
		end := off + sqlscan.StatementEnd(sql[off:])
		begun := false
		s := sqlscan.NewScanner(sql[off:end])
		for tok := s.Next(); tok.Kind != sqlscan.EOF; tok = s.Next() {
			switch tok.Kind {
			case sqlscan.Space, sqlscan.Comment:
			case sqlscan.Semicolon:
				if begun && off+tok.End < end {
					in[off+tok.Start] = true
				}
			default:
				begun = true
			}
		}
		off = end
	}
	return in
}
