package vector

import (
	"math"
	"testing"
)

func TestFormatG(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{float64(float32(0.1)), "0.1"},
		{123456.5, "123457"}, // SQLite rounds its decimal digits half up
		{999999.5, "1e+06"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1e100, "1e+100"},
		{1.4e-45, "1.4e-45"},
		{3.4028234663852886e38, "3.40282e+38"},
		{math.Inf(1), "Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := formatG(tt.in); got != tt.want {
			t.Errorf("formatG(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
