package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// threshold is the relative change -compare flags: a throughput drop or an
// allocation (count or bytes) increase larger than this.
const threshold = 0.10

// regression is one flagged line of a comparison.
type regression struct {
	workload, metric string
	delta            float64 // relative; +Inf for an increase from zero
	note             string
}

func (r regression) String() string {
	s := r.workload + " " + r.metric + " " + fmtDelta(r.delta)
	if r.note != "" {
		s += " (" + r.note + ")"
	}
	return s
}

// compareMetric is one line of the comparison table for a workload.
type compareMetric struct {
	name         string
	base, head   float64
	higherBetter bool    // throughput; otherwise lower is better (CPU time, allocations)
	floor        float64 // smaller absolute increases are not flagged
	format       func(float64) string
}

// renderCompare writes the Markdown comparison of two reports and returns
// the flagged regressions.
func renderCompare(w io.Writer, base, head *Report) []regression {
	bl, hl := base.Label, head.Label
	if bl == "" {
		bl = "base"
	}
	if hl == "" {
		hl = "head"
	}
	fmt.Fprintf(w, "### libsql-perf: %s → %s\n\n", bl, hl)
	fmt.Fprintf(w, "base: %s; head: %s.\n\n", describe(base), describe(head))
	fmt.Fprintf(w, "Medians. Throughput is rows/s for workloads that return rows, ops/s otherwise (wall clock); cpu/op is the process CPU time per op, the steadier figure on a busy machine. ⚠ marks a throughput drop, or a rise in cpu/op, B/op or allocs/op, over %.0f%% (rises under 16 B or 0.05 allocs per op are not flagged).\n\n",
		threshold*100)
	fmt.Fprintln(w, "| workload | metric | base | head | delta | |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | :-: |")

	var regs []regression
	seen := map[string]bool{}
	names := []string{}
	for _, r := range base.Results {
		names = append(names, r.Name)
		seen[r.Name] = true
	}
	for _, r := range head.Results {
		if !seen[r.Name] {
			names = append(names, r.Name)
		}
	}
	for _, name := range names {
		b, h := base.find(name), head.find(name)
		if b == nil || h == nil {
			state := "only in head"
			if h == nil {
				state = "only in base"
			}
			fmt.Fprintf(w, "| %s | | | | %s | |\n", name, state)
			continue
		}
		tn, tb := b.Throughput()
		_, th := h.Throughput()
		metrics := []compareMetric{{name: tn, base: tb, head: th, higherBetter: true, format: fmtRate}}
		if b.CPUNsPerOp > 0 && h.CPUNsPerOp > 0 {
			metrics = append(metrics, compareMetric{name: "cpu/op", base: b.CPUNsPerOp, head: h.CPUNsPerOp, format: fmtDuration})
		}
		metrics = append(metrics,
			compareMetric{name: "B/op", base: b.BytesPerOp, head: h.BytesPerOp, floor: 16, format: fmtBytes},
			compareMetric{name: "allocs/op", base: b.AllocsPerOp, head: h.AllocsPerOp, floor: 0.05, format: fmtCount},
		)
		for _, m := range metrics {
			d := relDelta(m.base, m.head)
			flag := ""
			if (m.higherBetter && d < -threshold) || (!m.higherBetter && d > threshold && m.head-m.base >= m.floor) {
				flag = "⚠"
				reg := regression{workload: name, metric: m.name, delta: d}
				if m.higherBetter && b.CPUNsPerOp > 0 && h.CPUNsPerOp > 0 {
					// A slower wall clock without more CPU time is
					// usually the machine's load, not the code.
					if cd := relDelta(b.CPUNsPerOp, h.CPUNsPerOp); cd <= threshold {
						reg.note = "cpu/op " + fmtDelta(cd) + ": wall clock only"
					}
				}
				regs = append(regs, reg)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", name, m.name, m.format(m.base), m.format(m.head), fmtDelta(d), flag)
		}
	}
	fmt.Fprintln(w)
	if len(regs) == 0 {
		fmt.Fprintf(w, "No regressions over %.0f%%.\n", threshold*100)
	} else {
		parts := make([]string, len(regs))
		for i, r := range regs {
			parts[i] = r.String()
		}
		fmt.Fprintf(w, "%d regression(s) over %.0f%%: %s.\n", len(regs), threshold*100, strings.Join(parts, "; "))
	}
	return regs
}

func describe(r *Report) string {
	s := fmt.Sprintf("%s %s/%s", r.Go, r.GOOS, r.GOARCH)
	if r.Count > 0 {
		s += fmt.Sprintf(", %d sample(s) of %s", r.Count, r.Benchtime)
	}
	if r.LoadAvg != "" {
		s += ", load " + r.LoadAvg
	}
	return s
}

// relDelta is (head-base)/base; an increase from zero is +Inf.
func relDelta(base, head float64) float64 {
	switch {
	case base == head:
		return 0
	case base == 0:
		return math.Inf(1)
	}
	return (head - base) / base
}

func fmtDelta(d float64) string {
	if math.IsInf(d, 1) {
		return "+∞"
	}
	return fmt.Sprintf("%+.1f%%", d*100)
}

// unit is one step of a scale: a value shown in it is divided by size and
// followed by suffix.
type unit struct {
	size   float64
	suffix string
}

// scaled formats v with three significant digits in the first of units
// (largest first) whose size |v| reaches, else in the last.
func scaled(v float64, units ...unit) string {
	u := units[len(units)-1]
	for _, c := range units {
		if math.Abs(v) >= c.size {
			u = c
			break
		}
	}
	return sig3(v/u.size) + u.suffix
}

// fmtRate formats a rate with three significant digits and an SI suffix.
func fmtRate(v float64) string {
	return scaled(v, unit{1e9, "G"}, unit{1e6, "M"}, unit{1e3, "k"}, unit{1, ""})
}

func sig3(v float64) string {
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(math.Max(math.Abs(v), 1))))), 64)
}

// fmtDuration formats nanoseconds with a unit.
func fmtDuration(ns float64) string {
	return scaled(ns, unit{1e9, " s"}, unit{1e6, " ms"}, unit{1e3, " µs"}, unit{1, " ns"})
}

// fmtBytes formats a byte count in B, KiB or MiB (bytes exactly).
func fmtBytes(v float64) string {
	if math.Abs(v) < 1<<10 {
		return strconv.FormatFloat(v, 'f', -1, 64) + " B"
	}
	return scaled(v, unit{1 << 20, " MiB"}, unit{1 << 10, " KiB"})
}

// fmtCount formats an allocation count: whole numbers exactly below
// 10,000, fractions with up to three decimals.
func fmtCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e4:
		return fmtRate(v)
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
