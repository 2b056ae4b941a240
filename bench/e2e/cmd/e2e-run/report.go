package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/bench/internal/harness"
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
	Workload     string  `json:"workload"`
	Variant      string  `json:"variant"`
	Runs         int     `json:"runs"`
	Failed       int     `json:"failed"`
	Error        string  `json:"error,omitempty"` // of the last failed run
	Rate         float64 `json:"rate"`
	P50Micros    float64 `json:"p50_us,omitempty"`
	P99Micros    float64 `json:"p99_us,omitempty"`
	CPUNsPerRow  float64 `json:"cpu_ns_per_row"`
	AllocsPerRow float64 `json:"allocs_per_row"`
	BytesPerRow  float64 `json:"bytes_per_row"`
	MaxRSSKB     float64 `json:"max_rss_kb"`
	// ServerCPUNsPerRow is sqld's CPU time per row (0: not measured).
	ServerCPUNsPerRow float64   `json:"server_cpu_ns_per_row,omitempty"`
	Rates             []float64 `json:"rates"`
}

func (rep *report) summarize(ws []wl) {
	rep.workloads = ws
	for _, w := range ws {
		for _, v := range w.variants {
			s := summary{Workload: w.name, Variant: v.name}
			var p50, p99, cpu, allocs, bytes, rss, srvCPU []float64
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
				if r.ServerCPUNsPerRow > 0 {
					srvCPU = append(srvCPU, r.ServerCPUNsPerRow)
				}
			}
			if s.Runs == 0 {
				continue // not run (or not yet): no cells rather than a failure
			}
			s.Rate, s.P50Micros, s.P99Micros = harness.Median(s.Rates), harness.Median(p50), harness.Median(p99)
			s.CPUNsPerRow, s.AllocsPerRow = harness.Median(cpu), harness.Median(allocs)
			s.BytesPerRow, s.MaxRSSKB = harness.Median(bytes), harness.Median(rss)
			s.ServerCPUNsPerRow = harness.Median(srvCPU)
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

// ran reports whether any of the variants has a median (ran, perhaps
// failing) in any workload.
func (rep *report) ran(variants ...string) bool {
	for _, s := range rep.Medians {
		if slices.Contains(variants, s.Variant) {
			return true
		}
	}
	return false
}

// ok reports whether s has at least one successful run.
func (s *summary) ok() bool { return s != nil && s.Runs > s.Failed }

// mainTable writes the rows of one of the report's main tables, one per
// transport: a label and a metric, then one cell per column of ours, the
// peer's, and one ratio to the peer per column of ours. Missing cells are
// left empty.
type mainTable struct {
	w    io.Writer
	rep  *report
	cols []string // the variants of ours
	peer string   // the variant of the peer
}

func (t mainTable) header() {
	cells := []string{"workload", "metric"}
	cells = append(cells, t.cols...)
	cells = append(cells, t.peer)
	for _, c := range t.cols {
		cells = append(cells, strings.TrimPrefix(c, "ours/")+" ÷ "+t.peer)
	}
	fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
	fmt.Fprintf(t.w, "|---|---|%s\n", strings.Repeat("--:|", 2*len(t.cols)+1))
}

func (t mainTable) line(label, metric string, cells ...string) {
	all := make([]string, 2*len(t.cols)+1)
	copy(all, cells)
	fmt.Fprintf(t.w, "| %s | %s | %s |\n", label, metric, strings.Join(all, " | "))
}

// values returns cell of each column of ours, then of the peer, for
// workload wn.
func (t mainTable) values(wn string, cell func(*summary) string) []string {
	out := make([]string, 0, len(t.cols)+1)
	for _, c := range t.cols {
		out = append(out, cell(t.rep.get(wn, c)))
	}
	return append(out, cell(t.rep.get(wn, t.peer)))
}

// ratios returns each column of ours ÷ against, by of.
func (t mainTable) ratios(wn string, against *summary, of func(*summary) float64) []string {
	out := make([]string, 0, len(t.cols))
	for _, c := range t.cols {
		out = append(out, ratioCell(t.rep.get(wn, c), against, of))
	}
	return out
}

// standard writes a metric of every column with the ratios to the peer.
func (t mainTable) standard(wn, label, metric string, cell func(*summary) string, of func(*summary) float64) {
	t.line(label, metric, append(t.values(wn, cell), t.ratios(wn, t.rep.get(wn, t.peer), of)...)...)
}

// bound writes the row of a bound b (a ceiling, a floor) whose figure is
// value: every client's of ÷ the bound's, then more cells in the ratio
// columns.
func (t mainTable) bound(wn, label, value, metric string, b *summary, of func(*summary) float64, more ...string) {
	if !b.ok() {
		value = "fails: " + b.Error
	}
	cells := append(t.ratios(wn, b, of), ratioCell(t.rep.get(wn, t.peer), b, of))
	t.line(label+": "+value, metric, append(cells, more...)...)
}

// rows writes the table: the standard rows of every workload, each
// followed by the rows extra writes for it.
func (t mainTable) rows(extra func(mainTable, wl)) {
	t.header()
	for _, wd := range t.rep.workloads {
		switch wd.name {
		case "scan20k", "insert", "scan1m":
			t.standard(wd.name, wd.label, "rows/s", rateCell, rateOf)
		case "point":
			t.standard(wd.name, fmt.Sprintf("%s, %s queries", wd.label, fmtInt(float64(t.rep.Points))), "p50 µs",
				func(s *summary) string { return usCell(s, p50Of) }, p50Of)
			t.standard(wd.name, "", "p99 µs", func(s *summary) string { return usCell(s, p99Of) }, p99Of)
			t.standard(wd.name, "", "queries/s", rateCell, rateOf)
		case "concurrent":
			t.standard(wd.name, fmt.Sprintf("%s, %d goroutines, %s", wd.label, t.rep.Conc, t.rep.Duration), "queries/s", rateCell, rateOf)
			t.line("", "p50 / p99 µs", t.values(wd.name, p5099)...)
		}
		extra(t, wd)
	}
}

// httpRows are the HTTP table's rows of bounds and of the deferred variant.
func httpRows(t mainTable, wd wl) {
	p := t.rep.get(wd.name, t.peer)
	switch wd.name {
	case "insert":
		if f := t.rep.get(wd.name, insertFloor.name); f != nil {
			t.bound(wd.name, "(c) floor for one request per INSERT: a raw-TCP HTTP/1.1 client, no database/sql", rateCell(f)+" rows/s",
				"÷ this floor", f, rateOf, "floor ÷ peer: "+ratioCell(f, p, rateOf))
		}
		if z := t.rep.get(wd.name, directDeferred.name); z != nil {
			cells := make([]string, 2*len(t.cols)+1)
			if i := t.column(direct.name); i >= 0 {
				cells[i], cells[len(t.cols)+1+i] = rateCell(z), ratioCell(z, p, rateOf)
			}
			t.line("(c) the same with the opt-in deferredExec=1 (Execs sent in batches, errors reported late)", "rows/s", cells...)
		}
	case "scan20k":
		for _, cv := range []struct{ name, label string }{
			{ceiling.name, "(a) net/http ceiling for JSON: the driver's request on /v3/pipeline (uncompressed on loopback), body discarded"},
			{ceilingProtobuf.name, "(a) net/http ceiling for Protobuf: the same request in Protobuf on /v3-protobuf/pipeline, body discarded"},
			{ceilingGzip.name, "(a) the JSON one with net/http's gzip, as the peer gets it (for information)"},
		} {
			if c := t.rep.get(wd.name, cv.name); c != nil {
				t.bound(wd.name, cv.label, rateCell(c)+" rows/s", "÷ this ceiling", c, rateOf)
			}
		}
	}
}

// wsRows are the WebSocket table's rows of its floors.
func wsRows(t mainTable, wd wl) {
	p, f := t.rep.get(wd.name, t.peer), t.rep.get(wd.name, pointFloorWS.name) // insertFloorWS has the same name
	switch {
	case f == nil:
	case wd.name == "point":
		t.bound(wd.name, "(b) WebSocket floor: one request at a time on one stream, a hand-written hrana3 client, no database/sql",
			usCell(f, p50Of)+" µs p50", "p50 ÷ this floor", f, p50Of, "floor ÷ "+t.peer+": "+ratioCell(f, p, p50Of))
	case wd.name == "insert":
		t.bound(wd.name, "(c) WebSocket floor: one request per INSERT on one stream, a hand-written hrana3 client, no database/sql",
			rateCell(f)+" rows/s", "÷ this floor", f, rateOf, "floor ÷ "+t.peer+": "+ratioCell(f, p, rateOf))
	case wd.name == "concurrent":
		t.bound(wd.name, "(d) WebSocket floor: (b)'s floor client on a socket per goroutine, no database/sql",
			rateCell(f)+" queries/s", "÷ this floor", f, rateOf, "floor ÷ "+t.peer+": "+ratioCell(f, p, rateOf))
	}
	if q := t.rep.get(wd.name, concurrentFloorWSSQL.name); wd.name == "concurrent" && q != nil {
		t.bound(wd.name, "(d) database/sql's floor: the same client behind the thinnest database/sql driver, in JSON",
			rateCell(q)+" queries/s", "÷ this floor", q, rateOf, "floor ÷ "+t.peer+": "+ratioCell(q, p, rateOf))
	}
	if q := t.rep.get(wd.name, pointFloorWSPipelined.name); wd.name == "point" && q != nil {
		label := "(b) the WebSocket floor with its requests pipelined (for information): fails: " + q.Error
		if q.ok() {
			label = fmt.Sprintf("(b) the WebSocket floor with its %s requests pipelined on its stream (for information): %.0f µs per request",
				fmtInt(float64(t.rep.Points)), perRequestUs(q))
			if f.ok() {
				label += fmt.Sprintf(", against %.0f µs in lockstep", perRequestUs(f))
			}
		}
		t.line(label, "")
	}
}

// column returns the position of variant v among the columns of ours.
func (t mainTable) column(v string) int {
	for i, c := range t.cols {
		if c == v {
			return i
		}
	}
	return -1
}

// names returns the names of vs.
func names(vs []variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.name
	}
	return out
}

// ceilingOf names the ceiling of the encoding variant v speaks.
func ceilingOf(v string) string {
	if v == protobuf.name {
		return ceilingProtobuf.name
	}
	return ceiling.name
}

// twinOf names the variant of ours over HTTP with the codec of v, one of
// ours over WebSocket.
func twinOf(v string) string {
	for _, o := range oursWSAll {
		if o.name == v {
			return o.twin
		}
	}
	return ""
}

func printReport(w io.Writer, rep *report) {
	fmt.Fprintf(w, "Command: `%s`\n\n", rep.Command)
	fmt.Fprintf(w, "Driver at %s; %s/%s, %d CPUs, %s, %s; load average %s before, %s after. "+
		"Medians over %d rounds ((e): %d); every run is a fresh process; variants interleaved, order rotated per round.\n\n",
		orDash(rep.Revision), rep.GOOS, rep.GOARCH, rep.CPUs, rep.GoVersion, rep.Server, orDash(rep.LoadBefore), orDash(rep.LoadAfter),
		rep.Rounds, rep.BigRounds)

	if cols := names(ours); rep.ran(append(cols, peer.name)...) {
		mainTable{w: w, rep: rep, cols: cols, peer: peer.name}.rows(httpRows)
		printTargets(w, rep, "Targets (issue), on the medians:", cols, httpTargets)
		printDeferred(w, rep)
	}
	if cols := names(oursWSAll); rep.ran(append(cols, peerWS.name)...) {
		fmt.Fprintf(w, "\nOver WebSocket (ws:// DSNs; ours: one server stream per connection, sockets shared; %s: a socket per connection, subprotocol hrana1):\n\n", peerWS.name)
		mainTable{w: w, rep: rep, cols: cols, peer: peerWS.name}.rows(wsRows)
		printTargets(w, rep, "WebSocket targets (issue 19), on the medians:", cols, wsTargets)
	}
	printGzip(w, rep)

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Client cost per row (per query for (b) and (d)), medians; CPU is the client process's user+system time (getrusage), allocations from runtime.MemStats, both over the measured part only; sqld CPU is the server's user+system time over the same part (/proc, Linux), which shares the machine's cores with the client:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | variant | CPU µs/row | CPU ÷ ours/direct | allocs/row | B/row | max RSS MB | sqld CPU µs/row | runs (failed) | rates per run |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, s := range rep.Medians {
		if !s.ok() {
			fmt.Fprintf(w, "| %s | %s | fails: %s | | | | | | %d (%d) | |\n", s.Workload, s.Variant, s.Error, s.Runs, s.Failed)
			continue
		}
		rates := make([]string, len(s.Rates))
		for i, r := range s.Rates {
			rates[i] = fmtInt(r)
		}
		vsDirect := ""
		if s.Variant != direct.name {
			vsDirect = ratioCell(&s, rep.get(s.Workload, direct.name), cpuOf)
		}
		srvCPU := ""
		if s.ServerCPUNsPerRow > 0 {
			srvCPU = fmt.Sprintf("%.2f", s.ServerCPUNsPerRow/1e3)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %s | %.1f | %s | %.0f | %s | %d (%d) | %s |\n", s.Workload, s.Variant,
			s.CPUNsPerRow/1e3, vsDirect, s.AllocsPerRow, fmtInt(s.BytesPerRow), s.MaxRSSKB/1024, srvCPU, s.Runs, s.Failed, strings.Join(rates, ", "))
	}
	for _, s := range rep.Medians {
		if s.ok() && s.Failed > 0 {
			fmt.Fprintf(w, "\nNote: %s %s failed %d of %d runs: %s\n", s.Workload, s.Variant, s.Failed, s.Runs, s.Error)
		}
	}
}

