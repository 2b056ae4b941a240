package libsql

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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
				if err := w.acquire(context.Background(), nil); err != nil {
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
		if err := w.acquire(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := w.acquire(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !isSafe(err) {
		t.Fatalf("acquire on a full bound: %v; want a safe deadline error", err)
	}
	w.release()
	if err := w.acquire(context.Background(), nil); err != nil {
		t.Fatalf("acquire of a freed slot: %v", err)
	}
}

func TestWritersNil(t *testing.T) {
	if w := newWriters(0); w != nil {
		t.Fatalf("newWriters(0) = %v, want nil (unbounded)", w)
	}
	var w *writers
	for range 3 {
		if err := w.acquire(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	w.release()
}
