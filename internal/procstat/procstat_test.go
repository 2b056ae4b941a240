package procstat

import (
	"runtime"
	"testing"
)

// TestProcstat: CPU time grows with work, and the process has a peak RSS
// (on unix, where they are measured).
func TestProcstat(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
		t.Skip("not measured here")
	}
	before := CPUTime()
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	_ = x
	if after := CPUTime(); after <= before {
		t.Errorf("CPU time did not grow: %d then %d", before, after)
	}
	if MaxRSSKB() <= 0 {
		t.Error("no peak RSS")
	}
}
