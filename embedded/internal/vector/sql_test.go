package vector

import (
	"math"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		m    Metric
		a, b any
		want float64
		err  string
	}{
		{Cosine, "[1,0]", "[0,1]", 1, ""},
		{Cosine, "[1,2,3]", "[3,2,1]", float64(float32(1 - 10.0/14)), ""},
		{L2, "[0,0]", "[3,4]", 5, ""},
		{Cosine, "[0,0]", "[0,0]", math.NaN(), ""},
		{Cosine, "[1,2]", "[1,2,3]", 0, "vector_distance: vectors must have the same length: 2 != 3"},
		{Cosine, "[1,2]", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 0, "vector_distance: vectors must have the same type: 1 != 2"},
		{L2, []byte{5, 13, 3}, []byte{5, 13, 3}, 0, "vector_distance: l2 distance is not supported for float1bit vectors"},
		{Cosine, []byte{5, 13, 3}, []byte{2, 13, 3}, 3, ""}, // Hamming: 101 vs 010
		{Cosine, nil, "[1]", 0, "vector: unexpected value type: got NULL, expected TEXT or BLOB"},
	}
	for _, tt := range tests {
		got, err := Distance(tt.m, tt.a, tt.b)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("Distance(%v, %v, %v): %v, want %s", tt.m, tt.a, tt.b, err, tt.err)
			}
		case err != nil:
			t.Errorf("Distance(%v, %v, %v): %v", tt.m, tt.a, tt.b, err)
		case math.Float64bits(got) != math.Float64bits(tt.want) && !(math.IsNaN(got) && math.IsNaN(tt.want)):
			t.Errorf("Distance(%v, %v, %v) = %v, want %v", tt.m, tt.a, tt.b, got, tt.want)
		}
	}
}
