// Command libsql-perf measures the libsql driver's codecs and row delivery
// with testing.Benchmark and prints ops/s, rows/s, MB/s, B/op and
// allocs/op for each workload, then the direct/gojson and protobuf/direct
// ratios and the performance targets.
//
// Usage, from the bench module (cd bench):
//
//	go run ./cmd/libsql-perf [-run REGEX] [-benchtime 1s] [-count N] [-json FILE] [-dsn URL] [-label NAME]
//	go run ./cmd/libsql-perf -compare BASE.json HEAD.json
//	go run ./cmd/libsql-perf -merge OUT.json IN.json...
//	go run ./cmd/libsql-perf -list
//
// Workloads (-list prints them); {codec} is direct or gojson (JSON) or
// protobuf (Hrana 3 over Protobuf, fed the Protobuf form of the same
// responses: protobufResponse, checked byte for byte against a capture
// from sqld kept in testdata; protobuf_test.go says how to regenerate it):
//
//	decode/{codec}/{5k,20k}           decode the standard fixture response (fixture.Response, or its Protobuf form) into a reused codec.PipelineResponse
//	reference/goccy-structs/20k       goccy/go-json Unmarshal of the JSON body into plain wire-shaped structs
//	encode/{codec}/exec6              a pipeline request: one 6-argument execute and a close, into a reused buffer
//	encode/{codec}/batch10            the same with a batch of 10 such statements
//	scan/{codec}/{typed,any}/20k      database/sql Query and Scan of 20,000 rows from an in-process canned server
//	                                  (the JSON body on /v3/pipeline, the Protobuf one on /v3-protobuf/pipeline)
//	live/{codec}/typed/20k            the same against a live sqld given by -dsn (creates and fills table bench if needed)
//
// With -count N each workload runs N times (round-robin over the workloads)
// and the median is reported. -compare renders a Markdown table of two
// -json files and flags throughput drops and allocation increases over 10%;
// it exits 0 either way and ends with a summary line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/gohrana/libsql/bench/internal/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("libsql-perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		runRE     = fs.String("run", ".", "run only the workloads matching this regular expression")
		benchtime = fs.String("benchtime", "1s", "time (or Nx iterations) per workload run, as go test -benchtime")
		count     = fs.Int("count", 1, "run each workload `N` times and report the median")
		jsonOut   = fs.String("json", "", "write the results to this JSON `file`")
		dsn       = fs.String("dsn", "", "DSN of a live sqld (e.g. http://127.0.0.1:8080) for the live/ workloads")
		label     = fs.String("label", "", "name of this build in the JSON (e.g. a git revision)")
		compare   = fs.String("compare", "", "compare `BASE.json` with HEAD.json (the argument) as a Markdown table")
		merge     = fs.String("merge", "", "merge the JSON files given as arguments (medians of all samples) into `OUT.json`")
		list      = fs.Bool("list", false, "list the workloads and exit")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: libsql-perf [flags]\n       libsql-perf -compare BASE.json HEAD.json\n       libsql-perf -merge OUT.json IN.json...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}

	switch {
	case *list:
		for _, w := range allWorkloads() {
			fmt.Fprintln(stdout, w.name)
		}
		return 0
	case *compare != "":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "libsql-perf: -compare BASE.json needs HEAD.json as its argument")
			return 2
		}
		base, err := readReport(*compare)
		if err != nil {
			fmt.Fprintln(stderr, "libsql-perf:", err)
			return 1
		}
		head, err := readReport(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "libsql-perf:", err)
			return 1
		}
		renderCompare(stdout, base, head)
		return 0
	case *merge != "":
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "libsql-perf: -merge OUT.json needs input files")
			return 2
		}
		var reps []*Report
		for _, path := range fs.Args() {
			rep, err := readReport(path)
			if err != nil {
				fmt.Fprintln(stderr, "libsql-perf:", err)
				return 1
			}
			reps = append(reps, rep)
		}
		if err := writeReport(*merge, mergeReports(reps)); err != nil {
			fmt.Fprintln(stderr, "libsql-perf:", err)
			return 1
		}
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "libsql-perf: unexpected arguments %q\n", fs.Args())
		return 2
	}

	re, err := regexp.Compile(*runRE)
	if err != nil {
		fmt.Fprintln(stderr, "libsql-perf: -run:", err)
		return 2
	}
	if *count < 1 {
		fmt.Fprintln(stderr, "libsql-perf: -count must be at least 1")
		return 2
	}
	// testing.Benchmark reads the testing package's -test.benchtime flag.
	testing.Init()
	if err := flag.CommandLine.Set("test.benchtime", *benchtime); err != nil {
		fmt.Fprintln(stderr, "libsql-perf: -benchtime:", err)
		return 2
	}

	rep := &Report{
		Label:      *label,
		Go:         runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		LoadAvg:    harness.LoadAvg(),
		Time:       time.Now().UTC().Format(time.RFC3339),
		Benchtime:  *benchtime,
		Count:      *count,
	}
	fmt.Fprintf(stdout, "libsql-perf: %s %s/%s, %d CPUs, GOMAXPROCS %d, load %s, benchtime %s, count %d\n",
		rep.Go, rep.GOOS, rep.GOARCH, rep.CPUs, rep.GOMAXPROCS, orDash(rep.LoadAvg), rep.Benchtime, rep.Count)

	e := &env{dsn: *dsn}
	defer e.close()
	type prepared struct {
		name string
		b    bench
		res  *Result
	}
	var todo []*prepared
	failed := false
	for _, w := range allWorkloads() {
		if !re.MatchString(w.name) {
			continue
		}
		b, err := w.setup(e)
		if errors.Is(err, errSkip) {
			fmt.Fprintf(stderr, "%s: %v\n", w.name, err)
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: FAILED in setup: %v\n", w.name, err)
			failed = true
			continue
		}
		todo = append(todo, &prepared{w.name, b, &Result{Name: w.name, Rows: b.rows, DataBytes: b.data}})
	}
	if len(todo) == 0 {
		fmt.Fprintln(stderr, "libsql-perf: no workload to run")
		return 1
	}

	for round := 1; round <= *count; round++ {
		if *count > 1 {
			fmt.Fprintf(stderr, "round %d/%d\n", round, *count)
		}
		for _, p := range todo {
			if p.res == nil {
				continue // failed earlier
			}
			benchErr = nil
			r := testing.Benchmark(p.b.run)
			if benchErr != nil || r.N == 0 {
				err := benchErr
				if err == nil {
					err = errors.New("the benchmark did not run")
				}
				fmt.Fprintf(stderr, "%s: FAILED: %v\n", p.name, err)
				failed = true
				p.res = nil
				continue
			}
			s := Sample{
				N:           r.N,
				NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
				CPUNsPerOp:  r.Extra["cpu-ns/op"],
				BytesPerOp:  math.Round(float64(r.MemBytes) / float64(r.N)),
				AllocsPerOp: math.Round(float64(r.MemAllocs)/float64(r.N)*1000) / 1000,
			}
			p.res.Samples = append(p.res.Samples, s)
			fmt.Fprintf(stderr, "  %-28s %8d x %12.0f ns/op %12.0f cpu-ns/op\n", p.name, s.N, s.NsPerOp, s.CPUNsPerOp)
		}
	}
	for _, p := range todo {
		if p.res != nil {
			p.res.summarize()
			rep.Results = append(rep.Results, p.res)
		}
	}

	printTable(stdout, rep)
	printRatios(stdout, rep)
	printTargets(stdout, rep)

	if *jsonOut != "" {
		if err := writeReport(*jsonOut, rep); err != nil {
			fmt.Fprintln(stderr, "libsql-perf:", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\n%-28s %10s %10s %8s %9s %11s %10s %10s\n", "workload", "ops/s", "rows/s", "MB/s", "ns/row", "cpu-ns/row", "B/op", "allocs/op")
	for _, r := range rep.Results {
		rows, mb, nsRow, cpuRow := "", "", "", ""
		if r.Rows > 0 {
			rows = fmtRate(r.RowsPerSec)
			nsRow = fmt.Sprintf("%.1f", r.NsPerRow)
			if r.CPUNsPerRow > 0 {
				cpuRow = fmt.Sprintf("%.1f", r.CPUNsPerRow)
			}
		}
		if r.DataBytes > 0 {
			mb = fmt.Sprintf("%.1f", r.MBPerSec)
		}
		fmt.Fprintf(w, "%-28s %10s %10s %8s %9s %11s %10s %10s\n", r.Name, fmtRate(r.OpsPerSec), rows, mb, nsRow, cpuRow, fmtBytes(r.BytesPerOp), fmtCount(r.AllocsPerOp))
	}
}
