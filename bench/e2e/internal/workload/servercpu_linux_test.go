package workload

import (
	"os"
	"testing"
	"time"
)

// TestServerCPUTime reads this process's own CPU time: it grows with work
// done, and a process that does not exist reads as -1.
func TestServerCPUTime(t *testing.T) {
	before := serverCPUTime(os.Getpid())
	if before < 0 {
		t.Fatalf("serverCPUTime(self) = %d", before)
	}
	// Spin until the tick-granular counter moves (at most a few ticks).
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for serverCPUTime(os.Getpid()) <= before {
		if time.Now().After(deadline) {
			t.Fatal("CPU time did not grow while spinning")
		}
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
	if got := serverCPUTime(1 << 30); got != -1 {
		t.Fatalf("serverCPUTime(no such pid) = %d, want -1", got)
	}
}
