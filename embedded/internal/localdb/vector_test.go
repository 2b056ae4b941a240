package localdb

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/vector"
	"modernc.org/sqlite"
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

// BenchmarkTopKScan: the exact search of vector_top_k over 10,000
// FLOAT32 vectors of 256 dimensions (the scan, the distances, the heap),
// on one connection of the replica's driver.
func BenchmarkTopKScan(b *testing.B) {
	const rows, dims = 10000, 256
	path := filepath.Join(b.TempDir(), "v.db")
	db, err := openDB(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, e F32_BLOB(256))"); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	tx, _ := db.Begin()
	for i := range rows {
		v := make([]byte, 4*dims)
		for j := range dims {
			binary.LittleEndian.PutUint32(v[4*j:], math.Float32bits(float32(r.NormFloat64())))
		}
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?)", i+1, v); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	db.Close()
	if db, err = OpenReaders(path, 1, nil); err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	q := vector.New(vector.Float32, dims)
	for j := range dims {
		binary.LittleEndian.PutUint32(q.Data[4*j:], math.Float32bits(float32(r.NormFloat64())))
	}
	ix := &vectorIndex{typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 200}
	conn, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ResetTimer()
	err = conn.Raw(func(dc any) error {
		for range b.N {
			ids, err := ix.scan(context.Background(), dc.(sqlite.ExecQuerierContext), q, 10)
			if err != nil || len(ids) != 10 {
				return fmt.Errorf("%v, %v", ids, err)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
