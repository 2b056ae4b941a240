package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/compare.golden")

func TestRenderCompare(t *testing.T) {
	base, err := readReport(filepath.Join("testdata", "compare_base.json"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := readReport(filepath.Join("testdata", "compare_head.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	regs := renderCompare(&out, base, head)

	// The flagged lines: a 20% throughput drop (median of three base
	// samples), allocations appearing in a zero-allocation workload, a 20%
	// CPU rise. Not flagged: a 25% gain, +5% B/op, and
	// rises below the absolute floors (10 → 20 B/op, 0.01 → 0.02 allocs).
	want := []string{
		"decode/direct/5k rows/s -20.0% (cpu/op +5.0%: wall clock only)",
		"encode/direct/exec6 B/op +∞",
		"encode/direct/exec6 allocs/op +∞",
		"scan/direct/typed/20k cpu/op +20.0%",
	}
	var got []string
	for _, r := range regs {
		got = append(got, r.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("regressions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	golden := filepath.Join("testdata", "compare.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantOut, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(wantOut) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", golden, out.String())
	}
}

func TestCompareCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-compare", filepath.Join("testdata", "compare_base.json"), filepath.Join("testdata", "compare_head.json")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit status %d, stderr %q", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "4 regression(s) over 10%: decode/direct/5k rows/s -20.0% (cpu/op +5.0%: wall clock only);") {
		t.Errorf("no summary line in:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "| live/direct/typed/20k | | | | only in head | |") {
		t.Errorf("no line for the new workload in:\n%s", stdout.String())
	}
}

func TestMergeReports(t *testing.T) {
	a := &Report{Count: 1, Results: []*Result{{Name: "w", Rows: 10, Samples: []Sample{{NsPerOp: 100, BytesPerOp: 5, AllocsPerOp: 1}}}}}
	b := &Report{Count: 2, Results: []*Result{{Name: "w", Rows: 10, Samples: []Sample{{NsPerOp: 300, BytesPerOp: 7, AllocsPerOp: 3}, {NsPerOp: 200, BytesPerOp: 6, AllocsPerOp: 2}}}}}
	m := mergeReports([]*Report{a, b})
	if m.Count != 3 || len(m.Results) != 1 {
		t.Fatalf("merged %+v", m)
	}
	r := m.Results[0]
	if len(r.Samples) != 3 || r.NsPerOp != 200 || r.BytesPerOp != 6 || r.AllocsPerOp != 2 || r.OpsPerSec != 5e6 || r.RowsPerSec != 5e7 || r.NsPerRow != 20 {
		t.Errorf("merged result %+v", r)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtRate(1234567), "1.23M"},
		{fmtRate(999), "999"},
		{fmtRate(12.345), "12.3"},
		{fmtRate(45678), "45.7k"},
		{fmtBytes(100), "100 B"},
		{fmtBytes(2048), "2.00 KiB"},
		{fmtBytes(3 << 20), "3.00 MiB"},
		{fmtCount(17), "17"},
		{fmtCount(0.6134), "0.613"},
		{fmtCount(457000), "457k"},
		{fmtDuration(1500), "1.50 µs"},
		{fmtDelta(-0.2), "-20.0%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
