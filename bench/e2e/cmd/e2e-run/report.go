package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
)

// report is everything a run produced; -json writes it.
type report struct {
	Command    string `json:"command"`
	Started    string `json:"started"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	Server     string `json:"server"`
	Revision   string `json:"revision"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
	Rounds     int    `json:"rounds"`
	BigRounds  int    `json:"big_rounds"`
	ScanIters  int    `json:"scan_iters"`
	Points     int    `json:"points"`
	Inserts    int    `json:"inserts"`
	Conc       int    `json:"conc"`
	Duration   string `json:"duration"`
	BigRows    int    `json:"big_rows"`

	Results []workload.Result `json:"results"` // every run, in order
	Medians []summary         `json:"medians"`

	workloads []wl
}

// summary is the median over rounds of one workload and variant.
type summary struct {
	Workload     string    `json:"workload"`
	Variant      string    `json:"variant"`
	Runs         int       `json:"runs"`
	Failed       int       `json:"failed"`
	Error        string    `json:"error,omitempty"` // of the last failed run
	Rate         float64   `json:"rate"`
	P50Micros    float64   `json:"p50_us,omitempty"`
	P99Micros    float64   `json:"p99_us,omitempty"`
	CPUNsPerRow  float64   `json:"cpu_ns_per_row"`
	AllocsPerRow float64   `json:"allocs_per_row"`
	BytesPerRow  float64   `json:"bytes_per_row"`
	MaxRSSKB     float64   `json:"max_rss_kb"`
	Rates        []float64 `json:"rates"`
}

func (rep *report) summarize(ws []wl) {
	rep.workloads = ws
	for _, w := range ws {
		for _, v := range w.variants {
			s := summary{Workload: w.name, Variant: v.name}
			var p50, p99, cpu, allocs, bytes, rss []float64
			for _, r := range rep.Results {
				if r.Workload != w.name || r.Variant != v.name {
					continue
				}
				s.Runs++
				if r.Error != "" {
					s.Failed++
					s.Error = strings.ReplaceAll(r.Error, "|", `\|`) // keeps Markdown tables intact
					continue
				}
				s.Rates = append(s.Rates, r.Rate)
				p50 = append(p50, r.P50Micros)
				p99 = append(p99, r.P99Micros)
				cpu = append(cpu, r.CPUNsPerRow)
				allocs = append(allocs, r.AllocsPerRow)
				bytes = append(bytes, r.BytesPerRow)
				rss = append(rss, float64(r.MaxRSSKB))
			}
			s.Rate, s.P50Micros, s.P99Micros = workload.Median(s.Rates), workload.Median(p50), workload.Median(p99)
			s.CPUNsPerRow, s.AllocsPerRow = workload.Median(cpu), workload.Median(allocs)
			s.BytesPerRow, s.MaxRSSKB = workload.Median(bytes), workload.Median(rss)
			rep.Medians = append(rep.Medians, s)
		}
	}
}

func (rep *report) get(w, v string) *summary {
	for i := range rep.Medians {
		if rep.Medians[i].Workload == w && rep.Medians[i].Variant == v {
			return &rep.Medians[i]
		}
	}
	return nil
}

// ok reports whether s has at least one successful run.
func (s *summary) ok() bool { return s != nil && s.Runs > s.Failed }

