package localdb

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// libsqlFile makes a file whose schema has what libSQL writes and vanilla
// SQLite cannot use: a vector index (an expression index on
// libsql_vector_idx whose b-tree libSQL keeps empty), a RANDOM ROWID
// table, and, if lost, a table whose schema row was deleted (its pages
// then belong to no b-tree: a real fault). The schema text is set with
// writable_schema, as sqld's would read.
func libsqlFile(t *testing.T, lost bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "libsql.db")
	db, err := sql.Open("sqlite", DSN(path, "journal_mode(WAL)"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	execAll(t, db,
		"CREATE TABLE v (id INTEGER PRIMARY KEY, emb BLOB, tag TEXT)",
		"CREATE INDEX v_idx ON v (abs(emb))", // empty: made before the rows
		"CREATE INDEX v_tag ON v (tag)",
		"CREATE TABLE r (x)",
		"CREATE TABLE gone (x)",
		"INSERT INTO gone VALUES (randomblob(5000))",
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX v_idx ON v (libsql_vector_idx(emb))' WHERE name = 'v_idx'",
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE r (x) RANDOM ROWID' WHERE name = 'r'",
		"PRAGMA writable_schema = OFF",
	)
	if lost {
		if _, err := db.Exec("PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = 'gone'; PRAGMA writable_schema = OFF"); err != nil {
			t.Fatal(err)
		}
	}
	// The rows go in through the replica's driver, which does not load
	// v_idx, so that its b-tree stays empty as libSQL's does.
	w, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	execAll(t, w,
		`INSERT INTO v WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 100)
			SELECT x, randomblob(16), 't' || (x % 3) FROM g`,
		"INSERT INTO r SELECT id FROM v WHERE id <= 10",
	)
	return path
}

// TestLibSQLSchema: the replica's connections load every object of a
// libSQL schema but the vector index, so no plan reads its empty b-tree
// (vanilla SQLite counts 0 rows through it) and a RANDOM ROWID table
// reads as an ordinary one (vanilla SQLite fails every statement on it).
func TestLibSQLSchema(t *testing.T) {
	path := libsqlFile(t, false)
	plain, err := sql.Open("sqlite", DSN(path, "query_only(1)"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var n int
	if err := plain.QueryRow("SELECT count(*) FROM v").Scan(&n); err == nil || !strings.Contains(err.Error(), "malformed database schema (r)") {
		t.Errorf("vanilla SQLite: %d, %v; want malformed database schema (r)", n, err)
	}

	db, err := OpenReaders(path, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for q, want := range map[string]int{
		"SELECT count(*) FROM v":                      100,
		"SELECT count(*) FROM v INDEXED BY v_tag":     100,
		"SELECT count(*) FROM (SELECT id FROM v)":     100,
		"SELECT count(*) FROM r":                      10,
		"SELECT count(*) FROM v JOIN r ON r.x = v.id": 10,
	} {
		if err := db.QueryRow(q).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", q, n, err, want)
		}
	}
	ctx := context.Background()
	unloaded, err := Unloaded(ctx, db)
	if err != nil || !slices.Equal(unloaded, []Object{{"index", "v_idx"}}) {
		t.Errorf("Unloaded: %v, %v; want the index v_idx", unloaded, err)
	}
	for _, quick := range []bool{false, true} {
		if got, err := IntegrityCheck(ctx, db, quick, 0); err != nil || !slices.Equal(got, []string{"ok"}) {
			t.Errorf("IntegrityCheck(quick %v): %q, %v", quick, got, err)
		}
	}
}

// TestIntegrityCheckReportsFaults: pages that no b-tree of the schema
// reaches are still reported, up to the limit, when they are not the
// unloaded objects'.
func TestIntegrityCheckReportsFaults(t *testing.T) {
	path := libsqlFile(t, true)
	db, err := OpenReaders(path, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	got, err := IntegrityCheck(ctx, db, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.HasPrefix(got[0], dbHeader+"\n") || !strings.Contains(strings.Join(got, "\n"), "never used") {
		t.Fatalf("IntegrityCheck of a file with a lost table: %q", got)
	}
	lines := 0
	for _, row := range got {
		for _, line := range strings.Split(row, "\n") {
			if line != dbHeader {
				lines++
			}
		}
	}
	if lines < 2 {
		t.Fatalf("the lost table's pages: %q, want 2 or more (a root and overflow)", got)
	}
	one, err := IntegrityCheck(ctx, db, false, 1)
	if err != nil || len(one) != 1 || strings.Count(one[0], "\n") != 1 {
		t.Errorf("limit 1: %q, %v", one, err)
	}
}

// TestConnectionsOpenOnLibSQLSchema: each kind of connection to a local
// file (the File's, the offline writer's, the readers') opens and reads
// a file whose schema vanilla SQLite cannot load whole: writable_schema
// runs before any pragma that loads the schema (DSN).
func TestConnectionsOpenOnLibSQLSchema(t *testing.T) {
	path := libsqlFile(t, false)
	writer, err := OpenWriter(path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	file, err := openKeyDB(path, nil, filePragmas...)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	readers, err := OpenReaders(path, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer readers.Close()
	for name, db := range map[string]*sql.DB{"file": file, "writer": writer, "readers": readers} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM r").Scan(&n); err != nil || n != 10 {
			t.Errorf("%s: %d, %v; want 10", name, n, err)
		}
	}
}
