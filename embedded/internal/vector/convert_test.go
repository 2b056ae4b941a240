package vector

import (
	"math"
	"testing"
)

func TestF16(t *testing.T) {
	tests := []struct {
		f float32
		h uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to Inf
		{1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // the least subnormal
		{1e-9, 0},
		{float32(math.NaN()), 0x7e00},
	}
	for _, tt := range tests {
		if got := f16FromFloat(tt.f); got != tt.h {
			t.Errorf("f16FromFloat(%v) = %#04x, want %#04x", tt.f, got, tt.h)
		}
	}
	// Every half that is not a NaN widens and narrows back to itself.
	for h := range 1 << 16 {
		f := f16ToFloat(uint16(h))
		if f != f {
			continue
		}
		if got := f16FromFloat(f); got != uint16(h) {
			t.Fatalf("%#04x → %v → %#04x", h, f, got)
		}
	}
}

func TestConvert(t *testing.T) {
	v, err := Parse("[1,-2,3.5]", Float32)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		t    Type
		want string
	}{
		{Float32, "[1,-2,3.5]"},
		{Float64, "[1,-2,3.5]"},
		{Float1Bit, "[1,-1,1]"},
		{Float8, "[0.998039,-2,3.5]"},
		{Float16, "[1,-2,3.5]"},
		{FloatB16, "[1,-2,3.5]"},
	}
	for _, tt := range tests {
		w := Convert(v, tt.t)
		if w.Type != Float32 && w.Type != Float64 {
			w = Convert(w, Float32)
		}
		if got := w.Text(); got != tt.want {
			t.Errorf("to type %d and back: %s, want %s", tt.t, got, tt.want)
		}
	}
}
