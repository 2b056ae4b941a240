package vector

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func f32Vector(xs []float32) *Vector {
	v := New(Float32, len(xs))
	for i, x := range xs {
		v.setF32(i, x)
	}
	return v
}

// checkMatrix: every distance of a Matrix built from rows equals
// Distance's on the same blobs, bit for bit (NaN as NaN).
func checkMatrix(t *testing.T, rows [][]float32, q []float32) {
	t.Helper()
	m := NewMatrix(len(q), len(rows))
	for _, r := range rows {
		m.Append(f32Vector(r))
	}
	qv := f32Vector(q)
	out := make([]float32, m.Len())
	for _, metric := range []Metric{Cosine, L2} {
		m.Distances(metric, qv, out)
		for i, r := range rows {
			want, err := Distance(metric, f32Vector(r).Blob(), qv.Blob())
			if err != nil {
				t.Fatalf("Distance: %v", err)
			}
			got := float64(out[i])
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("metric %d, row %d %v, query %v: Matrix %v (%x), Distance %v (%x)", metric, i, r, q, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}

func TestMatrixDistances(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	tests := []struct {
		name string
		rows [][]float32
		q    []float32
	}{
		{"one row", [][]float32{{1, 2, 3}}, []float32{3, 2, 1}},
		{"zero row and query", [][]float32{{0, 0}, {1, 0}, {0, 0}, {-1, 0}, {0, 1}}, []float32{0, 0}},
		{"zero query", [][]float32{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}}, []float32{0, 0}},
		{"inf and nan", [][]float32{{inf, 1}, {nan, 1}, {1, 1}, {-inf, 0}, {1e38, 1e38}}, []float32{1, inf}},
		{"subnormals", [][]float32{{1e-45, 1e-40}, {-1e-45, 3e-39}, {1, 1e-45}, {0, 1e-44}}, []float32{1e-45, 1e-45}},
		{"overflowing norms", [][]float32{{3e38, 3e38, 3e38}, {1, 2, 3}, {-3e38, 1, 0}, {2e19, 2e19, 2e19}}, []float32{2e19, 2e19, 2e19}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkMatrix(t, tc.rows, tc.q) })
	}
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, dims := range []int{1, 3, 16, 255, 256, 512} {
			n := 1 + r.IntN(37)
			if dims == 512 {
				n = 3*parallelWork/dims + 5 // split among goroutines, unevenly
			}
			rows := make([][]float32, n)
			for i := range rows {
				rows[i] = make([]float32, dims)
				for j := range rows[i] {
					rows[i][j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
				}
			}
			q := make([]float32, dims)
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
			checkMatrix(t, rows, q)
		}
	})
}

// FuzzMatrixDistances: for any float32 bits, a Matrix's distances equal
// Distance's.
func FuzzMatrixDistances(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x80, 0x7f, 1, 0, 0, 0}, uint8(2))
	f.Add([]byte{0, 0, 0xc0, 0x7f, 0, 0, 0, 0, 0xff, 0xff, 0x7f, 0x7f, 0xff, 0xff, 0x7f, 0xff, 1, 2, 3, 4}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, dims uint8) {
		d := int(dims%8) + 1
		n := len(data) / 4 / d
		if n < 2 {
			return
		}
		vs := make([][]float32, n)
		for i := range vs {
			vs[i] = make([]float32, d)
			for j := range vs[i] {
				vs[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*d+j):]))
			}
		}
		checkMatrix(t, vs[1:], vs[0])
	})
}

func BenchmarkMatrixDistances(b *testing.B) {
	const rows, dims = 10000, 256
	r := rand.New(rand.NewPCG(1, 2))
	m := NewMatrix(dims, rows)
	v := make([]float32, dims)
	for range rows {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		m.Append(f32Vector(v))
	}
	q := f32Vector(v)
	out := make([]float32, rows)
	b.ResetTimer()
	for range b.N {
		m.Distances(Cosine, q, out)
	}
}
