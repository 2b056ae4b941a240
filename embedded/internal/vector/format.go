package vector

import (
	"math"
	"strings"
)

var (
	x87E119 = x87Const("1e119")
	x87E29  = x87Const("1e29")
	x87E19  = x87Const("1e19")
	x87Em97 = x87Const("1e-97")
	x87E7   = x87Const("1e7")
	x87E17  = x87Const("1e17")
)

// decodeFloat returns the significant decimal digits of r > 0 (finite) and
// the position of the decimal point, rounded to round digits, as libSQL's
// sqlite3FpDecode does on x86-64 (long double path; iRound = round > 0,
// mxRound 16): about 18 digits from an extended-precision scaling,
// truncated, then rounded half up in decimal. Trailing zeros are dropped.
func decodeFloat(r float64, round int) (digits []byte, dp int) {
	exp := 0
	x := x87FromFloat64(r)
	if r >= 1e19 {
		for x.cmp(x87E119) >= 0 {
			exp += 100
			x = x.mul(x87Em100)
		}
		for x.cmp(x87E29) >= 0 {
			exp += 10
			x = x.mul(x87Em10)
		}
		for x.cmp(x87E19) >= 0 {
			exp++
			x = x.mul(x87Em1)
		}
	} else {
		for x.cmp(x87Em97) < 0 {
			exp -= 100
			x = x.mul(x87E100)
		}
		for x.cmp(x87E7) < 0 {
			exp -= 10
			x = x.mul(x87E10)
		}
		for x.cmp(x87E17) < 0 {
			exp--
			x = x.mul(x87E1)
		}
	}
	v := x.uint64()
	var buf [24]byte
	i := len(buf)
	for v > 0 {
		i--
		buf[i] = byte(v%10) + '0'
		v /= 10
	}
	// One spare place in front for a carry out of the first digit.
	z := append([]byte{'0'}, buf[i:]...)
	n := len(z) - 1
	dp = n + exp
	const mxRound = 16
	if round > 0 && (round < n || n > mxRound) {
		if round > mxRound {
			round = mxRound
		}
		n = round
		if z[1+round] >= '5' {
			j := round
			for {
				z[j]++
				if z[j] <= '9' {
					break
				}
				z[j] = '0'
				j--
				if j == 0 {
					z[0] = '1'
					n++
					dp++
					break
				}
			}
		}
	}
	if z[0] == '1' {
		digits = z[:n]
	} else {
		digits = z[1 : 1+n]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return digits, dp
}

// formatG formats r as SQLite's printf "%g" does (libSQL's
// sqlite3_snprintf, which vector_extract uses): six significant digits,
// trailing zeros dropped, "e+NN" outside 1e-4 ≤ |r| < 1e6, "Inf", "-Inf",
// "NaN", and -0 as "0".
func formatG(r float64) string {
	switch {
	case math.IsNaN(r):
		return "NaN"
	case math.IsInf(r, 1):
		return "Inf"
	case math.IsInf(r, -1):
		return "-Inf"
	case r == 0:
		return "0"
	}
	var b strings.Builder
	if r < 0 {
		b.WriteByte('-')
		r = -r
	}
	const precision = 6
	digits, dp := decodeFloat(r, precision)
	exp := dp - 1
	prec := precision - 1
	sci := exp < -4 || exp > prec
	e2 := 0
	if !sci {
		prec -= exp
		e2 = dp - 1
	}
	j := 0
	next := func() byte {
		if j < len(digits) {
			j++
			return digits[j-1]
		}
		return '0'
	}
	var out []byte
	if e2 < 0 {
		out = append(out, '0')
	} else {
		for ; e2 >= 0; e2-- {
			out = append(out, next())
		}
	}
	if prec > 0 {
		out = append(out, '.')
		for e2++; e2 < 0 && prec > 0; prec, e2 = prec-1, e2+1 {
			out = append(out, '0')
		}
		for ; prec > 0; prec-- {
			out = append(out, next())
		}
		for out[len(out)-1] == '0' {
			out = out[:len(out)-1]
		}
		if out[len(out)-1] == '.' {
			out = out[:len(out)-1]
		}
	}
	b.Write(out)
	if sci {
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp >= 100 {
			b.WriteByte(byte(exp/100) + '0')
			exp %= 100
		}
		b.WriteByte(byte(exp/10) + '0')
		b.WriteByte(byte(exp%10) + '0')
	}
	return b.String()
}
