package embedded_test

import (
	"testing"
)

// BenchmarkOfflineInsert: a local INSERT of one row with its queue entry
// (offline writes, synchronous NORMAL), the primary not involved.
func BenchmarkOfflineInsert(b *testing.B) {
	p := startSqld(b)
	prim := primaryDB(b, p.URL())
	mustExec(b, prim, "CREATE TABLE w (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
	r, _ := openOffline(b, "", p.URL())
	r.sync(b)
	b.ResetTimer()
	for i := range b.N {
		if _, err := r.db.Exec("INSERT INTO w (v, n) VALUES (?, ?)", "local", i); err != nil {
			b.Fatal(err)
		}
	}
}
