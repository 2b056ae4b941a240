package vector

import (
	"math"
	"strings"
	"testing"
)

// FuzzVectorFunctions: no text or blob makes a vector function panic; a
// blob a constructor returns reads back with its type and length, and
// vector_extract's text of a FLOAT32 or FLOAT64 one without Inf or NaN
// parses back to a vector of the same length.
func FuzzVectorFunctions(f *testing.F) {
	for _, s := range []string{"[1,2,3]", "[]", " [1e39, -0, .5] ", "[1,,2]", "[", "[1 2]x", "[1e-400,1e400]"} {
		f.Add([]byte(s), true)
	}
	for _, b := range [][]byte{{}, {1}, {0, 0, 0x80, 0x3f}, {5, 13, 3}, {0x8b, 0, 0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 4}, {0, 0x3c, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 4, 4}} {
		f.Add(b, false)
	}
	f.Fuzz(func(t *testing.T, data []byte, text bool) {
		var arg any = data
		if text {
			arg = string(data)
		}
		for _, ty := range []Type{Float32, Float64, Float1Bit, Float8, Float16, FloatB16} {
			b, err := Construct(arg, ty)
			if err != nil {
				continue
			}
			v, err := Parse(b, 0)
			if err != nil {
				t.Fatalf("Construct(%q, %d) = %x, which does not parse: %v", data, ty, b, err)
			}
			if v.Type != ty {
				t.Fatalf("Construct(%q, %d) = %x of type %d", data, ty, b, v.Type)
			}
			if ty == Float32 || ty == Float64 {
				s, err := Extract(b)
				if err != nil {
					t.Fatalf("Extract(%x): %v", b, err)
				}
				// libSQL prints Inf and NaN but does not parse them back.
				if strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
					continue
				}
				w, err := Parse(s, ty)
				if err != nil || w.Dims != v.Dims {
					t.Fatalf("Extract(%x) = %q, which parses to %v, %v", b, s, w, err)
				}
			}
			for _, m := range []Metric{Cosine, L2} {
				if d, err := Distance(m, b, b); err == nil && m == L2 && d != 0 && !math.IsNaN(d) && !math.IsInf(d, 0) {
					t.Fatalf("l2 distance of %x to itself is %v", b, d)
				}
			}
		}
		_, _ = Extract(arg)
		_, _ = Distance(Cosine, arg, arg)
		_, _ = Distance(L2, arg, "[1,2,3]")
	})
}
