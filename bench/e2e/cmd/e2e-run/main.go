// Command e2e-run compares this driver (each codec: direct, gojson,
// protobuf) with github.com/tursodatabase/libsql-client-go end to end
// against one local sqld, over HTTP and over WebSocket (ours/ws,
// ours/ws-protobuf against the peer's ws://, peer/ws), and prints Markdown
// tables of medians, ratios against the peer of the same transport and the
// performance targets.
//
// From the bench/e2e module (or `make bench-e2e` at the repository root):
//
//	go run ./cmd/e2e-run [-rounds 3] [-big-rounds 1] [-duration 10s] [-run REGEX] [-variants REGEX] [-json FILE] [-gzip]
//	go run ./cmd/e2e-run -serve    # only start sqld and fill the tables, for running the helpers by hand
//
// It builds the helper programs e2e-ours and e2e-peer into a temporary
// directory (or takes them from -ours and -peer), starts sqld (from -sqld,
// $SQLD or scripts/sqld.sh) on a free 127.0.0.1 port with a temporary data
// directory, fills the tables, then runs every workload once per round and
// variant, each run in a fresh process, with the variants' order rotated
// from round to round. sqld is always stopped and the directory removed.
//
// Workloads:
//
//	(a) scan20k     fixture.Query over the 20,000-row fixture table, typed Scan (and the net/http
//	                ceilings: the same request, body discarded; in JSON and in Protobuf,
//	                uncompressed as the driver on loopback, and in JSON with gzip as the peer)
//	(b) point       5,000 point SELECTs by primary key, one at a time: p50, p99 (and the
//	                WebSocket floor: a hand-written lockstep hrana3 client; pipelined for information)
//	(c) insert      10,000 prepared INSERTs of fixture rows in one transaction (and the floors:
//	                hand-written lockstep clients over HTTP/1.1 and over WebSocket)
//	(d) concurrent  16 goroutines doing point SELECTs for 10 s
//	(e) scan1m      SELECT id, name, score over 1,000,000 rows, typed Scan
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/bench/internal/delayproxy"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/internal/child"
	"github.com/gohrana/libsql/internal/sqldproc"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config holds the flags.
type config struct {
	rounds, bigRounds int
	scanIters         int
	points, inserts   int
	conc              int
	duration          time.Duration
	bigRows           int
	runRE, variantRE  *regexp.Regexp
	sqld, ours, peer  string
	jsonOut           string
	seed              uint64
	serve             bool
	rtt               time.Duration // added round-trip time between the workers and sqld
	dsnParams         string        // more DSN parameters for every variant of ours
	gzip              bool
}

// variant is one client configuration.
type variant struct {
	name   string // "ours/direct", "ours/gojson", "ours/protobuf", "peer", "ceiling", ...
	peer   bool   // run e2e-peer rather than e2e-ours
	ws     bool   // over WebSocket: the DSN (or the floor's base URL) is ws://
	codec  string // ?codec= for ours
	worker string // workload name for the worker, if not the workload's own
	suffix string // the worker's workload is the workload's own name with this suffix
	params string // more DSN parameters for ours
	twin   string // for ours over WebSocket: the same codec over HTTP
}

// dsn returns the -dsn of v for the server at base (http://host:port).
func (v variant) dsn(base string) string {
	if v.ws {
		base = "ws" + strings.TrimPrefix(base, "http")
	}
	if v.codec != "" {
		base += "?codec=" + v.codec + v.params
	}
	return base
}

