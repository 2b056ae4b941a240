package vector

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The distances compute as libSQL's C code does, operation for operation,
// so that they round alike: float32 accumulation for the float32-based
// types (float64 for FLOAT64), the final step in double, and the result
// returned through a C float (so always a float32 value). The explicit
// float32(...) conversions keep the Go compiler from fusing a multiply
// and an add, which C on x86-64 (no FMA in the baseline) does not do.

// cosine is libSQL's vectorDistanceCos for two vectors of one type and
// length; for FLOAT1BIT it is the Hamming distance.
func cosine(a, b *Vector) float32 {
	n := a.Dims
	switch a.Type {
	case Float64:
		var dot, n1, n2 float64
		for i := 0; i < n; i++ {
			x, y := a.f64(i), b.f64(i)
			dot += float64(x * y)
			n1 += float64(x * x)
			n2 += float64(y * y)
		}
		return float32(1.0 - dot/math.Sqrt(n1*n2))
	case Float1Bit:
		return float32(hamming(a, b))
	case Float8:
		return cosineF8(a, b)
	case Float32:
		return cosineF32(a.Data[:4*n], b.Data[:4*n])
	}
	var dot, n1, n2 float32
	for i := 0; i < n; i++ {
		x, y := a.elem32(i), b.elem32(i)
		dot += float32(x * y)
		n1 += float32(x * x)
		n2 += float32(y * y)
	}
	return cosFinal(dot, n1, n2)
}

// cosineF32 is cosine for FLOAT32 data, without the per-element type
// switch (vector_top_k's scan spends its time here).
func cosineF32(a, b []byte) float32 {
	var dot, n1, n2 float32
	for len(a) >= 4 && len(b) >= 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(a))
		y := math.Float32frombits(binary.LittleEndian.Uint32(b))
		dot += float32(x * y)
		n1 += float32(x * x)
		n2 += float32(y * y)
		a, b = a[4:], b[4:]
	}
	return cosFinal(dot, n1, n2)
}

// elem32 is element i of a FLOAT32, FLOAT16 or FLOATB16 vector.
func (v *Vector) elem32(i int) float32 {
	switch v.Type {
	case Float16:
		return f16ToFloat(v.u16(i))
	case FloatB16:
		return fb16ToFloat(v.u16(i))
	}
	return v.f32(i)
}

// cosineF8 works on the quantized bytes with integer sums, expanding
// (αx+s)·(βy+t) as libSQL's vectorF8DistanceCos does.
func cosineF8(a, b *Vector) float32 {
	a1, s1 := a.f8Params()
	a2, s2 := b.f8Params()
	var sum1, sum2, sq1, sq2, doti uint32
	for i := 0; i < a.Dims; i++ {
		x, y := uint32(a.Data[i]), uint32(b.Data[i])
		sum1 += x
		sum2 += y
		sq1 += x * x
		sq2 += y * y
		doti += x * y
	}
	d := float32(a.Dims)
	dot := f32sum4(float32(a1*a2)*float32(doti), float32(a1*s2)*float32(sum1), float32(a2*s1)*float32(sum2), float32(s1*s2)*d)
	norm1 := f32sum3(float32(a1*a1)*float32(sq1), float32(float32(2*a1)*s1)*float32(sum1), float32(s1*s1)*d)
	norm2 := f32sum3(float32(a2*a2)*float32(sq2), float32(float32(2*a2)*s2)*float32(sum2), float32(s2*s2)*d)
	return float32(1.0 - float64(dot)/math.Sqrt(float64(float32(norm1*norm2))))
}

// f32sum3 and f32sum4 add left to right, each step rounded to float32.
func f32sum3(a, b, c float32) float32 { return float32(float32(a+b) + c) }

func f32sum4(a, b, c, d float32) float32 { return float32(float32(float32(a+b)+c) + d) }

// hamming counts the differing bits of the data bytes, the unused bits of
// the last one included (libSQL compares whole bytes).
func hamming(a, b *Vector) int {
	n := 0
	for i := range (a.Dims + 7) / 8 {
		n += bits.OnesCount8(a.Data[i] ^ b.Data[i])
	}
	return n
}

// euclidean is libSQL's vectorDistanceL2 (not defined for FLOAT1BIT).
func euclidean(a, b *Vector) float32 {
	n := a.Dims
	switch a.Type {
	case Float64:
		var sum float64
		for i := 0; i < n; i++ {
			d := a.f64(i) - b.f64(i)
			sum += float64(d * d)
		}
		return float32(math.Sqrt(sum))
	case Float8:
		a1, s1 := a.f8Params()
		a2, s2 := b.f8Params()
		var sum float32
		for i := 0; i < n; i++ {
			d := float32(float32(a1*float32(a.Data[i]))+s1) - float32(float32(a2*float32(b.Data[i]))+s2)
			sum += float32(d * d)
		}
		return float32(math.Sqrt(float64(sum)))
	}
	var sum float32
	for i := 0; i < n; i++ {
		d := a.elem32(i) - b.elem32(i)
		sum += float32(d * d)
	}
	return l2Final(sum)
}
