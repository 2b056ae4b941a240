package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"unsafe"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/fixture"
)

// valueSize is the fixed size per decoded value assumed by the bytes
// target: one codec.Value (48 bytes on 64-bit platforms).
const valueSize = int(unsafe.Sizeof(codec.Value{}))

type pair struct {
	label, a, b string
}

func printRatios(w io.Writer, rep *Report) {
	emit := func(title string, pairs []pair) {
		header := false
		for _, p := range pairs {
			a, b := rep.find(p.a), rep.find(p.b)
			if a == nil || b == nil {
				continue
			}
			if !header {
				fmt.Fprintf(w, "\n%s\n", title)
				header = true
			}
			tn, ta := a.Throughput()
			_, tb := b.Throughput()
			cpu := "-"
			if a.CPUNsPerOp > 0 && b.CPUNsPerOp > 0 {
				cpu = fmt.Sprintf("x%.2f", a.CPUNsPerOp/b.CPUNsPerOp)
			}
			fmt.Fprintf(w, "  %-14s %s x%-6.2f time/op x%-6.2f cpu/op %-7s B/op %s vs %s, allocs/op %s vs %s\n",
				p.label, tn, ratio(ta, tb), ratio(a.NsPerOp, b.NsPerOp), cpu,
				fmtBytes(a.BytesPerOp), fmtBytes(b.BytesPerOp), fmtCount(a.AllocsPerOp), fmtCount(b.AllocsPerOp))
		}
	}
	emit("Ratios direct/gojson (throughput: above 1 is better for direct; time and cpu per op: below 1 is better):", []pair{
		{"decode 5k", "decode/direct/5k", "decode/gojson/5k"},
		{"decode 20k", "decode/direct/20k", "decode/gojson/20k"},
		{"encode exec6", "encode/direct/exec6", "encode/gojson/exec6"},
		{"encode batch10", "encode/direct/batch10", "encode/gojson/batch10"},
		{"scan typed", "scan/direct/typed/20k", "scan/gojson/typed/20k"},
		{"scan any", "scan/direct/any/20k", "scan/gojson/any/20k"},
		{"live typed", "live/direct/typed/20k", "live/gojson/typed/20k"},
	})
	emit("Ratios against plain goccy/go-json into wire-shaped structs (reference/goccy-structs/20k):", []pair{
		{"direct 20k", "decode/direct/20k", "reference/goccy-structs/20k"},
		{"gojson 20k", "decode/gojson/20k", "reference/goccy-structs/20k"},
	})
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// coldDecode decodes body into a new destination each time and returns the
// allocations and bytes per decode: the cost when nothing is reused.
func coldDecode(c codec.Codec, body []byte) (allocs, bytes float64, err error) {
	const runs = 5
	var m0, m1 runtime.MemStats
	runtime.GC()
	// One decode first: the codec's pooled scratch state (not the
	// destination) is what a GC empties, and the driver never decodes cold.
	var warm codec.PipelineResponse
	if err := c.DecodePipelineResponse(body, &warm); err != nil {
		return 0, 0, err
	}
	runtime.ReadMemStats(&m0)
	for range runs {
		var resp codec.PipelineResponse
		if err := c.DecodePipelineResponse(body, &resp); err != nil {
			return 0, 0, err
		}
		runtime.KeepAlive(&resp)
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.Mallocs-m0.Mallocs) / runs, float64(m1.TotalAlloc-m0.TotalAlloc) / runs, nil
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// printTargets checks the performance targets against the results
// that were run.
func printTargets(w io.Writer, rep *Report) {
	fmt.Fprintln(w, "\nTargets:")
	any := false

	// Decode throughput.
	{
		var parts []string
		ok, seen := true, false
		for _, n := range []string{"5k", "20k"} {
			d, g := rep.find("decode/direct/"+n), rep.find("decode/gojson/"+n)
			if d == nil || g == nil {
				continue
			}
			r := ratio(d.RowsPerSec, g.RowsPerSec)
			ok = ok && r >= 3
			seen = true
			s := fmt.Sprintf("%s x%.2f", n, r)
			if d.CPUNsPerOp > 0 && g.CPUNsPerOp > 0 {
				s += fmt.Sprintf(" (per CPU second x%.2f)", g.CPUNsPerOp/d.CPUNsPerOp)
			}
			parts = append(parts, s)
		}
		if seen {
			any = true
			fmt.Fprintf(w, "  %s  decode: direct rows/s >= 3x gojson: %s\n", verdict(ok), join(parts))
		}
	}

	// Decode allocations: steady state (reused destination, as the driver
	// pools them) and into a new destination every time.
	d5, d20 := rep.find("decode/direct/5k"), rep.find("decode/direct/20k")
	if d5 != nil || d20 != nil {
		any = true
		var parts []string
		ok := true
		var counts []float64
		for _, r := range []*Result{d5, d20} {
			if r == nil {
				continue
			}
			ok = ok && r.AllocsPerOp <= 16
			counts = append(counts, r.AllocsPerOp)
			parts = append(parts, fmt.Sprintf("%d rows %s", r.Rows, fmtCount(r.AllocsPerOp)))
		}
		growth := ""
		if len(counts) == 2 {
			// 4x the rows may cost at most two more arena chunks (chunk
			// sizes double); anything more grows with the rows.
			ok = ok && counts[1] <= counts[0]+2
			growth = ", at most +2 from 5k to 20k rows (arena chunks double)"
		}
		fmt.Fprintf(w, "  %s  decode: direct allocs per response <= 16 and not growing with rows%s, reused destination (as the driver pools them): %s\n", verdict(ok), growth, join(parts))

		c, _ := codec.Lookup("direct")
		okReused, okNew, okNewAllocs := true, true, true
		var reused, fresh, freshAllocs []string
		for _, r := range []*Result{d5, d20} {
			if r == nil || c == nil {
				continue
			}
			budget := float64(fixture.DataBytes(r.Rows) + 6*r.Rows*valueSize)
			ca, cb, err := coldDecode(c, fixture.Response(r.Rows))
			if err != nil {
				fmt.Fprintf(w, "  FAIL  decode into a new destination: %v\n", err)
				okNew = false
				continue
			}
			okReused = okReused && r.BytesPerOp <= 1.5*budget
			okNew = okNew && cb <= 1.5*budget
			okNewAllocs = okNewAllocs && ca <= 16
			reused = append(reused, fmt.Sprintf("%d rows %s of %s (%.2fx)", r.Rows, fmtBytes(r.BytesPerOp), fmtBytes(budget), r.BytesPerOp/budget))
			fresh = append(fresh, fmt.Sprintf("%d rows %s of %s (%.2fx)", r.Rows, fmtBytes(cb), fmtBytes(budget), cb/budget))
			freshAllocs = append(freshAllocs, fmt.Sprintf("%d rows %s", r.Rows, fmtCount(math.Round(ca))))
		}
		if len(reused) > 0 {
			fmt.Fprintf(w, "  %s  decode: the same, new destination for every decode: %s\n", verdict(okNewAllocs), join(freshAllocs))
			fmt.Fprintf(w, "  %s  decode: direct bytes allocated <= 1.5x decoded data (fixture.DataBytes + %d B per value), reused destination (as the driver pools them): %s\n", verdict(okReused), valueSize, join(reused))
			fmt.Fprintf(w, "  %s  decode: the same, new destination for every decode: %s\n", verdict(okNew), join(fresh))
		}
	}

	// Encode.
	{
		var parts []string
		ok, seen := true, false
		for _, shape := range []string{"exec6", "batch10"} {
			d, g := rep.find("encode/direct/"+shape), rep.find("encode/gojson/"+shape)
			if d == nil {
				continue
			}
			seen = true
			ok = ok && d.AllocsPerOp == 0 && d.BytesPerOp == 0
			s := fmt.Sprintf("%s %s allocs", shape, fmtCount(d.AllocsPerOp))
			if g != nil {
				r := ratio(d.OpsPerSec, g.OpsPerSec)
				ok = ok && r >= 3
				s += fmt.Sprintf(", x%.2f", r)
			}
			parts = append(parts, s)
		}
		if seen {
			any = true
			fmt.Fprintf(w, "  %s  encode: direct 0 allocs and ops/s >= 3x gojson: %s\n", verdict(ok), join(parts))
		}
	}

	// Scan CPU per row.
	{
		var parts []string
		ok, seen := true, false
		for _, mode := range []string{"typed", "any"} {
			d, g := rep.find("scan/direct/"+mode+"/20k"), rep.find("scan/gojson/"+mode+"/20k")
			if d == nil || g == nil {
				continue
			}
			seen = true
			s := fmt.Sprintf("%s wall x%.2f", mode, ratio(d.NsPerRow, g.NsPerRow))
			if d.CPUNsPerRow > 0 && g.CPUNsPerRow > 0 {
				r := ratio(d.CPUNsPerRow, g.CPUNsPerRow)
				ok = ok && r <= 0.5
				s += fmt.Sprintf(", cpu x%.2f (%.0f vs %.0f cpu-ns/row)", r, d.CPUNsPerRow, g.CPUNsPerRow)
			} else {
				ok = ok && ratio(d.NsPerRow, g.NsPerRow) <= 0.5
			}
			parts = append(parts, s)
		}
		if seen {
			any = true
			fmt.Fprintf(w, "  %s  scan: direct CPU per row <= 0.5x gojson: %s\n", verdict(ok), join(parts))
		}
	}
	if !any {
		fmt.Fprintln(w, "  (none of the workloads they need ran)")
	}
	fmt.Fprintln(w, "  n/a   Rows.Next <= 0.05 allocs/row: unexported; in the root module run go test -run X -bench RowsNext -benchmem .")
}

func join(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s
}
