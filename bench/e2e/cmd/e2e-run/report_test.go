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
	// run is one made-up result; rates are multiplied by the three rounds'
	// factors 0.9, 1 and 5, so that the median is the rate itself.
	type run struct {
		w, v      string
		rate, p50 float64
		cpu       float64 // ns per row
		srvCPU    float64 // the server's, ns per row
		rssMB     int64
		err       string
	}
	base := []run{
		{w: "scan20k", v: "ours/direct", rate: 100000, cpu: 2000},
		{w: "scan20k", v: "ours/gojson", rate: 50000, cpu: 6000},
		{w: "scan20k", v: "peer", rate: 10000},
		{w: "scan20k", v: "ceiling", rate: 110000},
		{w: "point", v: "ours/direct", p50: 700},
		{w: "point", v: "ours/gojson", p50: 900},
		{w: "point", v: "peer", p50: 1000},
		{w: "scan1m", v: "ours/direct", rate: 1e5, rssMB: 40},
		{w: "scan1m", v: "ours/gojson", rate: 5e4},
		{w: "scan1m", v: "peer", err: "Response is too large | really"},
	}
	for _, c := range []struct {
		name    string
		runs    []run
		want    []string
		wantNot []string
	}{
		{
			name: "json codecs only",
			runs: base,
			want: []string{
				"| workload | metric | ours/direct | ours/gojson | ours/protobuf | peer | direct ÷ peer | gojson ÷ peer | protobuf ÷ peer |",
				"| (a) scan 20,000 rows x 6 cols, typed Scan | rows/s | 100,000 | 50,000 |  | 10,000 | 10.00x | 5.00x |  |",
				"| (a) rows/s >= 5x the peer's | 10.00x: **PASS** | 5.00x: **PASS** | n/a |",
				"| (a) rows/s >= 0.8x the net/http ceiling of its encoding (ours/protobuf: the Protobuf one) | 0.91x: **PASS** | 0.45x: **FAIL** | n/a |",
				"| (b) p50 <= 0.8x the peer's | 0.70x: **PASS** | 0.90x: **FAIL** | n/a |",
				"| (e) the 1,000,000-row scan completes | 100,000 rows/s: **PASS** | 50,000 rows/s: **PASS** | n/a |",
				"| scan20k | ours/gojson | 6.00 | 3.00x |",
				`fails: Response is too large \| really`,
			},
			// Targets of a variant that did not run are left out, and so
			// is the WebSocket table.
			wantNot: []string{"1.1x the JSON", "(e) max RSS", "1.3x ours/direct", "ceiling for Protobuf", "Over WebSocket", "WebSocket targets"},
		},
		{
			name: "websocket",
			runs: append(base[:len(base):len(base)],
				run{w: "point", v: "ours/protobuf", p50: 600},
				run{w: "scan20k", v: "ours/ws", rate: 90000, cpu: 2200},
				run{w: "scan20k", v: "ours/ws-protobuf", rate: 120000},
				run{w: "scan20k", v: "peer/ws", rate: 40000},
				run{w: "point", v: "ours/ws", p50: 200},
				run{w: "point", v: "ours/ws-protobuf", p50: 400},
				run{w: "point", v: "peer/ws", p50: 500},
				run{w: "point", v: "floor/ws", p50: 125, rate: 5000},
				run{w: "point", v: "floor/ws-pipelined", rate: 10000},
				run{w: "insert", v: "ours/ws", rate: 3000},
				run{w: "insert", v: "ours/ws-protobuf", rate: 3300},
				run{w: "insert", v: "peer/ws", rate: 1500},
				run{w: "insert", v: "floor/ws", rate: 6000},
				run{w: "concurrent", v: "ours/ws", rate: 4000},
				run{w: "concurrent", v: "ours/ws-protobuf", rate: 2000},
				run{w: "concurrent", v: "peer/ws", rate: 2000},
				run{w: "concurrent", v: "floor/ws", rate: 5000},
				run{w: "concurrent", v: "floor/ws-sql", rate: 4000, srvCPU: 150e3},
				run{w: "scan1m", v: "ours/ws", rate: 9e4, rssMB: 20},
			),
			want: []string{
				"| workload | metric | ours/ws | ours/ws-protobuf | peer/ws | ws ÷ peer/ws | ws-protobuf ÷ peer/ws |",
				"| (a) scan 20,000 rows x 6 cols, typed Scan | rows/s | 90,000 | 120,000 | 40,000 | 2.25x | 3.00x |",
				"| (b) point SELECT by primary key, sequential, 5,000 queries | p50 µs | 200 | 400 | 500 | 0.40x | 0.80x |",
				"| (b) WebSocket floor: one request at a time on one stream, a hand-written hrana3 client, no database/sql: 125 µs p50 | p50 ÷ this floor | 1.60x | 3.20x | 4.00x | floor ÷ peer/ws: 0.25x |  |",
				"| (b) the WebSocket floor with its 5,000 requests pipelined on its stream (for information): 100 µs per request, against 200 µs in lockstep |  |",
				"| (c) prepared INSERTs in one transaction | rows/s | 3,000 | 3,300 | 1,500 | 2.00x | 2.20x |",
				"| (c) WebSocket floor: one request per INSERT on one stream, a hand-written hrana3 client, no database/sql: 6,000 rows/s | ÷ this floor | 0.50x | 0.55x | 0.25x | floor ÷ peer/ws: 4.00x |  |",
				"| (d) concurrent point SELECTs, 16 goroutines, 10s | queries/s | 4,000 | 2,000 | 2,000 | 2.00x | 1.00x |",
				"| (d) WebSocket floor: (b)'s floor client on a socket per goroutine, no database/sql: 5,000 queries/s | ÷ this floor | 0.80x | 0.40x | 0.40x | floor ÷ peer/ws: 2.50x |  |",
				"| (d) database/sql's floor: the same client behind the thinnest database/sql driver, in JSON: 4,000 queries/s | ÷ this floor | 1.00x | 0.50x | 0.50x | floor ÷ peer/ws: 2.00x |  |",
				"| concurrent | floor/ws-sql | 0.00 |  | 0.0 | 0 | 0 | 150.00 | 3 (0) | 3,600, 4,000, 20,000 |",
				"WebSocket targets (issue 19), on the medians:",
				"| target | ours/ws | ours/ws-protobuf |",
				"| (a) rows/s >= 0.95x the same codec over HTTP (ours/direct's, ours/protobuf's) | 0.90x: **FAIL** | n/a |",
				"| (a) client CPU per row <= 1.2x the same codec's over HTTP | 1.10x: **PASS** | n/a |",
				"| (b) p50 <= 0.85x peer/ws's | 0.40x: **PASS** | 0.80x: **PASS** |",
				"| (b) p50 ÷ floor/ws's (for information) | 1.60x | 3.20x |",
				"| (c) rows/s >= 1.0x peer/ws's (default mode, not deferred) | 2.00x: **PASS** | 2.20x: **PASS** |",
				"| (d) queries/s >= 1.25x peer/ws's | 2.00x: **PASS** | 1.00x: **FAIL** |",
				"| (e) rows/s >= 0.9x the same codec over HTTP | 0.90x: **PASS** | n/a |",
				"| (e) max RSS <= 64 MB | 20 MB: **PASS** | n/a |",
				// The HTTP table keeps its own peer.
				"| (b) p50 <= 0.8x the peer's | 0.70x: **PASS** | 0.90x: **FAIL** | 0.60x: **PASS** |",
			},
		},
		{
			name: "protobuf passes",
			runs: append(base[:len(base):len(base)],
				run{w: "scan20k", v: "ours/protobuf", rate: 130000, cpu: 1000},
				run{w: "scan20k", v: "ceiling/protobuf", rate: 150000},
				run{w: "point", v: "ours/protobuf", p50: 600},
				run{w: "scan1m", v: "ours/protobuf", rate: 1.5e5, rssMB: 60},
			),
			want: []string{
				"| (a) scan 20,000 rows x 6 cols, typed Scan | rows/s | 100,000 | 50,000 | 130,000 | 10,000 | 10.00x | 5.00x | 13.00x |",
				"| (a) net/http ceiling for Protobuf: the same request in Protobuf on /v3-protobuf/pipeline, body discarded: 150,000 rows/s | ÷ this ceiling | 0.67x | 0.33x | 0.87x | 0.07x |  |  |  |",
				"| (a) rows/s >= 0.8x the net/http ceiling of its encoding (ours/protobuf: the Protobuf one) | 0.91x: **PASS** | 0.45x: **FAIL** | 0.87x: **PASS** |",
				"| (a) rows/s >= 1.1x the JSON net/http ceiling |  |  | 1.18x: **PASS** |",
				"| (a) client CPU per row ÷ ours/direct's (for information) |  |  | 0.50x |",
				"| (b) p50 <= 0.8x the peer's | 0.70x: **PASS** | 0.90x: **FAIL** | 0.60x: **PASS** |",
				"| (e) max RSS <= 64 MB |  |  | 60 MB: **PASS** |",
				"| (e) rows/s >= 1.3x ours/direct's |  |  | 1.50x: **PASS** |",
				"| scan20k | ours/protobuf | 1.00 | 0.50x |",
			},
		},
		{
			name: "protobuf fails",
			runs: append(base[:len(base):len(base)],
				run{w: "scan20k", v: "ours/protobuf", rate: 105000},
				run{w: "scan20k", v: "ceiling/protobuf", rate: 140000},
				run{w: "scan1m", v: "ours/protobuf", rate: 1.2e5, rssMB: 65},
			),
			want: []string{
				"| (a) rows/s >= 0.8x the net/http ceiling of its encoding (ours/protobuf: the Protobuf one) | 0.91x: **PASS** | 0.45x: **FAIL** | 0.75x: **FAIL** |",
				"| (a) rows/s >= 1.1x the JSON net/http ceiling |  |  | 0.95x: **FAIL** |",
				"| (e) max RSS <= 64 MB |  |  | 65 MB: **FAIL** |",
				"| (e) rows/s >= 1.3x ours/direct's |  |  | 1.20x: **FAIL** |",
			},
		},
		{
			name: "protobuf errors",
			runs: append(base[:len(base):len(base)],
				run{w: "scan1m", v: "ours/protobuf", err: "boom"},
			),
			want: []string{
				"| (e) the 1,000,000-row scan completes | 100,000 rows/s: **PASS** | 50,000 rows/s: **PASS** | fails (3/3): boom: **FAIL** |",
				"| (e) max RSS <= 64 MB |  |  | n/a |",
				"| (e) rows/s >= 1.3x ours/direct's |  |  | n/a |",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &report{Rounds: 3, BigRounds: 1, Conc: 16, Duration: "10s", Points: 5000}
			for _, f := range []float64{0.9, 1, 5} {
				for _, r := range c.runs {
					rep.Results = append(rep.Results, workload.Result{Workload: r.w, Variant: r.v, Rate: r.rate * f,
						P50Micros: r.p50, CPUNsPerRow: r.cpu, MaxRSSKB: r.rssMB * 1024, ServerCPUNsPerRow: r.srvCPU, Error: r.err})
				}
			}
			rep.summarize(workloads())
			if s := rep.get("scan20k", "ours/direct"); s.Rate != 100000 || s.Runs != 3 {
				t.Fatalf("median %+v", s)
			}
			var out bytes.Buffer
			printReport(&out, rep)
			got := out.String()
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Errorf("report lacks %q:\n%s", want, got)
				}
			}
			for _, not := range c.wantNot {
				if strings.Contains(got, not) {
					t.Errorf("report has %q:\n%s", not, got)
				}
			}
		})
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"-run", "scan20k|point", "-json", "/tmp/x.json", "it's", ""})
	want := `-run 'scan20k|point' -json /tmp/x.json 'it'\''s' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
