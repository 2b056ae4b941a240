package harness

import (
	"errors"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tt.in...)
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", in, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Fatalf("Median reordered its argument: %v, was %v", tt.in, in)
			}
		}
	}
	if got := Median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("Median of durations = %v, want 2ns", got)
	}
}

func TestQuantiles(t *testing.T) {
	lat := make([]time.Duration, 200)
	for i := range lat {
		lat[i] = time.Duration(200-i) * time.Millisecond // 200 ms down to 1 ms
	}
	got := Quantiles(lat)
	want := Latency{P50: 101 * time.Millisecond, P99: 199 * time.Millisecond}
	if got != want {
		t.Errorf("Quantiles = %+v, want %+v", got, want)
	}
	if got := Quantiles(nil); got != (Latency{}) {
		t.Errorf("Quantiles(nil) = %+v", got)
	}
}

func TestTimeEachStopsAtError(t *testing.T) {
	boom := errors.New("boom")
	runs := 0
	_, err := TimeEach(10, func(i int) error {
		runs++
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || runs != 4 {
		t.Errorf("TimeEach: err %v after %d runs, want boom after 4", err, runs)
	}
}

func TestPlainEncryptedRows(t *testing.T) {
	f := PlainEncrypted{
		P50:  [2][]float64{{2000, 1000, 3000}, {2600, 2400, 2500}},
		P99:  [2][]float64{{8000}, {9000}},
		Scan: [2][]float64{{400_000, 500_000}, {300_000, 350_000}},
	}
	want := "| point SELECT p50 | 2.0 µs | 2.5 µs | 1.25x |\n" +
		"| point SELECT p99 | 8.0 µs | 9.0 µs | 1.12x |\n" +
		"| 20k-row scan | 450000 rows/s | 325000 rows/s | 0.72x |\n"
	if got := f.Rows(false); got != want {
		t.Errorf("Rows(false) =\n%s\nwant\n%s", got, want)
	}
	want = "| point SELECT p50 | 2.0 µs | 2.5 µs | 1.25x | <= 1.3x |\n" +
		"| point SELECT p99 | 8.0 µs | 9.0 µs | 1.12x | |\n" +
		"| 20k-row scan | 450000 rows/s | 325000 rows/s | 0.72x | >= 0.75x |\n"
	if got := f.Rows(true); got != want {
		t.Errorf("Rows(true) =\n%s\nwant\n%s", got, want)
	}
}
