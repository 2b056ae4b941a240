package harness

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLoadAvg: on a machine with /proc/loadavg, the three load averages,
// each a number.
func TestLoadAvg(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg here")
	}
	got := LoadAvg()
	f := strings.Fields(got)
	if len(f) != 3 {
		t.Fatalf("LoadAvg() = %q, want three fields", got)
	}
	for _, s := range f {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			t.Errorf("LoadAvg() = %q: %v", got, err)
		}
	}
}
