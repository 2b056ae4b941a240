package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// config holds the flags.
type config struct {
	runs   int // stall runs per parameter set; 0: measure throughput
	rounds int // throughput rounds; 0: stall runs
	sets   []paramSet
	// variant is how the driver reaches sqld: -codec over -transport.
	variant testmatrix.Variant
	sqld    string

	// Stall runs.
	workers, per int
	busy         int // busy loops
	deadline     time.Duration

	// Throughput.
	sample  time.Duration // measured time per sample
	latency time.Duration // added to each direction by a proxy; 0: none
}

// paramSet is one set of DSN parameters under comparison.
type paramSet struct {
	label  string   // as given; "" is the driver's defaults
	params []string // key=value
}

// name is the set's label for the report.
func (s paramSet) name() string {
	if s.label == "" {
		return "(defaults)"
	}
	return s.label
}

// defaultThroughputParams are the sets the throughput compares unless told.
const defaultThroughputParams = "maxWriters=0;maxWriters=1;maxWriters=2;maxWriters=4"

// stressOnly and throughputOnly are the flags of one measurement each.
var (
	stressOnly     = []string{"workers", "per", "busy", "deadline"}
	throughputOnly = []string{"seconds", "latency"}
)

// parseFlags parses and checks the command line. Usage errors go to
// stderr; -h returns flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("writers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: writers -runs N [stall-run flags] | -rounds N [throughput flags]")
		fs.PrintDefaults()
	}
	c := &config{}
	fs.IntVar(&c.runs, "runs", 0, "stall runs: this many runs per parameter set, interleaved")
	fs.IntVar(&c.rounds, "rounds", 0, "throughput: this many rounds of every concurrency and parameter set")
	params := fs.String("params", "", "the DSN parameter `sets` to compare: key=value pairs joined by ',', sets separated by ';' "+
		"(an empty set: the driver's defaults); default: the defaults for -runs, "+defaultThroughputParams+" for -rounds")
	codec := fs.String("codec", "direct", "the driver's codec: "+strings.Join(testmatrix.Codecs, ", "))
	transport := fs.String("transport", string(testmatrix.HTTP), "http or ws")
	fs.StringVar(&c.sqld, "sqld", "", "sqld binary (default $SQLD, else what scripts/sqld.sh prints)")
	fs.IntVar(&c.workers, "workers", 32, "stall runs: goroutines writing")
	fs.IntVar(&c.per, "per", 50, "stall runs: INSERTs per goroutine")
	fs.IntVar(&c.busy, "busy", runtime.NumCPU(), "stall runs: busy loops taking the cores (default: one per CPU)")
	fs.DurationVar(&c.deadline, "deadline", 60*time.Second, "stall runs: a run still going then counts as hung")
	seconds := fs.Int("seconds", 3, "throughput: measured seconds per sample")
	fs.DurationVar(&c.latency, "latency", 0, "throughput: delay a proxy in front of sqld adds to each direction (a round trip: twice that; 0: no proxy)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if c.runs < 0 || c.rounds < 0 {
		return nil, errors.New("-runs and -rounds must not be negative")
	}
	if (c.runs > 0) == (c.rounds > 0) {
		return nil, errors.New("give either -runs or -rounds, a positive count")
	}
	mode, other := "runs", throughputOnly
	if c.rounds > 0 {
		mode, other = "rounds", stressOnly
	}
	for _, name := range other {
		if set[name] {
			return nil, fmt.Errorf("-%s does not apply to -%s", name, mode)
		}
	}
	if c.workers < 1 || c.per < 1 || c.busy < 0 || c.deadline <= 0 || *seconds < 1 || c.latency < 0 {
		return nil, errors.New("-workers, -per, -deadline and -seconds must be positive, -busy and -latency not negative")
	}
	c.sample = time.Duration(*seconds) * time.Second

	tr := testmatrix.Transport(*transport)
	if !slices.Contains(testmatrix.Transports, tr) {
		return nil, fmt.Errorf("-transport %q: want http or ws", *transport)
	}
	if !slices.Contains(testmatrix.Codecs, *codec) {
		return nil, fmt.Errorf("-codec %q: want one of %s", *codec, strings.Join(testmatrix.Codecs, ", "))
	}
	c.variant = testmatrix.New(tr, *codec)

	if !set["params"] && c.rounds > 0 {
		*params = defaultThroughputParams
	}
	sets, err := parseSets(*params, c.variant)
	if err != nil {
		return nil, err
	}
	c.sets = sets
	return c, nil
}

// parseSets splits -params into its sets and checks each as the driver
// parses it, so that a typo fails before any server starts.
func parseSets(s string, v testmatrix.Variant) ([]paramSet, error) {
	var sets []paramSet
	for label := range strings.SplitSeq(s, ";") {
		label = strings.TrimSpace(label)
		set := paramSet{label: label}
		if label != "" {
			for p := range strings.SplitSeq(label, ",") {
				p = strings.TrimSpace(p)
				if !strings.Contains(p, "=") {
					return nil, fmt.Errorf("-params: %q is not key=value", p)
				}
				set.params = append(set.params, p)
			}
		}
		if _, err := libsql.ParseDSN(v.DSN("http://127.0.0.1", set.params...)); err != nil {
			return nil, fmt.Errorf("-params %q: %w", label, err)
		}
		sets = append(sets, set)
	}
	return sets, nil
}