// target is one of the targets, checked on the medians.
type target struct {
	name string // starts with the workload's letter, "(a)"
	only string // the one column it applies to; "" for every one
	// measure returns the cell of column v (whose median is s), whether
	// it passes, and whether that is known.
	measure func(rep *report, v string, s *summary) (cell string, pass, known bool)
}

// measureFunc is the type of target.measure.
type measureFunc = func(rep *report, v string, s *summary) (cell string, pass, known bool)

// Limits of the targets.
const (
	maxScanBigRSSMB = 64 // ours/protobuf's peak RSS over the 1,000,000-row cursor
)

// The targets over HTTP, against the peer over HTTP.
var httpTargets = []target{
	{"(a) rows/s >= 5x the peer's", "", ratioTarget("scan20k", fixed(peer.name), rateOf, true, 5)},
	{"(a) rows/s >= 0.8x the net/http ceiling of its encoding (ours/protobuf: the Protobuf one)", "", ratioTarget("scan20k", ceilingOf, rateOf, true, 0.8)},
	{"(a) rows/s >= 1.1x the JSON net/http ceiling", protobuf.name, ratioTarget("scan20k", fixed(ceiling.name), rateOf, true, 1.1)},
	{"(a) client CPU per row ÷ ours/direct's (for information)", protobuf.name, ratioInfo("scan20k", fixed(direct.name), cpuOf)},
	{"(b) p50 <= 0.8x the peer's", "", ratioTarget("point", fixed(peer.name), p50Of, false, 0.8)},
	{"(c) rows/s >= 2x the peer's", "", ratioTarget("insert", fixed(peer.name), rateOf, true, 2)},
	{"(d) queries/s >= 1.5x the peer's", "", ratioTarget("concurrent", fixed(peer.name), rateOf, true, 1.5)},
	{"(e) the 1,000,000-row scan completes", "", completes},
	{fmt.Sprintf("(e) max RSS <= %d MB", maxScanBigRSSMB), protobuf.name, maxRSS},
	{"(e) rows/s >= 1.3x ours/direct's", protobuf.name, ratioTarget("scan1m", fixed(direct.name), rateOf, true, 1.3)},
}

