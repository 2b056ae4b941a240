package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// localWrites writes to the replica file at path through a writer as
// offline writes do: growing the file, changing and freeing pages.
func localWrites(t *testing.T, path string) {
	t.Helper()
	w, err := OpenWriter(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	execAll(t, w,
		"INSERT INTO t SELECT value + 100000, printf('%0500d', value) FROM (WITH RECURSIVE g(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM g WHERE value < 300) SELECT value FROM g)",
		"UPDATE t SET v = 'local' WHERE k % 3 = 0",
		"DELETE FROM t WHERE k % 5 = 0",
		"CREATE TABLE local_only (x)",
	)
}

// restoreFixture opens, at a new path, a local file and a reader on it
// that have applied a source's table t (k INTEGER PRIMARY KEY, v TEXT)
// holding rows rows, v being k in digits digits (none if rows is 0): what
// the restore tests write locally over.
func restoreFixture(t *testing.T, ctx context.Context, rows, digits int) (src *source, f *File, r *sql.DB, path string) {
	t.Helper()
	src = newSource(t)
	path = filepath.Join(t.TempDir(), "replica.db")
	f, r = openLocal(t, path)
	src.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
	if rows > 0 {
		src.exec(fmt.Sprintf("INSERT INTO t SELECT value, printf('%%0%dd', value) FROM generate_series(1, %d)", digits, rows))
	}
	src.applyTo(ctx, f)
	return src, f, r, path
}

// TestRestore: after local writes, the transaction of the next commit
// writes back the primary's pages (from the main file, or from the base
// file once SaveBase ran and a last close checkpointed the local writes
// into the main file): the file is then the primary's, page for page.
func TestRestore(t *testing.T) {
	for _, saved := range []bool{false, true} {
		name := map[bool]string{false: "main file", true: "base file"}[saved]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := newSource(t)
			path := filepath.Join(t.TempDir(), "replica.db")
			f, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			src.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
			src.exec("INSERT INTO t SELECT value, printf('%0100d', value) FROM generate_series(1, 2000)")
			src.applyTo(ctx, f)
			if err := f.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			localWrites(t, path)
			if saved {
				if err := SaveBase(path, nil); err != nil {
					t.Fatal(err)
				}
				f.Close() // the last connection: its checkpoint moves the local writes in
				if _, err := os.Stat(path + "-wal"); err == nil {
					t.Fatal("the WAL outlived the last close: nothing was checkpointed")
				}
				if f, err = Open(ctx, path); err != nil {
					t.Fatal(err)
				}
			}
			defer f.Close()
			// modernc.org/sqlite's own driver: the replica's readers fail
			// integrity_check after a schema change (vector_top_k: unknown
			// connection), which is vector.go's to fix.
			r, err := sql.Open("sqlite", DSN(path, "query_only(1)", "busy_timeout(5000)"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := dump(t, r, "SELECT count(*) FROM t WHERE v = 'local'"); got == "0" {
				t.Fatal("no local writes")
			}

			src.exec("UPDATE t SET v = 'primary' WHERE k % 11 = 0")
			f.StartRestore()
			src.applyTo(ctx, f)
			if f.Restoring() {
				t.Fatal("still restoring after a commit")
			}
			if got, want := dump(t, r, contentQuery), dump(t, src.db, contentQuery); got != want {
				t.Fatalf("local %.80q, primary %.80q", got, want)
			}
			if got, want := dump(t, r, "PRAGMA page_count"), dump(t, src.db, "PRAGMA page_count"); got != want {
				t.Fatalf("page_count %s, want %s", got, want)
			}
			if got := integrity(t, r); got != "ok" {
				t.Fatalf("integrity_check %q", got)
			}
			if got := dump(t, r, "SELECT count(*) FROM sqlite_schema WHERE name = 'local_only'"); got != "0" {
				t.Fatal("the local table survived")
			}
			// The next commits apply as usual: growing, shrinking.
			for _, q := range []string{
				"INSERT INTO t SELECT value + 5000, printf('%0300d', value) FROM generate_series(1, 50)",
				"DELETE FROM t WHERE k % 2 = 0",
			} {
				src.exec(q)
				if err := f.Apply(ctx, src.commit()); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if got, want := dump(t, r, contentQuery), dump(t, src.db, contentQuery); got != want {
					t.Fatalf("%s: local %.80q, primary %.80q", q, got, want)
				}
			}
		})
	}
}

// TestRestoreAlone: a restore with no commit to apply runs in a
// transaction of its own.
func TestRestoreAlone(t *testing.T) {
	ctx := context.Background()
	src, f, r, path := restoreFixture(t, ctx, 500, 100)
	if err := f.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	localWrites(t, path)
	f.StartRestore()
	if err := f.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, r, contentQuery), dump(t, src.db, contentQuery); got != want {
		t.Fatalf("local %.80q, primary %.80q", got, want)
	}
	if got := integrity(t, r); got != "ok" {
		t.Fatalf("integrity_check %q", got)
	}
}

