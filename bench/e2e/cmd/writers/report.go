package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/internal/writerstress"
)

// environment describes where the measurements ran.
type environment struct {
	server                string // sqld --version
	goos, goarch          string
	cpus                  int
	goVersion             string
	loadBefore, loadAfter string
}

func (e environment) write(w io.Writer) {
	fmt.Fprintf(w, "%s; %s/%s, %d CPUs, %s; load average %s before, %s after.\n\n",
		e.server, e.goos, e.goarch, e.cpus, e.goVersion, e.loadBefore, e.loadAfter)
}

// writeStressReport writes, per parameter set, how many runs were clean,
// how many stalled sqld and how many hung otherwise; results[i] are the
// runs of cfg.sets[i].
func writeStressReport(w io.Writer, env environment, cfg *config, results [][]writerstress.Result) {
	env.write(w)
	want := int64(cfg.workers * cfg.per)
	fmt.Fprintf(w, "Stall runs: %d per parameter set, interleaved, each on a sqld of its own (default WAL): "+
		"%d busy loops, %d goroutines x %d autocommit INSERTs on one *sql.DB (variant %s), deadline %v. "+
		"Clean: %d inserts succeeded, %d rows, no error, in time. Stalled: after the deadline an independent write hung 5 s more.\n\n",
		cfg.runs, cfg.busy, cfg.workers, cfg.per, cfg.variant, cfg.deadline, want, want)
	fmt.Fprintln(w, "| parameters | runs | clean | sqld stalled | hung, not stalled | errors | wall time of clean runs | load average |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|---|---|---|")
	for i, set := range cfg.sets {
		var clean, stalled, hung int
		errs := map[string]int64{}
		var walls, loads []float64
		for _, r := range results[i] {
			switch {
			case r.Clean(want):
				clean++
				walls = append(walls, r.Wall.Seconds())
			case r.Stalled:
				stalled++
			case r.Hung:
				hung++
			}
			for k, v := range r.Errs {
				errs[k] += v
			}
			if l, err := strconv.ParseFloat(r.LoadAvg, 64); err == nil {
				loads = append(loads, l)
			}
		}
		errCell := "none"
		if len(errs) > 0 {
			errCell = writerstress.ErrorCounts(errs)
		}
		fmt.Fprintf(w, "| `%s` | %d | %d | %d | %d | %s | %s | %s |\n", set.name(), len(results[i]), clean, stalled, hung,
			errCell, wallTimes(walls), spread(loads, "%.1f"))
	}
}

// wallTimes formats wall times in seconds: their spread and, of more than
// one, their median.
func wallTimes(secs []float64) string {
	switch len(secs) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf("%.1f s", secs[0])
	}
	return fmt.Sprintf("%s s, median %.1f s", spread(secs, "%.1f"), harness.Median(secs))
}

// spread formats the smallest and the largest of xs as "lo-hi" (one
// number if they are equal, "-" for none).
func spread(xs []float64, verb string) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo == hi {
		return fmt.Sprintf(verb, lo)
	}
	return fmt.Sprintf(verb+"-"+verb, lo, hi)
}

// writeThroughputReport writes a table of inserts/s with a row per
// concurrency and a column per parameter set: the median over the rounds
// and, against the first set, the median of the per-round ratios with
// their range. samples is indexed [concurrency][set][round].
func writeThroughputReport(w io.Writer, env environment, cfg *config, samples [][][]sample) {
	env.write(w)
	proxy := ""
	if cfg.latency > 0 {
		proxy = fmt.Sprintf(", %v added to each direction by a proxy (%v per round trip)", cfg.latency, 2*cfg.latency)
	}
	fmt.Fprintf(w, "Autocommit INSERTs/s through one *sql.DB (variant %s), %d rounds; each round and concurrency on a sqld "+
		"of its own (default WAL), every parameter set in turn for %v after %v of warm-up, in an order rotated per round%s. "+
		"Cells: the median inserts/s (a stalled sample counts 0; one stalls when an INSERT hangs %v) and the median of the "+
		"per-round ratios to `%s`, with their range.\n\n",
		cfg.variant, cfg.rounds, cfg.sample, warmUp, proxy, hangAfter, cfg.sets[0].name())
	head := []string{"writers"}
	for _, set := range cfg.sets {
		head = append(head, "`"+set.name()+"`")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(w, "|--:|%s\n", strings.Repeat("--:|", len(cfg.sets)))
	for ci, conc := range concurrencies {
		cells := []string{strconv.Itoa(conc)}
		for k := range cfg.sets {
			cells = append(cells, throughputCell(samples[ci][0], samples[ci][k], k == 0))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// throughputCell formats the samples of one set at one concurrency, with
// their ratios to the rounds of base (unless the set is the base) in which
// base did not stall.
func throughputCell(base, samples []sample, isBase bool) string {
	var rates, ratios []float64
	stalls := 0
	for r, s := range samples {
		rates = append(rates, s.rate)
		if s.stalled {
			stalls++
		}
		if r < len(base) && base[r].rate > 0 {
			ratios = append(ratios, s.rate/base[r].rate)
		}
	}
	cell := fmt.Sprintf("%.0f/s", harness.Median(rates))
	if !isBase {
		switch {
		case len(ratios) == 0:
			cell += ", no ratio"
		case len(ratios) == 1:
			cell += fmt.Sprintf(", %.3f", ratios[0])
		default:
			cell += fmt.Sprintf(", %.3f (%s)", harness.Median(ratios), spread(ratios, "%.3f"))
		}
	}
	if stalls > 0 {
		cell += fmt.Sprintf(", %d stalled", stalls)
	}
	return cell
}
