package vector

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// A Matrix holds FLOAT32 vectors of one length, decoded once, with the
// part of a cosine distance that depends on a row alone (its norm's sum)
// computed once, so that a search over it computes per row only what
// depends on the query. Its distances equal Distance's bit for bit: each
// sum is accumulated in the same order with the same roundings.
type Matrix struct {
	dims  int
	data  []float32 // row i is data[i*dims : (i+1)*dims]
	norms []float32 // row i's sum of x*x, accumulated as cosineF32 does
}

// NewMatrix returns an empty Matrix of vectors of dims dimensions, with
// room for rows of them.
func NewMatrix(dims, rows int) *Matrix {
	return &Matrix{dims: dims, data: make([]float32, 0, dims*rows), norms: make([]float32, 0, rows)}
}

// Append adds a FLOAT32 vector of the Matrix's length as its next row.
func (m *Matrix) Append(v *Vector) {
	var n float32
	for i := range m.dims {
		x := math.Float32frombits(binary.LittleEndian.Uint32(v.Data[4*i:]))
		m.data = append(m.data, x)
		n += float32(x * x)
	}
	m.norms = append(m.norms, n)
}

// Len is the number of rows.
func (m *Matrix) Len() int { return len(m.norms) }

// Bytes is the memory the rows take.
func (m *Matrix) Bytes() int { return 4 * (cap(m.data) + cap(m.norms)) }

// Distances sets out[i] to the distance by metric between row i and q
// (a FLOAT32 vector of the Matrix's length), as Distance(metric, row, q)
// computes it; out must have Len() elements.
func (m *Matrix) Distances(metric Metric, q *Vector, out []float32) {
	d := m.dims
	qv := make([]float32, d)
	var qn float32
	for i := range qv {
		x := math.Float32frombits(binary.LittleEndian.Uint32(q.Data[4*i:]))
		qv[i] = x
		qn += float32(x * x)
	}
	rows := m.Len()
	// A large search splits its rows among the CPUs: each row's distance
	// is computed alone, so the split changes no result.
	if parts := min(runtime.GOMAXPROCS(0), rows*d/parallelWork); parts > 1 {
		per := (rows/parts + 3) &^ 3
		var wg sync.WaitGroup
		for lo := 0; lo < rows; lo += per {
			hi := min(lo+per, rows)
			part := &Matrix{dims: d, data: m.data[lo*d : hi*d], norms: m.norms[lo:hi]}
			wg.Go(func() { part.distances(metric, qv, qn, out[lo:hi]) })
		}
		wg.Wait()
		return
	}
	m.distances(metric, qv, qn, out)
}

// parallelWork is the number of multiply-adds below which a search runs
// on the calling goroutine alone (about 0.1 ms of work).
const parallelWork = 1 << 18

func (m *Matrix) distances(metric Metric, qv []float32, qn float32, out []float32) {
	d := m.dims
	rows := m.Len()
	r := 0
	// Four rows at a time: each row's sum is one chain of dependent
	// adds, so interleaving four chains keeps the FPU busy while each
	// still adds in element order.
	for ; r+4 <= rows; r += 4 {
		a0, a1, a2, a3 := m.data[r*d:(r+1)*d], m.data[(r+1)*d:(r+2)*d], m.data[(r+2)*d:(r+3)*d], m.data[(r+3)*d:(r+4)*d]
		// Same lengths as qv, which lets the compiler drop the bounds
		// checks of the loops below.
		a0, a1, a2, a3 = a0[:len(qv)], a1[:len(qv)], a2[:len(qv)], a3[:len(qv)]
		var s0, s1, s2, s3 float32
		if metric == L2 {
			for i, y := range qv {
				e0, e1, e2, e3 := a0[i]-y, a1[i]-y, a2[i]-y, a3[i]-y
				s0 += float32(e0 * e0)
				s1 += float32(e1 * e1)
				s2 += float32(e2 * e2)
				s3 += float32(e3 * e3)
			}
			out[r], out[r+1], out[r+2], out[r+3] = l2Final(s0), l2Final(s1), l2Final(s2), l2Final(s3)
			continue
		}
		for i, y := range qv {
			s0 += float32(a0[i] * y)
			s1 += float32(a1[i] * y)
			s2 += float32(a2[i] * y)
			s3 += float32(a3[i] * y)
		}
		out[r] = cosFinal(s0, m.norms[r], qn)
		out[r+1] = cosFinal(s1, m.norms[r+1], qn)
		out[r+2] = cosFinal(s2, m.norms[r+2], qn)
		out[r+3] = cosFinal(s3, m.norms[r+3], qn)
	}
	for ; r < rows; r++ {
		a := m.data[r*d : (r+1)*d][:len(qv)]
		var s float32
		if metric == L2 {
			for i, y := range qv {
				e := a[i] - y
				s += float32(e * e)
			}
			out[r] = l2Final(s)
			continue
		}
		for i, y := range qv {
			s += float32(a[i] * y)
		}
		out[r] = cosFinal(s, m.norms[r], qn)
	}
}

// cosFinal and l2Final are the last steps of cosineF32 and euclidean.
func cosFinal(dot, n1, n2 float32) float32 {
	return float32(1.0 - float64(dot)/math.Sqrt(float64(float32(n1*n2))))
}

func l2Final(sum float32) float32 { return float32(math.Sqrt(float64(sum))) }