func printReport(w io.Writer, rep *report) {
	fmt.Fprintf(w, "Command: `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "Driver at %s; %s/%s, %d CPUs, %s, %s; load average %s before, %s after. "+
		"Medians over %d rounds ((e): %d); every run is a fresh process; variants interleaved, order rotated per round.\n\n",
		orDash(rep.Revision), rep.GOOS, rep.GOARCH, rep.CPUs, rep.GoVersion, rep.Server, orDash(rep.LoadBefore), orDash(rep.LoadAfter),
		rep.Rounds, rep.BigRounds)

	fmt.Fprintln(w, "| workload | metric | ours/direct | ours/gojson | peer | direct ÷ peer | gojson ÷ peer |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|")
	for _, wd := range rep.workloads {
		d, g, p := rep.get(wd.name, "ours/direct"), rep.get(wd.name, "ours/gojson"), rep.get(wd.name, "peer")
		label := wd.label
		switch wd.name {
		case "scan20k", "insert", "scan1m":
			fmt.Fprintf(w, "| %s | rows/s | %s | %s | %s | %s | %s |\n", label,
				rateCell(d), rateCell(g), rateCell(p), ratioCell(d, p, rateOf), ratioCell(g, p, rateOf))
			if f := rep.get(wd.name, "floor"); wd.name == "insert" && f != nil {
				fmt.Fprintf(w, "| (c) floor for one request per INSERT: a raw-TCP HTTP/1.1 client, no database/sql: %s rows/s | ÷ this floor | %s | %s | %s | floor ÷ peer: %s | |\n",
					rateCell(f), ratioCell(d, f, rateOf), ratioCell(g, f, rateOf), ratioCell(p, f, rateOf), ratioCell(f, p, rateOf))
			}
			if z := rep.get(wd.name, "ours/direct/deferred"); wd.name == "insert" && z != nil {
				fmt.Fprintf(w, "| (c) the same with the opt-in deferredExec=1 (Execs sent in batches, errors reported late) | rows/s | %s | | | %s | |\n",
					rateCell(z), ratioCell(z, p, rateOf))
			}
			if wd.name == "scan20k" {
				for _, cv := range []struct{ name, label string }{
					{"ceiling", "(a) net/http ceiling: the driver's request (uncompressed on loopback), body discarded"},
					{"ceiling/gzip", "(a) the same with net/http's gzip, as the peer gets it (for information)"},
				} {
					if c := rep.get(wd.name, cv.name); c != nil {
						fmt.Fprintf(w, "| %s: %s rows/s | ÷ this ceiling | %s | %s | %s | | |\n",
							cv.label, rateCell(c), ratioCell(d, c, rateOf), ratioCell(g, c, rateOf), ratioCell(p, c, rateOf))
					}
				}
			}
		case "point":
			fmt.Fprintf(w, "| %s, %s queries | p50 µs | %s | %s | %s | %s | %s |\n", label, fmtInt(float64(rep.Points)),
				usCell(d, p50Of), usCell(g, p50Of), usCell(p, p50Of), ratioCell(d, p, p50Of), ratioCell(g, p, p50Of))
			fmt.Fprintf(w, "| | p99 µs | %s | %s | %s | %s | %s |\n",
				usCell(d, p99Of), usCell(g, p99Of), usCell(p, p99Of), ratioCell(d, p, p99Of), ratioCell(g, p, p99Of))
			fmt.Fprintf(w, "| | queries/s | %s | %s | %s | %s | %s |\n",
				rateCell(d), rateCell(g), rateCell(p), ratioCell(d, p, rateOf), ratioCell(g, p, rateOf))
		case "concurrent":
			fmt.Fprintf(w, "| %s, %d goroutines, %s | queries/s | %s | %s | %s | %s | %s |\n", label, rep.Conc, rep.Duration,
				rateCell(d), rateCell(g), rateCell(p), ratioCell(d, p, rateOf), ratioCell(g, p, rateOf))
			fmt.Fprintf(w, "| | p50 / p99 µs | %s | %s | %s | | |\n", p5099(d), p5099(g), p5099(p))
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Targets (issue), on the medians:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | ours/direct | ours/gojson |")
	fmt.Fprintln(w, "|---|---|---|")
	type target struct {
		name    string
		measure func(s *summary) (string, bool, bool) // cell, pass, known
	}
	ratioTarget := func(wname, other string, of func(*summary) float64, min bool, bound float64) func(*summary) (string, bool, bool) {
		return func(s *summary) (string, bool, bool) {
			o := rep.get(wname, other)
			if !s.ok() || !o.ok() || of(o) == 0 {
				return "n/a", false, false
			}
			r := of(s) / of(o)
			if min {
				return fmt.Sprintf("%.2fx", r), r >= bound, true
			}
			return fmt.Sprintf("%.2fx", r), r <= bound, true
		}
	}
	targets := []target{
		{"(a) rows/s >= 5x the peer's", ratioTarget("scan20k", "peer", rateOf, true, 5)},
		{"(a) rows/s >= 0.8x the net/http ceiling", ratioTarget("scan20k", "ceiling", rateOf, true, 0.8)},
		{"(b) p50 <= 0.8x the peer's", ratioTarget("point", "peer", p50Of, false, 0.8)},
		{"(c) rows/s >= 2x the peer's", ratioTarget("insert", "peer", rateOf, true, 2)},
		{"(d) queries/s >= 1.5x the peer's", ratioTarget("concurrent", "peer", rateOf, true, 1.5)},
		{"(e) the 1,000,000-row scan completes", nil},
	}
	wname := map[string]string{"(a)": "scan20k", "(b)": "point", "(c)": "insert", "(d)": "concurrent", "(e)": "scan1m"}
	for _, t := range targets {
		wn := wname[t.name[:3]]
		if rep.get(wn, "ours/direct") == nil {
			continue
		}
		cells := make([]string, 0, 2)
		for _, v := range []string{"ours/direct", "ours/gojson"} {
			s := rep.get(wn, v)
			if t.measure == nil {
				switch {
				case s == nil || s.Runs == 0:
					cells = append(cells, "n/a")
				case s.Failed == 0:
					cells = append(cells, fmt.Sprintf("%s rows/s: **PASS**", fmtInt(s.Rate)))
				default:
					cells = append(cells, fmt.Sprintf("fails (%d/%d): %s: **FAIL**", s.Failed, s.Runs, s.Error))
				}
				continue
			}
			cell, pass, known := t.measure(s)
			switch {
			case !known:
				cells = append(cells, cell)
			case pass:
				cells = append(cells, cell+": **PASS**")
			default:
				cells = append(cells, cell+": **FAIL**")
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", t.name, strings.Join(cells, " | "))
	}
	if z := rep.get("insert", "ours/direct/deferred"); z != nil {
		cell, pass, known := ratioTarget("insert", "peer", rateOf, true, 2)(z)
		verdict := ""
		if known {
			verdict = map[bool]string{true: " (>= 2x)", false: " (under 2x)"}[pass]
		}
		fmt.Fprintf(w, "\n(c) with the opt-in deferredExec=1, which changes when errors are reported: %s the peer's rows/s%s.\n", cell, verdict)
	}

	printGzip(w, rep)

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Client cost per row (per query for (b) and (d)), medians; CPU is the client process's user+system time (getrusage), allocations from runtime.MemStats, both over the measured part only:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | variant | CPU µs/row | allocs/row | B/row | max RSS MB | runs (failed) | rates per run |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|---|")
	for _, s := range rep.Medians {
		if !s.ok() {
			fmt.Fprintf(w, "| %s | %s | fails: %s | | | | %d (%d) | |\n", s.Workload, s.Variant, s.Error, s.Runs, s.Failed)
			continue
		}
		rates := make([]string, len(s.Rates))
		for i, r := range s.Rates {
			rates[i] = fmtInt(r)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.1f | %s | %.0f | %d (%d) | %s |\n", s.Workload, s.Variant,
			s.CPUNsPerRow/1e3, s.AllocsPerRow, fmtInt(s.BytesPerRow), s.MaxRSSKB/1024, s.Runs, s.Failed, strings.Join(rates, ", "))
	}
	for _, s := range rep.Medians {
		if s.ok() && s.Failed > 0 {
			fmt.Fprintf(w, "\nNote: %s %s failed %d of %d runs: %s\n", s.Workload, s.Variant, s.Failed, s.Runs, s.Error)
		}
	}
}

// printGzip prints the diagnostic variant's figures, if it ran.
func printGzip(w io.Writer, rep *report) {
	header := false
	for _, wd := range rep.workloads {
		d, z, p := rep.get(wd.name, "ours/direct"), rep.get(wd.name, "ours/direct/gzip"), rep.get(wd.name, "peer")
		if z == nil {
			continue
		}
		if !header {
			header = true
			fmt.Fprintln(w)
			fmt.Fprintln(w, "Diagnostic (-gzip): ours/direct with compression=gzip, as on a real network (the peer always asks for gzip):")
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| workload | metric | ours/direct | ours/direct, gzip | gzip ÷ default | gzip ÷ peer | CPU µs/row default → gzip |")
			fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|---|")
		}
		metric, of, val := "rows/s", rateOf, rateCell
		switch wd.name {
		case "point":
			metric, of = "p50 µs", p50Of
			val = func(s *summary) string { return usCell(s, p50Of) }
		case "concurrent":
			metric = "queries/s"
		}
		cpu := ""
		if d.ok() && z.ok() {
			cpu = fmt.Sprintf("%.2f → %.2f", d.CPUNsPerRow/1e3, z.CPUNsPerRow/1e3)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", wd.name, metric, val(d), val(z),
			ratioCell(z, d, of), ratioCell(z, p, of), cpu)
	}
}

func rateOf(s *summary) float64 { return s.Rate }
func p50Of(s *summary) float64  { return s.P50Micros }
func p99Of(s *summary) float64  { return s.P99Micros }

func rateCell(s *summary) string {
	switch {
	case s == nil:
		return ""
	case !s.ok():
		return "fails: " + s.Error
	}
	return fmtInt(s.Rate)
}

func usCell(s *summary, of func(*summary) float64) string {
	switch {
	case s == nil:
		return ""
	case !s.ok():
		return "fails: " + s.Error
	}
	return strconv.FormatFloat(of(s), 'f', 0, 64)
}

func p5099(s *summary) string {
	if !s.ok() {
		return ""
	}
	return fmt.Sprintf("%.0f / %.0f", s.P50Micros, s.P99Micros)
}

func ratioCell(a, b *summary, of func(*summary) float64) string {
	if !a.ok() || !b.ok() || of(b) == 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx", of(a)/of(b))
}

// fmtInt formats a non-negative number rounded to an integer with thousands
// separators.
func fmtInt(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
