package localdb

import (
	"context"
	"path/filepath"
	"testing"
)

// A connection compiles a statement against the schema it has cached, and
// SQLite checks that schema against the file only when the statement runs,
// or when compiling failed on a name it could not find. A statement that
// the stale schema refuses for another reason (an ORDER BY term past the
// columns of a view redefined by another connection) would fail although
// the file accepts it: the replica's connections check their schema and
// compile again once (found by the differential tester).
func TestStaleSchemaCompilesAgain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	w, err := openDB(path, "journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	execAll(t, w, "CREATE TABLE t(a, b, c)", "INSERT INTO t VALUES (1, 2, 3)", "CREATE VIEW v AS SELECT a, b FROM t")
	r, err := OpenReaders(path, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct{ name, redefine, query string }{
		{"query", "CREATE VIEW v AS SELECT a, b, c FROM t", "SELECT * FROM v ORDER BY 1, 2, 3"},
		{"exec", "CREATE VIEW v AS SELECT a, b, c, a AS d FROM t", "SELECT * FROM v ORDER BY 1, 2, 3, 4"},
		{"prepare", "CREATE VIEW v AS SELECT a, b, c, a AS d, b AS e FROM t", "SELECT * FROM v ORDER BY 1, 2, 3, 4, 5"},
	}
	for _, tt := range tests {
		// The reader caches the schema as it is now.
		var n int
		if err := r.QueryRowContext(ctx, "SELECT count(*) FROM v").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: %d, %v", tt.name, n, err)
		}
		for _, q := range []string{"DROP VIEW v", tt.redefine} {
			if _, err := w.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		switch tt.name {
		case "query":
			rows, err := r.QueryContext(ctx, tt.query)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			rows.Close()
		case "exec":
			if _, err := r.ExecContext(ctx, tt.query); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		case "prepare":
			st, err := r.PrepareContext(ctx, tt.query)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			st.Close()
		}
	}
	// A statement the file refuses too fails as before.
	if _, err := r.QueryContext(ctx, "SELECT * FROM v ORDER BY 9"); err == nil {
		t.Fatal("ORDER BY 9 of a view of 5 columns succeeded")
	}
}
