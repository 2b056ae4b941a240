package arena

import (
	"bytes"
	"math"
	"runtime"
	"strconv"
	"testing"
)

// TestValuesStayValid boxes many values across chunk boundaries, forces
// garbage collections, and checks that every interface handed out still
// holds its original value.
func TestValuesStayValid(t *testing.T) {
	var b Boxer
	const n = maxChunk*3 + 7
	var held []any
	for i := 0; i < n; i++ {
		held = append(held,
			b.Int64(int64(i)*-3),
			b.Float64(float64(i)+0.5),
			b.String("s"+strconv.Itoa(i)),
			b.Bytes([]byte{byte(i), byte(i >> 8)}))
		if i%100 == 0 {
			runtime.GC()
		}
	}
	b = Boxer{} // drop the Boxer: chunks must live on through the interfaces
	runtime.GC()
	for i := 0; i < n; i++ {
		if got := held[4*i].(int64); got != int64(i)*-3 {
			t.Fatalf("int %d: got %d", i, got)
		}
		if got := held[4*i+1].(float64); got != float64(i)+0.5 {
			t.Fatalf("float %d: got %v", i, got)
		}
		if got := held[4*i+2].(string); got != "s"+strconv.Itoa(i) {
			t.Fatalf("string %d: got %q", i, got)
		}
		if got := held[4*i+3].([]byte); !bytes.Equal(got, []byte{byte(i), byte(i >> 8)}) {
			t.Fatalf("bytes %d: got %v", i, got)
		}
	}
}

func TestEqualityAndSwitch(t *testing.T) {
	var b Boxer
	for _, v := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64} {
		var x any = v
		if got := b.Int64(v); got != x {
			t.Fatalf("boxed %d != native interface", v)
		}
	}
	switch v := b.Float64(math.Inf(-1)).(type) {
	case float64:
		if !math.IsInf(v, -1) {
			t.Fatalf("got %v", v)
		}
	default:
		t.Fatalf("type switch saw %T", v)
	}
	if s := String([]byte("héllo")); s != "héllo" {
		t.Fatalf("String = %q", s)
	}
	if String(nil) != "" {
		t.Fatal("String(nil) != \"\"")
	}
}

func TestAllocationsPerValue(t *testing.T) {
	var b Boxer
	allocs := testing.AllocsPerRun(10, func() {
		for i := 0; i < maxChunk*4; i++ {
			_ = b.Int64(int64(i) + 1000)
		}
	})
	if per := allocs / (maxChunk * 4); per > 0.01 {
		t.Fatalf("%.4f allocations per boxed value", per)
	}
}

func BenchmarkBoxInt64(b *testing.B) {
	var bx Boxer
	b.ReportAllocs()
	var sink any
	for i := 0; b.Loop(); i++ {
		sink = bx.Int64(int64(i))
	}
	_ = sink
}

func TestSmallResultsAllocateLittle(t *testing.T) {
	var sink any
	allocs := testing.AllocsPerRun(100, func() {
		var b Boxer
		sink = b.Int64(1000)
		sink = b.String("x")
	})
	_ = sink
	if allocs > 2 {
		t.Fatalf("%v allocations for two values", allocs)
	}
}