var (
	direct   = variant{name: "ours/direct", codec: "direct"}
	gojson   = variant{name: "ours/gojson", codec: "gojson"}
	protobuf = variant{name: "ours/protobuf", codec: "protobuf"}
	peer     = variant{name: "peer", peer: true}
	// ceiling bounds (a) for JSON (the direct and gojson codecs),
	// ceilingProtobuf for Protobuf: net/http, body discarded.
	ceiling         = variant{name: "ceiling", worker: "ceiling"}
	ceilingProtobuf = variant{name: "ceiling/protobuf", worker: "ceiling-protobuf"}
	// directGzip is for information (flag -gzip): ours/direct with
	// compression=gzip, which is what it does on a real network (and what
	// the peer always does).
	directGzip = variant{name: "ours/direct/gzip", codec: "direct", params: "&compression=gzip"}
	// directDeferred is ours/direct with the opt-in deferredExec=1, which
	// sends a transaction's Execs in batches and reports their errors late.
	directDeferred = variant{name: "ours/direct/deferred", codec: "direct", params: "&deferredExec=1"}
	// directClosed is ours/direct with keepStreams=0: every statement on a
	// server stream of its own, as before streams were kept.
	directClosed = variant{name: "ours/direct/closed", codec: "direct", params: "&keepStreams=0"}
	// directNetHTTP is ours/direct through net/http's Transport
	// (WithRoundTripper) instead of the driver's own HTTP/1.1 client.
	directNetHTTP = variant{name: "ours/direct/nethttp", codec: "direct", suffix: "-nethttp"}
	// insertFloor bounds (c) for one request per INSERT: a raw TCP client.
	insertFloor = variant{name: "floor", worker: "insert-floor"}
	// ceilingGzip is for information: the ceiling with net/http's gzip.
	ceilingGzip = variant{name: "ceiling/gzip", worker: "ceiling-gzip"}

	// Over WebSocket: the peer with a ws:// DSN (subprotocol hrana1, one
	// stream per socket, one request at a time), and ours with a ws:// DSN
	// in JSON (hrana3) and in Protobuf (hrana3-protobuf).
	peerWS         = variant{name: "peer/ws", peer: true, ws: true}
	oursWS         = variant{name: "ours/ws", codec: "direct", ws: true, twin: direct.name}
	oursWSProtobuf = variant{name: "ours/ws-protobuf", codec: "protobuf", ws: true, twin: protobuf.name}
	// oursWSConn is ours/ws with a socket per connection (sockets=conn),
	// against the shared sockets of ours/ws.
	oursWSConn = variant{name: "ours/ws/conn", codec: "direct", ws: true, params: "&sockets=conn"}
	// The WebSocket floors of (b) and (c): a hand-written hrana3 client,
	// one request at a time on one stream; pointFloorWSPipelined, for
	// information, pipelines (b)'s requests.
	pointFloorWS          = variant{name: "floor/ws", worker: "point-floor-ws", ws: true}
	insertFloorWS         = variant{name: "floor/ws", worker: "insert-floor-ws", ws: true}
	pointFloorWSPipelined = variant{name: "floor/ws-pipelined", worker: "point-floor-ws-pipelined", ws: true}
	// concurrentFloorWS bounds (d): (b)'s floor client on as many sockets
	// as (d) has goroutines, each one request at a time.
	concurrentFloorWS = variant{name: "floor/ws", worker: "concurrent-floor-ws", ws: true}
	// concurrentFloorWSSQL is concurrentFloorWS behind the thinnest
	// database/sql driver: (d) as far as database/sql lets a driver go.
	concurrentFloorWSSQL = variant{name: "floor/ws-sql", worker: "concurrent-floor-ws-sql", ws: true}
	// The floors of (b) and (d) over HTTP for a driver that keeps a stream
	// per connection: what tursogo-serverless does on the wire (a baton
	// kept across statements, get_autocommit appended, net/http), behind
	// the thinnest database/sql driver.
	pointFloorHTTPKept      = variant{name: "floor/http-kept", worker: "point-floor-http-kept"}
	concurrentFloorHTTPKept = variant{name: "floor/http-kept", worker: "concurrent-floor-http-kept"}
)

// ours are this driver's codecs over HTTP, and oursWSAll the driver over
// WebSocket: each a variant of every workload and a column of its table
// of the report.
var (
	ours      = []variant{direct, gojson, protobuf}
	oursWSAll = []variant{oursWS, oursWSProtobuf}
)