func TestBaseFileRefusesDamage(t *testing.T) {
	ctx := context.Background()
	_, f, _, path := restoreFixture(t, ctx, 0, 0)
	localWrites(t, path)
	if err := SaveBase(path, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(BasePath(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)-1], append(append([]byte(nil), data[:40]...), data[41:]...), {}} {
		if err := os.WriteFile(BasePath(path), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		f.StartRestore()
		if err := f.Restore(ctx); err == nil {
			t.Fatalf("a base file of %d bytes was used", len(bad))
		}
	}
	// RemoveBase removes it, and finds nothing to do the second time.
	for range 2 {
		if err := RemoveBase(path); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(BasePath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the base file outlived RemoveBase: %v", err)
	}
}

// TestRestoreSchemaCookie: local DDL and the primary's DDL that leave the
// same schema cookie with other root pages (the local writes create
// index a then b, the primary a table then b) must not leave a reader on
// the schema it parsed before the restore: every reader and the writer
// see the primary's schema and rows after it, and the file's cookie only
// grew (the caches rule, file.go).
func TestRestoreSchemaCookie(t *testing.T) {
	ctx := context.Background()
	src, f, r, path := restoreFixture(t, ctx, 300, 5)
	if err := f.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWriter(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	execAll(t, w, "CREATE INDEX a ON t (v DESC)", "CREATE INDEX b ON t (v)", "DELETE FROM t WHERE k > 200")
	const indexes = "SELECT group_concat(name) FROM (SELECT name FROM pragma_index_list('t') ORDER BY name)"
	const rows = "SELECT count(*) || '/' || coalesce(max(v), '') FROM t INDEXED BY b WHERE v >= '00150'"
	before := dump(t, r, "PRAGMA schema_version")
	if got := dump(t, r, indexes); got != "a,b" {
		t.Fatalf("local indexes %q", got)
	}
	dump(t, r, rows) // the reader parses the local schema and reads the index

	src.exec("CREATE TABLE pad (x)")
	src.exec("CREATE INDEX b ON t (v)")
	src.exec("INSERT INTO pad SELECT randomblob(500) FROM generate_series(1, 20)")
	if got, want := dump(t, src.db, "PRAGMA schema_version"), before; got != want {
		t.Fatalf("the source's cookie %s, the local one %s: the test needs them equal", got, want)
	}
	f.StartRestore()
	src.applyTo(ctx, f)
	for name, db := range map[string]*sql.DB{"reader": r, "writer": w} {
		if got, want := dump(t, db, indexes), dump(t, src.db, indexes); got != want {
			t.Errorf("%s: indexes %q after the restore, the primary's %q", name, got, want)
		}
		if got, want := dump(t, db, rows), dump(t, src.db, rows); got != want {
			t.Errorf("%s: %q after the restore, the primary's %q", name, got, want)
		}
		if got := integrity(t, db); got != "ok" {
			t.Errorf("%s: integrity_check %q", name, got)
		}
	}
	if after := dump(t, r, "PRAGMA schema_version"); after <= before {
		t.Errorf("the schema cookie went from %s to %s", before, after)
	}
	// A commit without DDL keeps the cookie; with DDL it grows again.
	for _, step := range []struct {
		sql  string
		grow bool
	}{{"INSERT INTO t VALUES (1000, 'x')", false}, {"CREATE INDEX c ON t (k, v)", true}} {
		was := dump(t, r, "PRAGMA schema_version")
		src.exec(step.sql)
		src.applyTo(ctx, f)
		if now := dump(t, r, "PRAGMA schema_version"); (now != was) != step.grow {
			t.Errorf("%s: the cookie went from %s to %s", step.sql, was, now)
		}
		if got, want := dump(t, r, indexes), dump(t, src.db, indexes); got != want {
			t.Errorf("%s: indexes %q, the primary's %q", step.sql, got, want)
		}
	}
}

// BenchmarkOpenWriter: what replacing the offline writer after a sync
// costs (embedded's offline.renew): a new connection and its first load of
// a schema of 40 tables.
func BenchmarkOpenWriter(b *testing.B) {
	path := filepath.Join(b.TempDir(), "w.db")
	db, err := OpenWriter(path, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for i := range 40 {
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE t%d (a, b, c)", i)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		w, err := OpenWriter(path, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		var n int
		if err := w.QueryRow("SELECT count(*) FROM t0").Scan(&n); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
}
