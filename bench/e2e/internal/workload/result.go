// Package workload holds the end-to-end workloads of the bench/e2e
// comparison, written once against database/sql so that this driver and
// github.com/tursodatabase/libsql-client-go run the very same code. Each
// workload measures wall time, the process's CPU time (getrusage) and its
// heap allocations (runtime.MemStats) over its measured part only, and
// reports them per row (or per query for the point workloads).
package workload

import (
	"runtime"
	"slices"
	"time"

	"github.com/gohrana/libsql/internal/procstat"
)

// Result is what one run of one workload reports, as one JSON line.
type Result struct {
	Workload string `json:"workload"`
	Variant  string `json:"variant,omitempty"` // set by the orchestrator
	Round    int    `json:"round,omitempty"`   // set by the orchestrator

	N       int64   `json:"n"`       // rows (or queries) measured in all
	Seconds float64 `json:"seconds"` // wall time of the measured part
	// Rate is rows/s (queries/s for point and concurrent): for workloads
	// with several iterations, the median over the iterations.
	Rate float64 `json:"rate"`
	// Latencies of single queries (point, concurrent), in microseconds.
	P50Micros float64 `json:"p50_us,omitempty"`
	P99Micros float64 `json:"p99_us,omitempty"`

	CPUNsPerRow  float64 `json:"cpu_ns_per_row"` // user+system CPU time of the process
	AllocsPerRow float64 `json:"allocs_per_row"` // heap allocations
	BytesPerRow  float64 `json:"bytes_per_row"`  // heap bytes allocated
	MaxRSSKB     int64   `json:"max_rss_kb"`     // peak resident set of the process
	// ServerCPUNsPerRow is the server's user+system CPU time over the
	// measured part, per row, when the worker was told its process
	// (ServerPID) and can read its counters (Linux); else 0.
	ServerCPUNsPerRow float64 `json:"server_cpu_ns_per_row,omitempty"`

	Error string `json:"error,omitempty"`
}

// ServerPID is the server's process id, whose CPU time a Meter also
// measures when it is set (the worker's -server-pid).
var ServerPID int

// Meter captures the process's counters at the start of a measured part.
type Meter struct {
	start   time.Time
	cpu     int64
	srvCPU  int64 // the server's; -1 if not measured
	mallocs uint64
	bytes   uint64
}

// Begin collects garbage left by setup and warm-up, then starts measuring.
func Begin() Meter {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := Meter{cpu: procstat.CPUTime(), srvCPU: -1, mallocs: ms.Mallocs, bytes: ms.TotalAlloc}
	if ServerPID > 0 {
		m.srvCPU = serverCPUTime(ServerPID)
	}
	m.start = time.Now()
	return m
}

// End fills r's totals and per-row figures for n rows.
func (m Meter) End(r *Result, n int64) {
	wall := time.Since(m.start)
	cpu := procstat.CPUTime() - m.cpu
	srvCPU := int64(-1)
	if m.srvCPU >= 0 {
		if now := serverCPUTime(ServerPID); now >= 0 {
			srvCPU = now - m.srvCPU
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.N = n
	r.Seconds = wall.Seconds()
	if n > 0 {
		r.CPUNsPerRow = float64(cpu) / float64(n)
		r.AllocsPerRow = float64(ms.Mallocs-m.mallocs) / float64(n)
		r.BytesPerRow = float64(ms.TotalAlloc-m.bytes) / float64(n)
		if srvCPU >= 0 {
			r.ServerCPUNsPerRow = float64(srvCPU) / float64(n)
		}
	}
	if r.Rate == 0 && wall > 0 {
		r.Rate = float64(n) / wall.Seconds()
	}
	r.MaxRSSKB = procstat.MaxRSSKB()
}

// SetLatencies sets r's p50 and p99 from the latencies of single queries,
// which it sorts.
func (r *Result) SetLatencies(lat []time.Duration) {
	slices.Sort(lat)
	r.P50Micros, r.P99Micros = percentile(lat, 0.50), percentile(lat, 0.99)
}

// percentile returns the p-th percentile (0..1, nearest rank) of sorted
// durations, in microseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Microsecond)
}
