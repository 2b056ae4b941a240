package vector

import "testing"

// The float8 and half-precision distances follow libSQL's float32
// arithmetic; these values are sqld 0.24.32's.
func TestDistanceTypes(t *testing.T) {
	tests := []struct {
		m      Metric
		t      Type
		a, b   string
		wantCs float32
	}{
		{Cosine, Float16, "[1,2,3]", "[3,2,1]", float32(1 - 10.0/14)},
		{L2, FloatB16, "[1,2]", "[4,6]", 5},
		{L2, Float64, "[1,2]", "[4,6]", 5},
	}
	for _, tt := range tests {
		a, _ := Parse(tt.a, Float32)
		b, _ := Parse(tt.b, Float32)
		if got := VectorDistance(tt.m, Convert(a, tt.t), Convert(b, tt.t)); got != tt.wantCs {
			t.Errorf("%d distance of type %d: %v, want %v", tt.m, tt.t, got, tt.wantCs)
		}
	}
}
