package vector

import (
	"math"
	"testing"
)

func TestParseFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true},
		{"-2.5", -2.5, true},
		{"+.5", 0.5, true},
		{"5.", 5, true},
		{"1e3", 1000, true},
		{"1E-3", 0.001, true},
		{" 7 ", 7, true},
		{"-0", math.Copysign(0, -1), true},
		{"1e400", math.Inf(1), true},
		{"1e-400", 0, true},
		{"0.1", 0.1, true},
		{"184467440737095516159", 1.8446744073709552e20, true},
		{"", 0, false},
		{".", 0, false},
		{"-", 0, false},
		{"1e", 1, false},
		{"1e+", 1, false},
		{"1.2.3", 1.2, false},
		{"0x10", 0, false},
		{"inf", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseFloat(tt.in)
		if ok != tt.ok || (ok && math.Float64bits(got) != math.Float64bits(tt.want)) {
			t.Errorf("parseFloat(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
