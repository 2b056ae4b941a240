package vector

import (
	"math"
	"math/big"
	"math/bits"
)

// x87 is a value of the x87 80-bit extended format: mant·2^exp, with mant
// normalized (top bit set) unless the value is 0. sqld is built for x86-64,
// where SQLite sees that long double is wider than double and does its
// text-to-number conversion (sqlite3AtoF) and its printf %g digits
// (sqlite3FpDecode) in long double; bit-equal answers need the same
// roundings. Only the operations those two routines use are here, on
// non-negative values, with an exponent range wider than the hardware's
// (which only matters far outside float64's range, where both ends give 0
// or Inf).
type x87 struct {
	mant uint64
	exp  int
}

func x87FromUint64(v uint64) x87 {
	if v == 0 {
		return x87{}
	}
	n := bits.LeadingZeros64(v)
	return x87{mant: v << n, exp: -n}
}

// x87FromFloat64 converts a finite non-negative float64, exactly.
func x87FromFloat64(f float64) x87 {
	frac, exp := math.Frexp(f) // f = frac·2^exp, frac in [0.5, 1)
	if frac == 0 {
		return x87{}
	}
	return x87{mant: uint64(math.Ldexp(frac, 64)), exp: exp - 64}
}

// x87Const rounds a decimal literal to the nearest extended value, as the
// C compiler does for a long double constant such as 1.0e-100L.
func x87Const(s string) x87 {
	f, _, err := big.ParseFloat(s, 10, 64, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	m := new(big.Float)
	e := f.MantExp(m) // f = m·2^e, m in [0.5, 1)
	u, _ := m.SetMantExp(m, 64).Uint64()
	return x87{mant: u, exp: e - 64}
}

// mul multiplies, rounding the 128-bit product to 64 bits, to nearest,
// ties to even: the x87 default.
func (a x87) mul(b x87) x87 {
	if a.mant == 0 || b.mant == 0 {
		return x87{}
	}
	hi, lo := bits.Mul64(a.mant, b.mant)
	exp := a.exp + b.exp + 64
	if hi>>63 == 0 {
		hi = hi<<1 | lo>>63
		lo <<= 1
		exp--
	}
	const half = 1 << 63
	if lo > half || (lo == half && hi&1 == 1) {
		hi++
		if hi == 0 {
			hi = half
			exp++
		}
	}
	return x87{mant: hi, exp: exp}
}

// cmp returns -1, 0 or +1 as a <, ==, > b.
func (a x87) cmp(b x87) int {
	switch {
	case a.mant == 0 && b.mant == 0:
		return 0
	case a.mant == 0:
		return -1
	case b.mant == 0:
		return 1
	case a.exp != b.exp:
		// Both normalized: the larger exponent is the larger value.
		if a.exp > b.exp {
			return 1
		}
		return -1
	case a.mant > b.mant:
		return 1
	case a.mant < b.mant:
		return -1
	}
	return 0
}

// uint64 truncates toward zero, as a C cast does; the value must be below
// 2^64.
func (a x87) uint64() uint64 {
	if a.mant == 0 || a.exp <= -64 {
		return 0
	}
	if a.exp >= 0 {
		return a.mant << a.exp
	}
	return a.mant >> -a.exp
}

// float64 rounds to the nearest float64, ties to even (overflow gives
// +Inf, gradual underflow as IEEE 754 says).
func (a x87) float64() float64 {
	if a.mant == 0 {
		return 0
	}
	// Normal float64 results: the top bit is worth 2^(exp+63).
	top := a.exp + 63
	if top >= -1022 && top <= 1023 {
		m := a.mant >> 11
		rest := a.mant & (1<<11 - 1)
		if rest > 1<<10 || (rest == 1<<10 && m&1 == 1) {
			m++
		}
		return math.Ldexp(float64(m), a.exp+11) // m ≤ 2^53: exact; Ldexp overflows to Inf
	}
	if top > 1023 {
		return math.Inf(1)
	}
	// Subnormal or zero: big.Float rounds those correctly.
	f := new(big.Float).SetMantExp(new(big.Float).SetUint64(a.mant), a.exp)
	r, _ := f.Float64()
	return r
}