// The targets over WebSocket (issue 19): against the same codec over HTTP
// for the scans, against the peer over ws:// for the rest.
var wsTargets = []target{
	{"(a) rows/s >= 0.95x the same codec over HTTP (ours/direct's, ours/protobuf's)", "", ratioTarget("scan20k", twinOf, rateOf, true, 0.95)},
	{"(a) client CPU per row <= 1.2x the same codec's over HTTP", "", ratioTarget("scan20k", twinOf, cpuOf, false, 1.2)},
	{"(b) p50 <= 0.85x " + peerWS.name + "'s", "", ratioTarget("point", fixed(peerWS.name), p50Of, false, 0.85)},
	{"(b) p50 ÷ " + pointFloorWS.name + "'s (for information)", "", ratioInfo("point", fixed(pointFloorWS.name), p50Of)},
	{"(c) rows/s >= 1.0x " + peerWS.name + "'s (default mode, not deferred)", "", ratioTarget("insert", fixed(peerWS.name), rateOf, true, 1.0)},
	{"(d) queries/s >= 1.25x " + peerWS.name + "'s", "", ratioTarget("concurrent", fixed(peerWS.name), rateOf, true, 1.25)},
	{"(e) rows/s >= 0.9x the same codec over HTTP", "", ratioTarget("scan1m", twinOf, rateOf, true, 0.9)},
	{fmt.Sprintf("(e) max RSS <= %d MB", maxScanBigRSSMB), "", maxRSS},
}

