package vector

import (
	"math"
	"testing"
)

func TestX87(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"1e10·1e10", x87Const("1e10").mul(x87Const("1e10")).float64(), 1e20},
		{"from uint64", x87FromUint64(1<<63 + 1).float64(), 1 << 63},
		{"from float64", x87FromFloat64(0.1).float64(), 0.1},
		{"overflow", x87FromFloat64(math.MaxFloat64).mul(x87E10).float64(), math.Inf(1)},
		{"subnormal", x87FromFloat64(5e-324).float64(), 5e-324},
		{"underflow", x87FromFloat64(5e-324).mul(x87Em10).float64(), 0},
		{"truncate", float64(x87FromFloat64(12345.99).uint64()), 12345},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// 1e-1L rounds up in the 64-bit mantissa; ten products of it drift
	// from 1e-10 in the last bits, which is the point of emulating them.
	if x87Em1.cmp(x87FromFloat64(0.1)) == 0 {
		t.Error("1e-1L equals the double 0.1")
	}
	if c := x87E1.cmp(x87FromUint64(10)); c != 0 {
		t.Errorf("1e1L cmp 10 = %d", c)
	}
}