// clients returns the variants every workload runs, ours and the peer over
// each transport, followed by the workload's own.
func clients(extra ...variant) []variant {
	all := append(append([]variant{}, ours...), peer)
	all = append(append(all, oursWSAll...), peerWS)
	return append(all, extra...)
}

// wl is one workload of the comparison.
type wl struct {
	name     string
	label    string
	variants []variant
	args     func(c *config) []string
	timeout  func(c *config) time.Duration
	big      bool // runs in the -big-rounds phase
}

func workloads() []wl {
	five := func(*config) time.Duration { return 5 * time.Minute }
	return []wl{
		{name: "scan20k", label: "(a) scan 20,000 rows x 6 cols, typed Scan",
			variants: clients(directNetHTTP, ceiling, ceilingProtobuf, ceilingGzip),
			args: func(c *config) []string {
				return []string{"-n", strconv.Itoa(workload.FixtureRows), "-iters", strconv.Itoa(c.scanIters)}
			}, timeout: five},
		{name: "point", label: "(b) point SELECT by primary key, sequential",
			variants: clients(oursWSConn, directClosed, directNetHTTP, pointFloorWS, pointFloorWSPipelined, pointFloorHTTPKept),
			args:     func(c *config) []string { return []string{"-n", strconv.Itoa(c.points)} }, timeout: five},
		{name: "insert", label: "(c) prepared INSERTs in one transaction",
			variants: clients(oursWSConn, directNetHTTP, directDeferred, insertFloor, insertFloorWS),
			args:     func(c *config) []string { return []string{"-n", strconv.Itoa(c.inserts)} }, timeout: five},
		{name: "concurrent", label: "(d) concurrent point SELECTs",
			variants: clients(oursWSConn, directClosed, directNetHTTP, concurrentFloorWS, concurrentFloorWSSQL, concurrentFloorHTTPKept),
			args: func(c *config) []string {
				return []string{"-n", "1", "-conc", strconv.Itoa(c.conc), "-duration", c.duration.String()}
			},
			timeout: func(c *config) time.Duration { return 2*c.duration + 3*time.Minute }},
		{name: "scan1m", label: "(e) scan 1,000,000 rows x 3 cols, typed Scan",
			variants: clients(),
			args:     func(c *config) []string { return []string{"-n", strconv.Itoa(c.bigRows)} },
			timeout:  func(*config) time.Duration { return 15 * time.Minute }, big: true},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("e2e-run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	runRE := fs.String("run", ".", "run only the workloads matching this `regexp` (scan20k, point, insert, concurrent, scan1m)")
	variantRE := fs.String("variants", ".", "run only the variants whose name matches this `regexp` (ours/direct, peer, ours/ws, peer/ws, floor/ws, ...)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of workloads (a)-(d); medians over them are reported")
	fs.IntVar(&c.bigRounds, "big-rounds", 1, "rounds of workload (e), the 1,000,000-row scan")
	fs.IntVar(&c.scanIters, "scan-iters", 7, "measured scans per run of (a) and the ceiling; a run reports their median")
	fs.IntVar(&c.points, "points", 5000, "queries of (b)")
	fs.IntVar(&c.inserts, "inserts", 10000, "INSERTs of (c)")
	fs.IntVar(&c.conc, "conc", 16, "goroutines of (d)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "duration of (d)")
	fs.IntVar(&c.bigRows, "big-rows", 1000000, "rows of the table (e) scans")
	fs.StringVar(&c.sqld, "sqld", "", "sqld binary (default $SQLD, else what scripts/sqld.sh prints)")
	fs.StringVar(&c.ours, "ours", "", "prebuilt e2e-ours binary (default: go build it)")
	fs.StringVar(&c.peer, "peer", "", "prebuilt e2e-peer binary (default: go build it)")
	fs.StringVar(&c.jsonOut, "json", "", "also write every result and the medians to this JSON `file`")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the point workloads' key sequences")
	fs.BoolVar(&c.gzip, "gzip", false, "also run ours/direct with compression=gzip (as on a real network; the peer always asks for gzip) in (a)-(e)")
	fs.StringVar(&c.dsnParams, "dsn-params", "", "more DSN `parameters` for every variant of this driver, e.g. '&proxy=http://127.0.0.1:8888'")
	fs.DurationVar(&c.rtt, "rtt", 0, "round-trip time to add between the workers and sqld (a proxy delaying each direction by half), for a network like a cloud region's")
	fs.BoolVar(&c.serve, "serve", false, "only start sqld and fill the tables, print the URL and wait for an interrupt (to run e2e-ours or e2e-peer by hand)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, f := range []struct {
		name string
		expr *string
		re   **regexp.Regexp
	}{{"run", runRE, &c.runRE}, {"variants", variantRE, &c.variantRE}} {
		re, err := regexp.Compile(*f.expr)
		if err != nil {
			fmt.Fprintf(stderr, "e2e-run: -%s: %v\n", f.name, err)
			return 2
		}
		*f.re = re
	}
	if c.rounds < 1 || c.scanIters < 1 || c.points < 1 || c.inserts < 1 || c.conc < 1 || c.duration <= 0 || c.bigRows < 1 {
		fmt.Fprintln(stderr, "e2e-run: counts and durations must be positive")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := execute(ctx, &c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "e2e-run: %v\n", err)
		return 1
	}
	printReport(stdout, rep)
	if c.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(c.jsonOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "e2e-run: -json: %v\n", err)
			return 1
		}
	}
	return 0
}

// execute builds, starts sqld, prepares and runs everything.
func execute(ctx context.Context, c *config, stderr io.Writer) (*report, error) {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	var selected []wl
	for _, w := range workloads() {
		if c.gzip {
			w.variants = append(w.variants, directGzip)
		}
		w.variants = slices.DeleteFunc(w.variants, func(v variant) bool { return !c.variantRE.MatchString(v.name) })
		if c.runRE.MatchString(w.name) && (!w.big || c.bigRounds > 0) && len(w.variants) > 0 {
			selected = append(selected, w)
		}
	}
	if len(selected) == 0 {
		return nil, errors.New("-run and -variants match no workload")
	}

	tmp, err := os.MkdirTemp("", "libsql-e2e-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	ours, peerBin := c.ours, c.peer
	for _, b := range []struct {
		path *string
		pkg  string
	}{{&ours, "./cmd/e2e-ours"}, {&peerBin, "./cmd/e2e-peer"}} {
		if *b.path != "" {
			continue
		}
		*b.path = filepath.Join(tmp, filepath.Base(b.pkg))
		logf("go build -o %s %s", *b.path, b.pkg)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *b.path, b.pkg)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build %s (run e2e-run from the bench/e2e module, or pass -ours and -peer): %w", b.pkg, err)
		}
	}

	bin := c.sqld
	if bin == "" {
		var err error
		if bin, err = sqldproc.Find(ctx, "SQLD"); err != nil {
			return nil, fmt.Errorf("%w (or pass -sqld)", err)
		}
	}
	version := sqldproc.Version(ctx, bin)
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin})
	if err != nil {
		return nil, err
	}
	defer func() {
		srv.Stop()
		_ = srv.Close() // removes its data
	}()
	logf("%s listening on %s", version, srv.URL())

	bigRows := 0
	for _, w := range selected {
		if w.big {
			bigRows = c.bigRows
		}
	}
	if err := prepare(ctx, srv.URL(), bigRows, logf); err != nil {
		return nil, fmt.Errorf("preparing the tables: %w", err)
	}
	if c.serve {
		logf("serving %s with the tables filled; the helpers are %s and %s; interrupt to stop", srv.URL(), ours, peerBin)
		<-ctx.Done()
		return nil, errors.New("interrupted")
	}

	base := srv.URL()
	if c.rtt > 0 {
		p, err := delayproxy.New(srv.Addr(), c.rtt)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		base = p.URL()
		logf("workers reach sqld through %s, %v of round trip added", base, c.rtt)
	}
	rep := &report{
		Started: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Server: version, LoadBefore: harness.LoadAvg(), Revision: gitRevision(ctx),
		Rounds: c.rounds, BigRounds: c.bigRounds, Duration: c.duration.String(), Conc: c.conc,
		Points: c.points, Inserts: c.inserts, BigRows: c.bigRows, ScanIters: c.scanIters,
		Command: strings.TrimSpace("cd bench/e2e && go run ./cmd/e2e-run " + shellJoin(os.Args[1:])),
	}
	phase := func(rounds int, big bool) error {
		for r := 1; r <= rounds; r++ {
			for _, w := range selected {
				if w.big != big {
					continue
				}
				n := len(w.variants)
				for i := range n {
					v := w.variants[(i+r-1)%n]
					res := runOne(ctx, c, w, v, ours, peerBin, base, srv.Pid())
					res.Round = r
					rep.Results = append(rep.Results, res)
					logf("round %d/%d %-10s %-19s %s", r, rounds, w.name, v.name, brief(res))
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
			}
		}
		return nil
	}
	if err := phase(c.rounds, false); err != nil {
		return nil, err
	}
	if err := phase(c.bigRounds, true); err != nil {
		return nil, err
	}
	rep.LoadAfter = harness.LoadAvg()
	rep.summarize(selected)
	return rep, nil
}

