package localdb

import (
	"testing"
)

func TestParseIndexSQL(t *testing.T) {
	tests := []struct {
		sql, column, where string
	}{
		{"CREATE INDEX v_idx ON v (libsql_vector_idx(emb))", "emb", ""},
		{"CREATE INDEX opt_l2 ON opt (libsql_vector_idx(e, 'metric=l2', 'max_neighbors=8'))", "e", ""},
		{"CREATE INDEX opt_part ON opt (libsql_vector_idx(e)) WHERE id > 5", "e", "id > 5"},
		{`CREATE INDEX "q" ON "t t" ( LIBSQL_VECTOR_IDX ( "my col" ) ) where (a = 'WHERE')`, `"my col"`, "(a = 'WHERE')"},
	}
	for _, tt := range tests {
		col, where, err := parseIndexSQL(tt.sql)
		if err != nil || col != tt.column || where != tt.where {
			t.Errorf("parseIndexSQL(%q) = %q, %q, %v", tt.sql, col, where, err)
		}
	}
	if _, _, err := parseIndexSQL("CREATE INDEX i ON t (a)"); err == nil {
		t.Error("an index without libsql_vector_idx parsed")
	}
}

func TestNearest(t *testing.T) {
	n := &nearest{k: 3}
	for i, d := range []float32{5, 1, 4, 1, 3, 9, 0} {
		n.offer(candidate{dist: d, seq: i, key: int64(i)})
	}
	got := n.sorted()
	want := []any{int64(6), int64(1), int64(3)} // 0, then the two 1s in scan order
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted = %v, want %v", got, want)
		}
	}
}