// fixed names the variant name, whatever the column.
func fixed(name string) func(string) string { return func(string) string { return name } }

// ratioTo returns of(s) ÷ of of the variant that other(v) names, in
// workload wname, and whether both ran.
func ratioTo(rep *report, wname string, other func(v string) string, of func(*summary) float64, v string, s *summary) (float64, bool) {
	o := rep.get(wname, other(v))
	if !s.ok() || !o.ok() || of(o) == 0 {
		return 0, false
	}
	return of(s) / of(o), true
}

// ratioTarget wants that ratio to be at least bound (min) or at most.
func ratioTarget(wname string, other func(v string) string, of func(*summary) float64, min bool, bound float64) measureFunc {
	return func(rep *report, v string, s *summary) (string, bool, bool) {
		r, ok := ratioTo(rep, wname, other, of, v, s)
		if !ok {
			return "n/a", false, false
		}
		return fmt.Sprintf("%.2fx", r), (min && r >= bound) || (!min && r <= bound), true
	}
}

// ratioInfo shows the ratio without a verdict.
func ratioInfo(wname string, other func(v string) string, of func(*summary) float64) measureFunc {
	return func(rep *report, v string, s *summary) (string, bool, bool) {
		if r, ok := ratioTo(rep, wname, other, of, v, s); ok {
			return fmt.Sprintf("%.2fx", r), false, false
		}
		return "n/a", false, false
	}
}

