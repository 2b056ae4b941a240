package workload

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Microsecond
	}
	if got := percentile(lat, 0.5); got != 50 {
		t.Errorf("p50 = %v, want 50", got)
	}
	if got := percentile(lat, 0.99); got != 99 {
		t.Errorf("p99 = %v, want 99", got)
	}
	if got := percentile(lat[:1], 0.99); got != 1 {
		t.Errorf("p99 of one = %v, want 1", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

func TestPointKeysRepeatable(t *testing.T) {
	a, b := pointKeys(1000, FixtureRows, 7, 0), pointKeys(1000, FixtureRows, 7, 0)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("key %d differs: %d, %d", i, a[i], b[i])
		}
		if a[i] < 1 || a[i] > FixtureRows {
			t.Fatalf("key %d out of range: %d", i, a[i])
		}
	}
}

func TestSetLatencies(t *testing.T) {
	for _, c := range []struct {
		name     string
		lat      []time.Duration
		p50, p99 float64
	}{
		{"none", nil, 0, 0},
		{"one", []time.Duration{7 * time.Microsecond}, 7, 7},
		{"unsorted", []time.Duration{9 * time.Microsecond, time.Microsecond, 5 * time.Microsecond}, 5, 9},
	} {
		var r Result
		r.SetLatencies(c.lat)
		if r.P50Micros != c.p50 || r.P99Micros != c.p99 {
			t.Errorf("%s: p50 %v p99 %v, want %v %v", c.name, r.P50Micros, r.P99Micros, c.p50, c.p99)
		}
	}
}

func TestPointKeys(t *testing.T) {
	warm, keys := PointKeys(Options{N: 300, Seed: 3})
	if len(warm) != 200 || len(keys) != 300 {
		t.Fatalf("%d warm-up and %d measured keys, want 200 and 300", len(warm), len(keys))
	}
	if w2, k2 := PointKeys(Options{N: 300, Seed: 3}); w2[0] != warm[0] || k2[299] != keys[299] {
		t.Error("PointKeys is not repeatable")
	}
}
