package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/gohrana/libsql/bench/internal/harness"
)

// Report is what -json writes and -compare reads.
type Report struct {
	Label      string    `json:"label,omitempty"`
	Go         string    `json:"go"`
	GOOS       string    `json:"goos"`
	GOARCH     string    `json:"goarch"`
	CPUs       int       `json:"cpus"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	LoadAvg    string    `json:"loadavg,omitempty"` // /proc/loadavg when the run started
	Time       string    `json:"time"`
	Benchtime  string    `json:"benchtime"`
	Count      int       `json:"count"`
	Results    []*Result `json:"results"`
}

// Sample is one testing.Benchmark run of a workload.
type Sample struct {
	N           int     `json:"n"`
	NsPerOp     float64 `json:"ns_per_op"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op,omitempty"` // process CPU time (user+sys, all threads)
	BytesPerOp  float64 `json:"b_per_op"`                // bytes allocated
	AllocsPerOp float64 `json:"allocs_per_op"`
}

// Result is a workload's figures: the median of its samples for each raw
// metric, and the rates derived from the median time.
type Result struct {
	Name        string   `json:"name"`
	Rows        int      `json:"rows,omitempty"`          // rows per op
	DataBytes   int64    `json:"data_bytes,omitempty"`    // JSON bytes per op, for MB/s
	NsPerOp     float64  `json:"ns_per_op"`               // median
	CPUNsPerOp  float64  `json:"cpu_ns_per_op,omitempty"` // median
	BytesPerOp  float64  `json:"b_per_op"`                // median
	AllocsPerOp float64  `json:"allocs_per_op"`           // median
	OpsPerSec   float64  `json:"ops_per_s"`
	RowsPerSec  float64  `json:"rows_per_s,omitempty"`
	MBPerSec    float64  `json:"mb_per_s,omitempty"`
	NsPerRow    float64  `json:"ns_per_row,omitempty"`
	CPUNsPerRow float64  `json:"cpu_ns_per_row,omitempty"`
	Samples     []Sample `json:"samples"`
}

// summarize recomputes the medians and the derived rates from r.Samples.
func (r *Result) summarize() {
	pick := func(f func(Sample) float64) float64 {
		xs := make([]float64, len(r.Samples))
		for i, s := range r.Samples {
			xs[i] = f(s)
		}
		return harness.Median(xs)
	}
	r.NsPerOp = pick(func(s Sample) float64 { return s.NsPerOp })
	r.CPUNsPerOp = pick(func(s Sample) float64 { return s.CPUNsPerOp })
	r.BytesPerOp = pick(func(s Sample) float64 { return s.BytesPerOp })
	r.AllocsPerOp = pick(func(s Sample) float64 { return s.AllocsPerOp })
	r.OpsPerSec, r.RowsPerSec, r.MBPerSec, r.NsPerRow, r.CPUNsPerRow = 0, 0, 0, 0, 0
	if r.NsPerOp > 0 {
		r.OpsPerSec = 1e9 / r.NsPerOp
		r.RowsPerSec = r.OpsPerSec * float64(r.Rows)
		r.MBPerSec = r.OpsPerSec * float64(r.DataBytes) / 1e6
	}
	if r.Rows > 0 {
		r.NsPerRow = r.NsPerOp / float64(r.Rows)
		r.CPUNsPerRow = r.CPUNsPerOp / float64(r.Rows)
	}
}

// Throughput is the rate -compare watches for a workload: rows/s when it
// delivers rows, ops/s otherwise.
func (r *Result) Throughput() (name string, v float64) {
	if r.Rows > 0 {
		return "rows/s", r.RowsPerSec
	}
	return "ops/s", r.OpsPerSec
}

func (rep *Report) find(name string) *Result {
	for _, r := range rep.Results {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func readReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, r := range rep.Results {
		if len(r.Samples) > 0 {
			r.summarize()
		}
	}
	return &rep, nil
}

func writeReport(path string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// mergeReports pools the samples of each workload over several reports of
// the same build (the rounds of perf-compare) and takes medians again. The
// metadata is the first report's, with the counts added up.
func mergeReports(reps []*Report) *Report {
	out := *reps[0]
	out.Results = nil
	out.Count = 0
	byName := map[string]*Result{}
	for _, rep := range reps {
		out.Count += rep.Count
		for _, r := range rep.Results {
			m := byName[r.Name]
			if m == nil {
				m = &Result{Name: r.Name, Rows: r.Rows, DataBytes: r.DataBytes}
				byName[r.Name] = m
				out.Results = append(out.Results, m)
			}
			m.Samples = append(m.Samples, r.Samples...)
		}
	}
	for _, m := range out.Results {
		m.summarize()
	}
	return &out
}
