package embedded_test

import (
	"fmt"
	"strings"
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

// BenchmarkOfflineInsertBench: the INSERT of Turso's sync benchmark
// (bench/cmd/sync-bench): four values, one of them 160 bytes of text,
// into a table with an AUTOINCREMENT key.
func BenchmarkOfflineInsertBench(b *testing.B) {
	p := startSqld(b)
	prim := primaryDB(b, p.URL())
	mustExec(b, prim, "CREATE TABLE bench (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, email TEXT NOT NULL, bio TEXT, score REAL)")
	r, _ := openOffline(b, "", p.URL())
	r.sync(b)
	bio := strings.Repeat("x", 160)
	b.ResetTimer()
	for i := range b.N {
		if _, err := r.db.Exec("INSERT INTO bench (name, email, bio, score) VALUES (?, ?, ?, ?)", fmt.Sprint("user_", i), fmt.Sprint("user", i, "@bench.dev"), bio, float64(i)*1.5); err != nil {
			b.Fatal(err)
		}
	}
}
