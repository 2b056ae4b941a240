package vector

import "math"

// f16ToFloat widens an IEEE half to float32 (libSQL's vectorF16ToFloat: a
// NaN keeps only its sign and becomes the quiet NaN).
func f16ToFloat(h uint16) float32 {
	sgn := uint32(h&0x8000) << 16
	exp := int(h>>10&0x1f) - 15
	mnt := uint32(h & 0x3ff)
	switch {
	case exp == 16: // Inf or NaN
		exp = 128
		if mnt != 0 {
			mnt = 1 << 22
		}
	case exp == -15 && mnt == 0:
		exp = -127
	case exp == -15: // subnormal: normalize
		exp++
		for mnt&0x400 == 0 {
			mnt <<= 1
			exp--
		}
		mnt = (mnt & 0x3ff) << 13
	default:
		mnt <<= 13
	}
	return math.Float32frombits(sgn | uint32(exp+127)<<23 | mnt)
}

// f16FromFloat narrows a float32 to an IEEE half as libSQL's
// vectorF16FromFloat does: round to nearest, ties to even, with libSQL's
// handling of the edges (too large is Inf, too small is 0, a NaN is the
// quiet NaN of its sign).
func f16FromFloat(f float32) uint16 {
	i := math.Float32bits(f)
	sgn := i >> 16 & 0x8000
	exp := int(i>>23&0xff) - 127
	mntBits := i & 0x7fffff
	switch {
	case exp == 128:
		if mntBits != 0 {
			mntBits = 1 << 22
		}
		exp = 16
	case exp > 15:
		exp, mntBits = 16, 0
	case exp < -14 && exp >= -25:
		mntBits = (mntBits | 0x800000) >> uint(-exp-14)
		exp = -15
	case exp < -24:
		exp, mntBits = -15, 0
	}
	if mntBits&0x1fff > 0x1000-(mntBits>>13&1) {
		mntBits += 0x2000
	}
	mnt := mntBits >> 13
	return uint16(sgn | uint32(exp+15+int(mnt>>10))<<10 | mnt&0x3ff)
}

// fb16ToFloat widens a bfloat16: its bits are the top half of a float32's.
func fb16ToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// fb16FromFloat truncates a float32 to a bfloat16, as libSQL does (no
// rounding).
func fb16FromFloat(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }

// sign1 is a FLOAT1BIT element's value.
func sign1(b bool) int {
	if b {
		return 1
	}
	return -1
}

// Convert returns v as type t (libSQL's vectorConvert), with the same
// rounding at each step: float32 arithmetic where libSQL's is float
// (FLOAT8's quantization and dequantization, FLOAT16), a FLOAT1BIT element
// 1 for a value > 0 and -1 otherwise.
func Convert(v *Vector, t Type) *Vector {
	if v.Type == t {
		return &Vector{Type: t, Dims: v.Dims, Data: append([]byte{}, v.Data...)}
	}
	out := New(t, v.Dims)
	if t == Float8 {
		toF8(v, out)
		return out
	}
	n := v.Dims
	// Every conversion but to FLOAT8 goes element by element through
	// float32, except FLOAT64 to and from FLOAT32/FLOAT64, which libSQL
	// does in double.
	switch v.Type {
	case Float64:
		for i := 0; i < n; i++ {
			put(out, i, v.f64(i), float32(v.f64(i)))
		}
	case Float32:
		for i := 0; i < n; i++ {
			put(out, i, float64(v.f32(i)), v.f32(i))
		}
	case Float1Bit:
		for i := 0; i < n; i++ {
			s := sign1(v.bit(i))
			put(out, i, float64(s), float32(s))
		}
	case Float8:
		alpha, shift := v.f8Params()
		for i := 0; i < n; i++ {
			f := float32(alpha*float32(v.Data[i])) + shift
			put(out, i, float64(f), f)
		}
	case Float16:
		for i := 0; i < n; i++ {
			f := f16ToFloat(v.u16(i))
			put(out, i, float64(f), f)
		}
	case FloatB16:
		for i := 0; i < n; i++ {
			f := fb16ToFloat(v.u16(i))
			put(out, i, float64(f), f)
		}
	}
	return out
}

// put stores element i of a conversion into out: d is the value as
// libSQL's double-typed destinations get it, f as its float ones do. The
// FLOAT1BIT test is on the source's own value (d, which is exact).
func put(out *Vector, i int, d float64, f float32) {
	switch out.Type {
	case Float32:
		out.setF32(i, f)
	case Float64:
		out.setF64(i, d)
	case Float16:
		out.setU16(i, f16FromFloat(f))
	case FloatB16:
		out.setU16(i, fb16FromFloat(f))
	case Float1Bit:
		if d > 0 {
			out.Data[i/8] |= 1 << (i & 7)
		}
	}
}

// cMin and cMax are C's MIN and MAX macros, NaN handling included: the
// comparison fails and the second operand wins.
func cMin(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

func cMax(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// clip255 is libSQL's clip(f, 0, 255): (int)(f + 0.5) inside the range. A
// NaN converts, on x86-64, to the integer indefinite 0x80000000, whose low
// byte is 0.
func clip255(f float32) uint8 {
	switch {
	case f < 0:
		return 0
	case f > 255:
		return 255
	case f != f:
		return 0
	}
	return uint8(int(float64(f) + 0.5))
}

// toF8 quantizes v into out (libSQL's vectorConvertToF8): shift is the
// minimum, alpha (max-min)/255, both float32; each element is
// clip((x - shift) / alpha), computed in double for a FLOAT64 source and
// in float otherwise.
func toF8(v *Vector, out *Vector) {
	n := v.Dims
	val := func(i int) float64 {
		switch v.Type {
		case Float64:
			return v.f64(i)
		case Float32:
			return float64(v.f32(i))
		case Float1Bit:
			return float64(sign1(v.bit(i)))
		case Float16:
			return float64(f16ToFloat(v.u16(i)))
		default: // FloatB16
			return float64(fb16ToFloat(v.u16(i)))
		}
	}
	var minF, maxF float32
	for i := 0; i < n; i++ {
		x := val(i)
		if i == 0 {
			minF, maxF = float32(x), float32(x)
		} else {
			minF = float32(cMin(float64(minF), x))
			maxF = float32(cMax(float64(maxF), x))
		}
	}
	shift := minF
	alpha := (maxF - minF) / 255
	for i := 0; i < n; i++ {
		var q float32
		if v.Type == Float64 {
			q = float32((v.f64(i) - float64(shift)) / float64(alpha))
		} else {
			// Every other source value is exact in float32.
			q = (float32(val(i)) - shift) / alpha
		}
		out.Data[i] = clip255(q)
	}
	out.setF8Params(alpha, shift)
}
