package libsql

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadOnlySQL(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1":                             true,
		"select * from t":                      true,
		"  \n\tSELECT 1":                       true,
		"-- note\nSELECT 1":                    true,
		"/* a */ /* b */ SELECT 1":             true,
		"VALUES (1), (2)":                      true,
		"EXPLAIN QUERY PLAN SELECT 1":          true,
		"EXPLAIN DELETE FROM t":                true, // EXPLAIN runs nothing
		"WITH x AS (SELECT 1) SELECT * FROM x": true,
		"with recursive c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 9) SELECT n FROM c": true,
		"WITH x AS (SELECT updated_at, deleted FROM t) SELECT * FROM x":                             true, // words inside names

		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x":  false,
		"WITH x AS (SELECT 1) update t SET a = 1":             false,
		"WITH x AS (SELECT 1) DELETE FROM t":                  false,
		"WITH x AS (SELECT 1) REPLACE INTO t SELECT * FROM x": false,
		"WITH x AS (SELECT 'insert') SELECT * FROM x":         false, // conservative: a word in a string
		"INSERT INTO t VALUES (1)":                            false,
		"UPDATE t SET a = 1":                                  false,
		"DELETE FROM t":                                       false,
		"REPLACE INTO t VALUES (1)":                           false,
		"CREATE TABLE t (a)":                                  false,
		"PRAGMA user_version = 3":                             false,
		"PRAGMA table_info(t)":                                false, // PRAGMAs may write
		"BEGIN":                                               false,
		"":                                                    false,
		"-- only a comment":                                   false,
		"/* unterminated SELECT 1":                            false,
		"(SELECT 1)":                                          false,
		"SELECTx 1":                                           false,
		"SELECT1":                                             false,
	} {
		if got := readOnlySQL(sql); got != want {
			t.Errorf("readOnlySQL(%q) = %t, want %t", sql, got, want)
		}
	}
}

// The bound holds under contention (never more than n at once, and n are
// reached), and a waiter gives up when its context ends.
func TestWritersBound(t *testing.T) {
	const n, goroutines, rounds = 3, 16, 50
	w := newWriters(n)
	var now, peak atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := w.acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				c := now.Add(1)
				for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				now.Add(-1)
				w.release()
			}
		}()
	}
	wg.Wait()
	if got := peak.Load(); got != n {
		t.Errorf("peak %d holders at once, want %d", got, n)
	}

	for range n {
		if err := w.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := w.acquire(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !isSafe(err) {
		t.Fatalf("acquire on a full bound: %v; want a safe deadline error", err)
	}
	w.release()
	if err := w.acquire(context.Background()); err != nil {
		t.Fatalf("acquire of a freed slot: %v", err)
	}
}

func TestWritersNil(t *testing.T) {
	if w := newWriters(0); w != nil {
		t.Fatalf("newWriters(0) = %v, want nil (unbounded)", w)
	}
	var w *writers
	for range 3 {
		if err := w.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	w.release()
}

func BenchmarkReadOnlySQL(b *testing.B) {
	for _, sql := range []string{"SELECT id, name FROM users WHERE id = ?", "INSERT INTO t (a, b) VALUES (?, ?)",
		"WITH x AS (SELECT id FROM users WHERE created > ?) SELECT count(*) FROM x"} {
		b.Run(firstWord(sql), func(b *testing.B) {
			for b.Loop() {
				readOnlySQL(sql)
			}
		})
	}
}
