package main

import (
	"bytes"
	"strings"
	"testing"
)

// report builds a Report of made-up results, each one sample of its
// NsPerOp, CPUNsPerOp and AllocsPerOp.
func report(rs ...Result) *Report {
	rep := &Report{}
	for _, r := range rs {
		r.Samples = []Sample{{N: 1, NsPerOp: r.NsPerOp, CPUNsPerOp: r.CPUNsPerOp, AllocsPerOp: r.AllocsPerOp}}
		r.summarize()
		rep.Results = append(rep.Results, &r)
	}
	return rep
}

func TestPrintTargetsProtobuf(t *testing.T) {
	for _, c := range []struct {
		name    string
		rep     *Report
		want    []string // lines that must be printed
		wantNot []string // substrings that must not be
	}{
		{
			name: "pass",
			rep: report(
				Result{Name: "decode/direct/20k", Rows: 20000, NsPerOp: 4e6, CPUNsPerOp: 4e6, AllocsPerOp: 1},
				Result{Name: "decode/protobuf/20k", Rows: 20000, NsPerOp: 1e6, CPUNsPerOp: 1e6, AllocsPerOp: 0},
				Result{Name: "scan/direct/typed/20k", Rows: 20000, NsPerOp: 10e6, CPUNsPerOp: 10e6},
				Result{Name: "scan/protobuf/typed/20k", Rows: 20000, NsPerOp: 5e6, CPUNsPerOp: 6e6},
			),
			want: []string{
				"  PASS  decode: protobuf rows/s >= 3x direct (JSON): 20k x4.00 (per CPU second x4.00)",
				"  PASS  decode: protobuf allocs per response <= 16, reused destination (as the driver pools them): 20000 rows 0",
				"  PASS  scan: protobuf CPU per row <= 0.6x direct (JSON): typed wall x0.50, cpu x0.60 (300 vs 500 cpu-ns/row)",
			},
		},
		{
			name: "fail",
			rep: report(
				Result{Name: "decode/direct/20k", Rows: 20000, NsPerOp: 2e6, CPUNsPerOp: 2e6, AllocsPerOp: 1},
				Result{Name: "decode/protobuf/20k", Rows: 20000, NsPerOp: 1e6, CPUNsPerOp: 1e6, AllocsPerOp: 17},
				Result{Name: "scan/direct/any/20k", Rows: 20000, NsPerOp: 10e6, CPUNsPerOp: 10e6},
				Result{Name: "scan/protobuf/any/20k", Rows: 20000, NsPerOp: 5e6, CPUNsPerOp: 7e6},
			),
			want: []string{
				"  FAIL  decode: protobuf rows/s >= 3x direct (JSON): 20k x2.00 (per CPU second x2.00)",
				"  FAIL  decode: protobuf allocs per response <= 16, reused destination (as the driver pools them): 20000 rows 17",
				"  FAIL  scan: protobuf CPU per row <= 0.6x direct (JSON): any wall x0.50, cpu x0.70 (350 vs 500 cpu-ns/row)",
			},
		},
		{
			// Without the JSON side nothing is compared; the allocation
			// count alone is still checked.
			name:    "protobuf only",
			rep:     report(Result{Name: "decode/protobuf/20k", Rows: 20000, NsPerOp: 1e6, AllocsPerOp: 0}),
			want:    []string{"  PASS  decode: protobuf allocs per response <= 16"},
			wantNot: []string{"rows/s >= 3x", "scan:"},
		},
		{
			// The 5k decode is reported in the ratios, not in the target.
			name: "5k only",
			rep: report(
				Result{Name: "decode/direct/5k", Rows: 5000, NsPerOp: 1e6, AllocsPerOp: 0},
				Result{Name: "decode/protobuf/5k", Rows: 5000, NsPerOp: 1e5, AllocsPerOp: 0},
			),
			wantNot: []string{"protobuf rows/s", "protobuf allocs"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			printTargets(&out, c.rep)
			lines := strings.Split(out.String(), "\n")
			for _, want := range c.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, want)
				}
				if !found {
					t.Errorf("no line starting %q in:\n%s", want, out.String())
				}
			}
			for _, not := range c.wantNot {
				if strings.Contains(out.String(), not) {
					t.Errorf("%q printed:\n%s", not, out.String())
				}
			}
		})
	}
}

func TestPrintRatiosProtobuf(t *testing.T) {
	rep := report(
		Result{Name: "encode/direct/exec6", NsPerOp: 400, CPUNsPerOp: 400},
		Result{Name: "encode/protobuf/exec6", NsPerOp: 200, CPUNsPerOp: 100},
	)
	var out bytes.Buffer
	printRatios(&out, rep)
	for _, want := range []string{
		"Ratios protobuf/direct (throughput: above 1 is better for protobuf;",
		"  encode exec6   ops/s x2.00   time/op x0.50   cpu/op x0.25",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "direct/gojson") {
		t.Errorf("a direct/gojson section without gojson results:\n%s", out.String())
	}
}
