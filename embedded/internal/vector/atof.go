package vector

import "math"

// isSpace is SQLite's sqlite3Isspace: ASCII space, \t, \n, \v, \f, \r.
func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

const largestUint64 = math.MaxUint64

// Powers of ten as long double literals, for parseFloat and decodeFloat.
var (
	x87E100  = x87Const("1e100")
	x87E10   = x87Const("1e10")
	x87E1    = x87Const("1e1")
	x87Em100 = x87Const("1e-100")
	x87Em10  = x87Const("1e-10")
	x87Em1   = x87Const("1e-1")
	x87Max   = x87Const("1.7976931348623157081452742373e+308")
)

// parseFloat converts s as libSQL's sqlite3AtoF does on x86-64 (the long
// double path), and reports whether s is wholly one number, which is what
// the vector text parser asks of each element: an optional sign, digits
// with an optional decimal point (at least one digit), an optional
// exponent; leading and trailing spaces allowed. No hex, no Inf or NaN.
func parseFloat(s string) (float64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	i, n := 0, len(s)
	sign := 1
	var sig uint64 // significand
	d := 0         // decimal exponent from dropped or fractional digits
	esign, e := 1, 0
	eValid := true
	nDigit := 0
	eType := 1
	for i < n && isSpace(s[i]) {
		i++
	}
	if i >= n {
		return 0, false
	}
	if s[i] == '-' {
		sign = -1
		i++
	} else if s[i] == '+' {
		i++
	}
	for i < n && isDigit(s[i]) {
		sig = sig*10 + uint64(s[i]-'0')
		i++
		nDigit++
		if sig >= (largestUint64-9)/10 {
			for i < n && isDigit(s[i]) {
				i++
				d++
			}
		}
	}
	if i < n && s[i] == '.' {
		i++
		eType++
		for i < n && isDigit(s[i]) {
			if sig < (largestUint64-9)/10 {
				sig = sig*10 + uint64(s[i]-'0')
				d--
				nDigit++
			}
			i++
		}
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		eValid = false
		eType++
		if i < n {
			if s[i] == '-' {
				esign = -1
				i++
			} else if s[i] == '+' {
				i++
			}
			for i < n && isDigit(s[i]) {
				if e < 10000 {
					e = e*10 + int(s[i]-'0')
				} else {
					e = 10000
				}
				i++
				eValid = true
			}
		}
	}
	for i < n && isSpace(s[i]) {
		i++
	}
	ok := i == n && nDigit > 0 && eValid && eType > 0
	if sig == 0 {
		if sign < 0 {
			return math.Copysign(0, -1), ok
		}
		return 0, ok
	}
	e = e*esign + d
	for e > 0 && sig < largestUint64/10 {
		sig *= 10
		e--
	}
	for e < 0 && sig%10 == 0 {
		sig /= 10
		e++
	}
	var r float64
	if e == 0 {
		r = float64(sig)
	} else {
		x := x87FromUint64(sig)
		if e > 0 {
			for ; e >= 100; e -= 100 {
				x = x.mul(x87E100)
			}
			for ; e >= 10; e -= 10 {
				x = x.mul(x87E10)
			}
			for ; e >= 1; e-- {
				x = x.mul(x87E1)
			}
		} else {
			for ; e <= -100; e += 100 {
				x = x.mul(x87Em100)
			}
			for ; e <= -10; e += 10 {
				x = x.mul(x87Em10)
			}
			for ; e <= -1; e++ {
				x = x.mul(x87Em1)
			}
		}
		if x.cmp(x87Max) > 0 {
			r = math.Inf(1)
		} else {
			r = x.float64()
		}
	}
	if sign < 0 {
		r = -r
	}
	return r, ok
}
