package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"unsafe"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// valueSize is the fixed size per decoded value assumed by the bytes
// target: one codec.Value (48 bytes on 64-bit platforms).
const valueSize = int(unsafe.Sizeof(codec.Value{}))

type pair struct {
	label, a, b string
}

// sameWorkloads are the workloads that run once per codec: the name has
// the codec in place of %s.
var sameWorkloads = []struct{ label, name string }{
	{"decode 5k", "decode/%s/5k"},
	{"decode 20k", "decode/%s/20k"},
	{"encode exec6", "encode/%s/exec6"},
	{"encode batch10", "encode/%s/batch10"},
	{"scan typed", "scan/%s/typed/20k"},
	{"scan any", "scan/%s/any/20k"},
	{"live typed", "live/%s/typed/20k"},
}

// codecPairs pairs each of sameWorkloads with codec a against codec b.
func codecPairs(a, b string) []pair {
	ps := make([]pair, len(sameWorkloads))
	for i, w := range sameWorkloads {
		ps[i] = pair{w.label, fmt.Sprintf(w.name, a), fmt.Sprintf(w.name, b)}
	}
	return ps
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
	for _, c := range [][2]string{{"direct", "gojson"}, {protobuf.Name, "direct"}} {
		emit(fmt.Sprintf("Ratios %[1]s/%[2]s (throughput: above 1 is better for %[1]s; time and cpu per op: below 1 is better):", c[0], c[1]),
			codecPairs(c[0], c[1]))
	}
	emit("Ratios against plain goccy/go-json into wire-shaped structs (reference/goccy-structs/20k):", []pair{
		{"direct 20k", "decode/direct/20k", "reference/goccy-structs/20k"},
		{"gojson 20k", "decode/gojson/20k", "reference/goccy-structs/20k"},
		{"protobuf 20k", "decode/protobuf/20k", "reference/goccy-structs/20k"},
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

// maxDecodeAllocs bounds the allocations of one decode into a reused
// destination.
const maxDecodeAllocs = 16

// printTargets checks the performance targets against the results
// that were run: every ratio is between two workloads of the same run.
func printTargets(w io.Writer, rep *Report) {
	fmt.Fprintln(w, "\nTargets:")
	ran := false
	line := func(ok bool, format string, a ...any) {
		ran = true
		fmt.Fprintf(w, "  %s  %s\n", verdict(ok), fmt.Sprintf(format, a...))
	}

	if ok, parts := decodeRatio(rep, "direct", "gojson", []string{"5k", "20k"}, 3); parts != "" {
		line(ok, "decode: direct rows/s >= 3x gojson: %s", parts)
	}
	if ok, parts, growth := decodeAllocs(rep, "direct", []string{"5k", "20k"}); parts != "" {
		line(ok, "decode: direct allocs per response <= %d and not growing with rows%s, reused destination (as the driver pools them): %s", maxDecodeAllocs, growth, parts)
		printDecodeBytes(w, rep)
	}
	if ok, parts := decodeRatio(rep, protobuf.Name, "direct", []string{"20k"}, 3); parts != "" {
		line(ok, "decode: protobuf rows/s >= 3x direct (JSON): %s", parts)
	}
	if ok, parts, _ := decodeAllocs(rep, protobuf.Name, []string{"20k"}); parts != "" {
		line(ok, "decode: protobuf allocs per response <= %d, reused destination (as the driver pools them): %s", maxDecodeAllocs, parts)
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
			line(ok, "encode: direct 0 allocs and ops/s >= 3x gojson: %s", join(parts))
		}
	}

	if ok, parts := scanCPU(rep, "direct", "gojson", 0.5); parts != "" {
		line(ok, "scan: direct CPU per row <= 0.5x gojson: %s", parts)
	}
	if ok, parts := scanCPU(rep, protobuf.Name, "direct", 0.6); parts != "" {
		line(ok, "scan: protobuf CPU per row <= 0.6x direct (JSON): %s", parts)
	}
	if !ran {
		fmt.Fprintln(w, "  (none of the workloads they need ran)")
	}
	fmt.Fprintln(w, "  n/a   Rows.Next <= 0.05 allocs/row: unexported; in the root module run go test -run X -bench RowsNext -benchmem .")
}

// decodeRatio checks that codec a decodes at least bound times the rows/s
// of codec b at each size that both ran; parts is "" if none did.
func decodeRatio(rep *Report, a, b string, sizes []string, bound float64) (ok bool, parts string) {
	ok = true
	var ps []string
	for _, n := range sizes {
		ra, rb := rep.find("decode/"+a+"/"+n), rep.find("decode/"+b+"/"+n)
		if ra == nil || rb == nil {
			continue
		}
		r := ratio(ra.RowsPerSec, rb.RowsPerSec)
		ok = ok && r >= bound
		s := fmt.Sprintf("%s x%.2f", n, r)
		if ra.CPUNsPerOp > 0 && rb.CPUNsPerOp > 0 {
			s += fmt.Sprintf(" (per CPU second x%.2f)", rb.CPUNsPerOp/ra.CPUNsPerOp)
		}
		ps = append(ps, s)
	}
	return ok, join(ps)
}

// decodeAllocs checks codec c's allocations per decode into a reused
// destination (as the driver pools them) at each size that ran: at most
// maxDecodeAllocs and, when two sizes ran, at most two more for the larger
// one (4x the rows may cost two more arena chunks, whose sizes double;
// anything more grows with the rows). growth describes that second check
// when it was made.
func decodeAllocs(rep *Report, c string, sizes []string) (ok bool, parts, growth string) {
	ok = true
	var ps []string
	var counts []float64
	for _, n := range sizes {
		r := rep.find("decode/" + c + "/" + n)
		if r == nil {
			continue
		}
		ok = ok && r.AllocsPerOp <= maxDecodeAllocs
		counts = append(counts, r.AllocsPerOp)
		ps = append(ps, fmt.Sprintf("%d rows %s", r.Rows, fmtCount(r.AllocsPerOp)))
	}
	if len(counts) == 2 {
		ok = ok && counts[1] <= counts[0]+2
		growth = ", at most +2 from 5k to 20k rows (arena chunks double)"
	}
	return ok, join(ps), growth
}

// printDecodeBytes prints direct's targets for decoding into a new
// destination every time and for the bytes a decode allocates.
func printDecodeBytes(w io.Writer, rep *Report) {
	c, _ := codec.Lookup("direct")
	okReused, okNew, okNewAllocs := true, true, true
	var reused, fresh, freshAllocs []string
	for _, r := range []*Result{rep.find("decode/direct/5k"), rep.find("decode/direct/20k")} {
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
		okNewAllocs = okNewAllocs && ca <= maxDecodeAllocs
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

// scanCPU checks that the scans with codec a cost at most bound times the
// CPU per row of those with codec b (wall time per row where CPU time is
// not measured), for each Scan mode that both ran.
func scanCPU(rep *Report, a, b string, bound float64) (ok bool, parts string) {
	ok = true
	var ps []string
	for _, mode := range []string{"typed", "any"} {
		ra, rb := rep.find("scan/"+a+"/"+mode+"/20k"), rep.find("scan/"+b+"/"+mode+"/20k")
		if ra == nil || rb == nil {
			continue
		}
		s := fmt.Sprintf("%s wall x%.2f", mode, ratio(ra.NsPerRow, rb.NsPerRow))
		if ra.CPUNsPerRow > 0 && rb.CPUNsPerRow > 0 {
			r := ratio(ra.CPUNsPerRow, rb.CPUNsPerRow)
			ok = ok && r <= bound
			s += fmt.Sprintf(", cpu x%.2f (%.0f vs %.0f cpu-ns/row)", r, ra.CPUNsPerRow, rb.CPUNsPerRow)
		} else {
			ok = ok && ratio(ra.NsPerRow, rb.NsPerRow) <= bound
		}
		ps = append(ps, s)
	}
	return ok, join(ps)
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
