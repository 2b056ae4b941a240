package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/testmatrix"
	"github.com/gohrana/libsql/internal/writerstress"
)

var testEnv = environment{server: "sqld 0.24.32", goos: "linux", goarch: "amd64", cpus: 2, goVersion: "go1.26.8",
	loadBefore: "1.50", loadAfter: "9.00"}

// contains checks that got holds every line of want.
func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, got)
		}
	}
}

func TestStressReport(t *testing.T) {
	cfg := &config{runs: 4, workers: 2, per: 5, busy: 2, deadline: time.Minute, variant: testmatrix.Named("direct"),
		sets: []paramSet{{}, {label: "maxWriters=0", params: []string{"maxWriters=0"}}}}
	cleanRun := func(wall time.Duration, load string) writerstress.Result {
		return writerstress.Result{OK: 10, Rows: 10, Errs: map[string]int64{}, Wall: wall, LoadAvg: load}
	}
	results := [][]writerstress.Result{
		{cleanRun(2300*time.Millisecond, "8.12"), cleanRun(4100*time.Millisecond, "9.50")},
		{
			cleanRun(3*time.Second, "10.00"),
			{OK: 7, Rows: 9, Hung: true, Stalled: true, Errs: map[string]int64{"deadline": 3}, Wall: time.Minute, LoadAvg: "20.30"},
			{OK: 8, Rows: 8, Hung: true, Errs: map[string]int64{"deadline": 2}, Wall: time.Minute, LoadAvg: "?"},
			{OK: 8, Rows: 8, Errs: map[string]int64{"SQLITE_BUSY": 2}, Wall: 5 * time.Second, LoadAvg: "12.00"},
		},
	}
	var out bytes.Buffer
	writeStressReport(&out, testEnv, cfg, results)
	contains(t, out.String(),
		"sqld 0.24.32; linux/amd64, 2 CPUs, go1.26.8; load average 1.50 before, 9.00 after.",
		"Stall runs: 4 per parameter set, interleaved, each on a sqld of its own (default WAL): 2 busy loops, 2 goroutines x 5 autocommit INSERTs on one *sql.DB (variant direct), deadline 1m0s. Clean: 10 inserts succeeded, 10 rows",
		"| parameters | runs | clean | sqld stalled | hung, not stalled | errors | wall time of clean runs | load average |\n|---|--:|--:|--:|--:|---|---|---|\n",
		"| `(defaults)` | 2 | 2 | 0 | 0 | none | 2.3-4.1 s, median 3.2 s | 8.1-9.5 |\n",
		"| `maxWriters=0` | 4 | 1 | 1 | 1 | 2x SQLITE_BUSY; 5x deadline | 3.0 s | 10.0-20.3 |\n",
	)
}

func TestThroughputReport(t *testing.T) {
	cfg := &config{rounds: 3, sample: 2 * time.Second, latency: 10 * time.Millisecond, variant: testmatrix.Named("ws_direct"),
		sets: []paramSet{{label: "maxWriters=0"}, {label: "maxWriters=1"}}}
	rates := func(rs ...float64) []sample {
		var s []sample
		for _, r := range rs {
			s = append(s, sample{rate: r, stalled: r == 0})
		}
		return s
	}
	samples := [][][]sample{
		{rates(100, 120, 110), rates(200, 180, 330)}, // ratios 2, 1.5, 3
		{rates(100, 0, 100), rates(150, 150, 50)},    // the base stalled once: ratios 1.5, 0.5
		{rates(0, 0, 0), rates(80, 90, 0)},           // the base always stalled: no ratio
		{rates(50, 50, 50), rates(40, 50, 60)},
	}
	var out bytes.Buffer
	writeThroughputReport(&out, testEnv, cfg, samples)
	contains(t, out.String(),
		"Autocommit INSERTs/s through one *sql.DB (variant ws_direct), 3 rounds;",
		"every parameter set in turn for 2s after 300ms of warm-up, in an order rotated per round, 10ms added to each direction by a proxy (20ms per round trip).",
		"per-round ratios to `maxWriters=0`, with their range.",
		"| writers | `maxWriters=0` | `maxWriters=1` |\n|--:|--:|--:|\n",
		"| 1 | 110/s | 200/s, 2.000 (1.500-3.000) |\n",
		"| 4 | 100/s, 1 stalled | 150/s, 1.000 (0.500-1.500) |\n",
		"| 16 | 0/s, 3 stalled | 80/s, no ratio, 1 stalled |\n",
		"| 64 | 50/s | 50/s, 1.000 (0.800-1.200) |\n",
	)
	if strings.Contains(out.String(), "(0.500-1.500), 1 stalled") {
		t.Error("a stall of the base is counted against the other set")
	}
}