// runOne runs one workload in a fresh worker process and returns its
// result; a failure to run becomes the result's Error.
func runOne(ctx context.Context, c *config, w wl, v variant, ours, peerBin, base string, serverPID int) workload.Result {
	res := workload.Result{Workload: w.name, Variant: v.name}
	bin, dsn, name := ours, v.dsn(base), w.name
	if v.peer {
		bin = peerBin
	} else if v.codec != "" {
		dsn += c.dsnParams
	}
	if v.worker != "" {
		name = v.worker
	}
	if v.suffix != "" {
		name += v.suffix
	}
	timeout := w.timeout(c)
	args := append([]string{"-dsn", dsn, "-workload", name, "-seed", strconv.FormatUint(c.seed, 10),
		"-timeout", timeout.String(), "-server-pid", strconv.Itoa(serverPID)}, w.args(c)...)
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = child.Attr()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	line := lastJSONLine(out.String())
	if line != "" {
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			res.Error = "bad worker output: " + err.Error()
		}
		res.Workload, res.Variant = w.name, v.name
		if runErr != nil && res.Error == "" {
			res.Error = runErr.Error()
		}
		return res
	}
	msg := strings.TrimSpace(lastLines(errOut.String(), 3))
	if runErr != nil {
		msg = strings.TrimSpace(runErr.Error() + ": " + msg)
	}
	if msg == "" {
		msg = "no result from the worker"
	}
	res.Error = strings.Join(strings.Fields(msg), " ")
	return res
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastJSONLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

func brief(r workload.Result) string {
	if r.Error != "" {
		return "FAILED: " + r.Error
	}
	s := fmt.Sprintf("%s/s in %.2fs", fmtInt(r.Rate), r.Seconds)
	if r.P50Micros > 0 {
		s += fmt.Sprintf(", p50 %.0fµs p99 %.0fµs", r.P50Micros, r.P99Micros)
	}
	s += fmt.Sprintf(", %.2fµs CPU, %.1f allocs, %.0f B per row", r.CPUNsPerRow/1e3, r.AllocsPerRow, r.BytesPerRow)
	if r.ServerCPUNsPerRow > 0 {
		s += fmt.Sprintf(", sqld %.2fµs CPU", r.ServerCPUNsPerRow/1e3)
	}
	return s
}

// shellJoin quotes args for a POSIX shell where needed.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// gitRevision describes the checkout the helpers were built from: the short
// HEAD, with "+changes" if tracked files differ from it ("" outside git).
func gitRevision(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += "+changes"
	}
	return rev
}
