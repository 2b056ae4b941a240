package embedded_test

import (
	"fmt"
	"strings"
	"testing"
)

// benchReplica starts a primary, creates on it the table of schema and
// returns a synced replica of it with offline writes.
func benchReplica(b *testing.B, schema string) *replica {
	b.Helper()
	p, prim := startPrimary(b)
	mustExec(b, prim, schema)
	r, _ := openOffline(b, "", p.URL())
	r.sync(b)
	return r
}

// BenchmarkOfflineInsert: a local INSERT of one row with its queue entry
// (offline writes, synchronous NORMAL), the primary not involved.
func BenchmarkOfflineInsert(b *testing.B) {
	r := benchReplica(b, "CREATE TABLE w (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
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
	r := benchReplica(b, "CREATE TABLE bench (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, email TEXT NOT NULL, bio TEXT, score REAL)")
	bio := strings.Repeat("x", 160)
	b.ResetTimer()
	for i := range b.N {
		if _, err := r.db.Exec("INSERT INTO bench (name, email, bio, score) VALUES (?, ?, ?, ?)", fmt.Sprint("user_", i), fmt.Sprint("user", i, "@bench.dev"), bio, float64(i)*1.5); err != nil {
			b.Fatal(err)
		}
	}
}
