package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
)

func TestFmtInt(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", 999999.6: "1,000,000"} {
		if got := fmtInt(in); got != want {
			t.Errorf("fmtInt(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestLastJSONLine(t *testing.T) {
	if got := lastJSONLine("noise\n{\"a\":1}\n{\"b\":2}\n"); got != `{"b":2}` {
		t.Errorf("got %q", got)
	}
	if got := lastJSONLine("no json here\n"); got != "" {
		t.Errorf("got %q", got)
	}
}

// TestReport checks medians, ratios and verdicts on made-up results.
func TestReport(t *testing.T) {
	rep := &report{Rounds: 3, BigRounds: 1, Conc: 16, Duration: "10s", Points: 5000}
	add := func(w, v string, rate, p50 float64, errMsg string) {
		rep.Results = append(rep.Results, workload.Result{Workload: w, Variant: v, Rate: rate, P50Micros: p50, Error: errMsg})
	}
	for _, r := range []float64{90, 100, 500} { // median 100
		add("scan20k", "ours/direct", r*1000, 0, "")
		add("scan20k", "ours/gojson", r*500, 0, "")
		add("scan20k", "peer", r*100, 0, "")
		add("scan20k", "ceiling", r*1100, 0, "")
		add("point", "ours/direct", 0, 700, "")
		add("point", "ours/gojson", 0, 900, "")
		add("point", "peer", 0, 1000, "")
	}
	add("scan1m", "ours/direct", 1e5, 0, "")
	add("scan1m", "ours/gojson", 5e4, 0, "")
	add("scan1m", "peer", 0, 0, "Response is too large | really")
	var sel []wl
	for _, w := range workloads() {
		if w.name == "scan20k" || w.name == "point" || w.name == "scan1m" {
			sel = append(sel, w)
		}
	}
	rep.summarize(sel)
	if s := rep.get("scan20k", "ours/direct"); s.Rate != 100000 || s.Runs != 3 {
		t.Fatalf("median %+v", s)
	}
	var out bytes.Buffer
	printReport(&out, rep)
	got := out.String()
	for _, want := range []string{
		"| (a) rows/s >= 5x the peer's | 10.00x: **PASS** | 5.00x: **PASS** |",
		"| (a) rows/s >= 0.8x the net/http ceiling | 0.91x: **PASS** | 0.45x: **FAIL** |",
		"| (b) p50 <= 0.8x the peer's | 0.70x: **PASS** | 0.90x: **FAIL** |",
		"| (e) the 1,000,000-row scan completes | 100,000 rows/s: **PASS** | 50,000 rows/s: **PASS** |",
		`fails: Response is too large \| really`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"-run", "scan20k|point", "-json", "/tmp/x.json", "it's", ""})
	want := `-run 'scan20k|point' -json /tmp/x.json 'it'\''s' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