func completes(_ *report, _ string, s *summary) (string, bool, bool) {
	switch {
	case s == nil || s.Runs == 0:
		return "n/a", false, false
	case s.Failed == 0:
		return fmt.Sprintf("%s rows/s", fmtInt(s.Rate)), true, true
	}
	return fmt.Sprintf("fails (%d/%d): %s", s.Failed, s.Runs, s.Error), false, true
}

func maxRSS(_ *report, _ string, s *summary) (string, bool, bool) {
	if !s.ok() || s.MaxRSSKB == 0 {
		return "n/a", false, false
	}
	mb := s.MaxRSSKB / 1024
	return fmt.Sprintf("%.0f MB", mb), mb <= maxScanBigRSSMB, true
}

// printTargets writes a table of targets under title, one column per
// variant of ours (cols). A target of a workload none of cols ran is left
// out.
func printTargets(w io.Writer, rep *report, title string, cols []string, targets []target) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| target | %s |\n", strings.Join(cols, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(cols)))
	wname := map[string]string{"(a)": "scan20k", "(b)": "point", "(c)": "insert", "(d)": "concurrent", "(e)": "scan1m"}
	for _, t := range targets {
		wn := wname[t.name[:3]]
		ran := slices.ContainsFunc(cols, func(v string) bool { return rep.get(wn, v) != nil })
		if !ran || (t.only != "" && rep.get(wn, t.only) == nil) {
			continue
		}
		cells := make([]string, 0, len(cols))
		for _, v := range cols {
			if t.only != "" && v != t.only {
				cells = append(cells, "")
				continue
			}
			cell, pass, known := t.measure(rep, v, rep.get(wn, v))
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
}

// printDeferred compares the deferred variant with the peer, if it ran.
func printDeferred(w io.Writer, rep *report) {
	z := rep.get("insert", directDeferred.name)
	if z == nil {
		return
	}
	cell, pass, known := ratioTarget("insert", fixed(peer.name), rateOf, true, 2)(rep, directDeferred.name, z)
	verdict := ""
	if known {
		verdict = map[bool]string{true: " (>= 2x)", false: " (under 2x)"}[pass]
	}
	fmt.Fprintf(w, "\n(c) with the opt-in deferredExec=1, which changes when errors are reported: %s the peer's rows/s%s.\n", cell, verdict)
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
func cpuOf(s *summary) float64  { return s.CPUNsPerRow }

// perRequestUs is the mean wall time per request (or row) of s, in µs.
func perRequestUs(s *summary) float64 {
	if s.Rate == 0 {
		return 0
	}
	return 1e6 / s.Rate
}

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
