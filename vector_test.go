package libsql

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unhex decodes a hex literal of a test table.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// f32bits and f64bits compare vectors bit for bit, so that NaNs, and 0
// against -0, count.
func f32bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func f64bits(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

// widen converts a Vector32's elements to float64, as Vector64.Scan does
// for every type but FLOAT64.
func widen(v Vector32) Vector64 {
	if v == nil {
		return nil
	}
	out := make(Vector64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func TestVectorValue(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    driver.Valuer
		want string // hex; "nil" for NULL
	}{
		// What sqld 0.24.32 returns for vector32('[1,2,3]'), vector32('[]'),
		// vector64('[0.5,-1,2,1e10]') and vector64('[]').
		{"vector32", Vector32{1, 2, 3}, "0000803f0000004000004040"},
		{"empty32", Vector32{}, ""},
		{"nil32", Vector32(nil), "nil"},
		{"vector64", Vector64{0.5, -1, 2, 1e10}, "000000000000e03f000000000000f0bf0000000000000040000000205fa0024202"},
		{"empty64", Vector64{}, "02"},
		{"nil64", Vector64(nil), "nil"},
		// Bit for bit: -0, infinities and a NaN's payload.
		{"special32", Vector32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), math.Float32frombits(0x7fa00001)}, "000000800000807f0100a07f"},
		{"special64", Vector64{math.Copysign(0, -1), math.Inf(-1)}, "0000000000000080000000000000f0ff02"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.v.Value()
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "nil" {
				if got != nil {
					t.Fatalf("Value() = %#v, want nil", got)
				}
				return
			}
			b, ok := got.([]byte)
			if !ok || b == nil {
				t.Fatalf("Value() = %#v, want a non-nil []byte", got)
			}
			if !bytes.Equal(b, unhex(t, tt.want)) {
				t.Errorf("Value() = %x, want %s", b, tt.want)
			}
		})
	}
}

// vectorBlobs are blobs sqld 0.24.32 made, each with the FLOAT32 blob that
// vector32() converted it to, recorded from the same server: Scan must give
// those elements bit for bit.
var vectorBlobs = []struct {
	sql       string // what made the blob
	blob, f32 string // hex
}{
	{"vector32('[1,2,3]')", "0000803f0000004000004040", "0000803f0000004000004040"},
	{"vector32('[]')", "", ""},
	{"x'...01': FLOAT32 with its optional type byte", "0000803f0000004001", "0000803f00000040"},
	{"vector16('[1,-2,0.333333,65504,65520,1e-7,-6e-8,3e-5,1e30,-0]')",
		"003c00c05535ff7b007c02000180f701007c008005",
		"0000803f000000c000a0aa3e00e07f470000807f00000034000080b30080fb370000807f00000080"},
	{"vector16('[0.1,0.2,0.3,-0.4,0.5]')", "662e6632cd3466b6003805", "00c0cc3d00c04c3e00a0993e00c0ccbe0000003f"},
	{"vector16 NaNs (x'017e05', x'01fe05')", "017e01fe05", "0000c07f0000c0ff"},
	{"vectorb16('[1,-2,0.333333,65504,65520,1e-7,-6e-8,3e-5,1e30,-0]')",
		"803f00c0aa3e7f477f47d63380b3fb374971008006",
		"0000803f000000c00000aa3e00007f4700007f470000d633000080b30000fb370000497100000080"},
	{"vectorb16('[7]')", "e04006", "0000e040"},
	{"vector8('[0.1,0.2,0.3,-0.4,0.5]')", "8eaac600ff000000b44d673bcdccccbe000304", "9c35cf3dcecc4c3e65ff983ecdccccbeffffff3e"},
	{"vector8('[7]')", "00000000000000000000e040000304", "0000e040"},
	{"vector8('[-1.5,100,-100,2.5,3,4,5,6,7]')",
		"7eff00838385868788420240c9c8483f0000c8c2000304",
		"809696bf0000c8420000c8c2c0af2f40c0af2f40100a8a402023a340403cbc406055d540"},
	{"vector8('[1,-2,0.333333,65504,65520,1e-7,-6e-8,3e-5,1e30,-0]')",
		"0000000000000000ff00000088bd4a6d000000c0000204",
		"000000c0000000c0000000c0000000c0000000c0000000c0000000c0000000c0caf24971000000c0"},
	{"vector8('[]')", "0000000000000000000004", ""},
	{"vector1bit('[1,-2,0.333333,65504,65520,1e-7,-6e-8,3e-5,1e30,-0]')", "bd01001603",
		"0000803f000080bf0000803f0000803f0000803f0000803f000080bf0000803f0000803f000080bf"},
	{"vector1bit('[0.1,0.2,0.3,-0.4,0.5]')", "170b03", "0000803f0000803f0000803f000080bf0000803f"},
	{"vector1bit('[7]')", "010f03", "0000803f"},
	{"vector1bit('[-1.5,100,-100,2.5,3,4,5,6,7]')", "fa01001703",
		"000080bf0000803f000080bf0000803f0000803f0000803f0000803f0000803f0000803f"},
	{"vector1bit('[]')", "001003", ""},
}

func TestVectorScanBlob(t *testing.T) {
	for _, tt := range vectorBlobs {
		t.Run(tt.sql, func(t *testing.T) {
			blob, want := unhex(t, tt.blob), unhex(t, tt.f32)
			var v Vector32
			if err := v.Scan(blob); err != nil {
				t.Fatal(err)
			}
			if v == nil {
				t.Fatal("Scan gave a nil Vector32, want an empty one")
			}
			if got, _ := v.Value(); !bytes.Equal(got.([]byte), want) {
				t.Errorf("Vector32 %v = %x, want %x", v, got, want)
			}
			var w Vector64
			if err := w.Scan(blob); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f64bits(w), f64bits(widen(v))) {
				t.Errorf("Vector64 %v, want the Vector32's elements %v", w, v)
			}
		})
	}

	// FLOAT64 goes only into a Vector64, bit for bit.
	blob := unhex(t, "000000000000e03f000000000000f0bf0000000000000040000000205fa0024202")
	var w Vector64
	if err := w.Scan(blob); err != nil {
		t.Fatal(err)
	}
	if want := (Vector64{0.5, -1, 2, 1e10}); !slices.Equal(w, want) {
		t.Errorf("vector64 blob: %v, want %v", w, want)
	}
	if err := w.Scan([]byte{2}); err != nil || w == nil || len(w) != 0 {
		t.Errorf("vector64('[]'): %v, %v; want an empty Vector64", w, err)
	}
}

func TestVectorScanNull(t *testing.T) {
	v, w := Vector32{1}, Vector64{1}
	if err := v.Scan(nil); err != nil || v != nil {
		t.Errorf("Vector32.Scan(nil) = %v, %v; want nil, nil", v, err)
	}
	if err := w.Scan(nil); err != nil || w != nil {
		t.Errorf("Vector64.Scan(nil) = %v, %v; want nil, nil", w, err)
	}
}

func TestVectorScanText(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tt := range []struct {
		text string
		want []float64
	}{
		{"[0.5,-1,2,1e+10]", []float64{0.5, -1, 2, 1e10}}, // vector_extract(vector64('[0.5,-1,2,1e10]'))
		{"[Inf,-Inf,1.5]", []float64{inf, -inf, 1.5}},     // vector_extract(vector32('[1e39,-1e39,1.5]'))
		{"[NaN]", []float64{nan}},
		{"[]", []float64{}},
		{" \t[ ]\r\n", []float64{}},
		{"[ 1 ,\t2\n, +3.]", []float64{1, 2, 3}},
		{"[.5e-3,1E2,-0]", []float64{0.0005, 100, math.Copysign(0, -1)}},
		{"[inf,+INF,nan]", []float64{inf, inf, nan}},
		{"[1e400,-1e400]", []float64{inf, -inf}}, // beyond float64, as SQLite reads it
		{"[3.14159265358979]", []float64{3.14159265358979}},
	} {
		t.Run(tt.text, func(t *testing.T) {
			var w Vector64
			if err := w.Scan(tt.text); err != nil {
				t.Fatal(err)
			}
			if w == nil || !equalFloats(w, tt.want) {
				t.Errorf("Vector64 %#v, want %v", w, tt.want)
			}
			// A Vector32 rounds each float64 to float32, as vector32() does.
			var v Vector32
			if err := v.Scan(tt.text); err != nil {
				t.Fatal(err)
			}
			want32 := make([]float64, len(tt.want))
			for i, x := range tt.want {
				want32[i] = float64(float32(x))
			}
			if v == nil || !equalFloats(widen(v), want32) {
				t.Errorf("Vector32 %#v, want %v", v, want32)
			}
		})
	}
	// vector32('[1e39]') is +Inf, and 1.4013e-45 (vector_extract's text of
	// the least float32) the float32 of bits 1.
	var v Vector32
	if err := v.Scan("[1e39,1.4013e-45]"); err != nil {
		t.Fatal(err)
	}
	if got := f32bits(v); !slices.Equal(got, []uint32{0x7f800000, 1}) {
		t.Errorf("[1e39,1.4013e-45] = %#x, want [0x7f800000 0x1]", got)
	}
}

// equalFloats compares as == does, but for NaN, which equals NaN here.
func equalFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
	})
}

func TestVectorScanErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		src     any
		only32  bool       // Vector64 reads it
		typ     VectorType // of the *VectorError
		message string     // a part of its text
	}{
		{"float64 into Vector32", unhex(t, "000000000000f03f02"), true, VectorFloat64,
			"a vector of type 2 (float64) cannot scan into Vector32 without rounding"},
		{"empty float64 into Vector32", []byte{2}, true, VectorFloat64, "type 2 (float64)"},
		{"ragged float32", unhex(t, "0000803f0000"), false, VectorFloat32,
			"a 6-byte blob cannot scan into Vector%d: a vector of type 1 (float32) is 4 bytes per element and an optional type byte"},
		{"ragged float32 with its type byte", unhex(t, "0000803f000001"), false, VectorFloat32, "type 1 (float32)"},
		{"ragged float64", unhex(t, "0000000000000000000002"), false, VectorFloat64,
			"type 2 (float64)"},
		{"float8 too short", unhex(t, "000004"), false, VectorFloat8, "type 4 (float8)"},
		{"float8 with 4 trailing bytes", unhex(t, "000000000000000000000000000404"), false, VectorFloat8, "type 4 (float8)"},
		{"float8 unaligned", unhex(t, "00000000000000000000000004"), false, VectorFloat8, "type 4 (float8)"},
		{"float1bit without a count", []byte{3}, false, VectorFloat1Bit, "type 3 (float1bit)"},
		{"float1bit count too small", unhex(t, "000503"), false, VectorFloat1Bit, "type 3 (float1bit)"},
		{"float1bit count too large", unhex(t, "001103"), false, VectorFloat1Bit, "type 3 (float1bit)"},
		{"type 7", []byte{7}, false, 7, "a 1-byte blob cannot scan into Vector%d: it ends in 7, which is no vector type"},
		{"type 0", unhex(t, "0000803f00"), false, 0, "it ends in 0, which is no vector type"},
		{"type 255", unhex(t, "0000803fff"), false, 255, "it ends in 255"},
		{"integer", int64(1), false, 0, "cannot scan int64 into Vector%d: want a vector blob, its text or NULL"},
		{"real", 1.5, false, 0, "cannot scan float64 into Vector%d"},
		{"text without brackets", "1,2", false, 0, "cannot scan text into Vector%d: it does not start with '['"},
		{"text unclosed", "[1,2", false, 0, "it does not end with ']'"},
		{"empty text", "", false, 0, "it does not start with '['"},
		{"empty element", "[1,,2]", false, 0, `element 1, "", is not a number`},
		{"trailing comma", "[1,]", false, 0, `element 1, "", is not a number`},
		{"lone comma", "[,]", false, 0, `element 0, "", is not a number`},
		{"word", "[1,abc]", false, 0, `element 1, "abc", is not a number`},
		{"space inside a number", "[1 2]", false, 0, `element 0, "1 2", is not a number`},
		{"hexadecimal", "[0x10]", false, 0, "is not a number"},
		{"exponent without digits", "[1e]", false, 0, "is not a number"},
		{"lone dot", "[.]", false, 0, "is not a number"},
		{"Infinity", "[Infinity]", false, 0, "is not a number"},
		{"signed NaN", "[-NaN]", false, 0, "is not a number"},
		{"nested", "[[1]]", false, 0, "is not a number"},
		{"after the bracket", "[1]]", false, 0, "is not a number"},
		{"long element", "[" + strings.Repeat("9", 40) + "x]", false, 0, `element 0, "` + strings.Repeat("9", 32) + `"..., is not a number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(bits int, err error) {
				t.Helper()
				var verr *VectorError
				if !errors.As(err, &verr) {
					t.Fatalf("Vector%d: error %v (%T), want a *VectorError", bits, err, err)
				}
				if verr.Type != tt.typ {
					t.Errorf("Vector%d: Type %d, want %d", bits, verr.Type, tt.typ)
				}
				message := strings.Replace(tt.message, "%d", strconv.Itoa(bits), 1)
				if !strings.HasPrefix(err.Error(), "libsql: ") || !strings.Contains(err.Error(), message) {
					t.Errorf("Vector%d: error %q, want it to contain %q", bits, err, message)
				}
			}
			// The receivers keep what they had.
			v := Vector32{9, 9}
			check(32, v.Scan(tt.src))
			if !slices.Equal(v, Vector32{9, 9}) {
				t.Errorf("Vector32 changed to %v", v)
			}
			w := Vector64{9, 9}
			err := w.Scan(tt.src)
			if tt.only32 {
				if err != nil {
					t.Errorf("Vector64: %v", err)
				}
				return
			}
			check(64, err)
			if !slices.Equal(w, Vector64{9, 9}) {
				t.Errorf("Vector64 changed to %v", w)
			}
		})
	}
}

// TestVectorScanReuse checks that Scan decodes into the receiver's array
// when it is large enough, without allocating, as it is called through
// database/sql.
func TestVectorScanReuse(t *testing.T) {
	blob32, _ := Vector32{1, 2, 3, 4}.Value()
	blob64, _ := Vector64{1, 2, 3, 4}.Value()
	f16 := unhex(t, "003c00c05535ff7b05")
	text := "[1, 2.5e3, -3, Inf]"
	v := make(Vector32, 0, 4)
	w := make(Vector64, 0, 4)
	array32, array64 := &v[:1][0], &w[:1][0]
	checkScanIntoArray(t, "Vector32", &v, func() bool { return len(v) == 4 && &v[0] == array32 }, blob32, f16, text)
	checkScanIntoArray(t, "Vector64", &w, func() bool { return len(w) == 4 && &w[0] == array64 }, blob64, blob32, f16, text)
	// A longer vector gets a new array; the old one is left alone.
	if err := v.Scan("[1,2,3,4,5]"); err != nil || len(v) != 5 || &v[0] == array32 {
		t.Errorf("Scan of 5 elements into a capacity of 4: %v, %v", v, err)
	}
}

// checkScanIntoArray checks that s.Scan of each of srcs allocates nothing
// and decodes into the receiver's array, which inArray tells.
func checkScanIntoArray(t *testing.T, name string, s sql.Scanner, inArray func() bool, srcs ...any) {
	t.Helper()
	for _, src := range srcs {
		if n := testing.AllocsPerRun(100, func() {
			if err := s.Scan(src); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s.Scan(%T) allocates %v times, want 0", name, src, n)
		}
		if !inArray() {
			t.Errorf("%s.Scan(%T) did not decode into the receiver's array", name, src)
		}
	}
}

// TestVectorValueAllocs bounds Value to its blob and the interface that
// holds it.
func TestVectorValueAllocs(t *testing.T) {
	for _, v := range []driver.Valuer{make(Vector32, 768), make(Vector64, 768)} {
		var sink driver.Value
		if n := testing.AllocsPerRun(100, func() { sink, _ = v.Value() }); n > 2 {
			t.Errorf("%T.Value allocates %v times, want at most 2", v, n)
		}
		_ = sink
	}
}

// TestVectorRoundTrip sends random vectors, special values among them,
// through Value and Scan and wants them back bit for bit.
func TestVectorRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, math.MaxFloat64, math.SmallestNonzeroFloat32, math.MaxFloat32}
	for n := range 40 {
		w := make(Vector64, n)
		for i := range w {
			if r.IntN(4) == 0 {
				w[i] = special[r.IntN(len(special))]
			} else {
				w[i] = math.Float64frombits(r.Uint64())
			}
		}
		v := make(Vector32, n)
		for i := range v {
			v[i] = math.Float32frombits(r.Uint32())
		}

		b, _ := v.Value()
		if len(b.([]byte)) != 4*n {
			t.Fatalf("Vector32 of %d: a blob of %d bytes, want %d", n, len(b.([]byte)), 4*n)
		}
		var v2 Vector32
		if err := v2.Scan(b); err != nil || !slices.Equal(f32bits(v2), f32bits(v)) {
			t.Fatalf("Vector32 %v came back as %v, %v", v, v2, err)
		}
		b, _ = w.Value()
		var w2 Vector64
		if err := w2.Scan(b); err != nil || !slices.Equal(f64bits(w2), f64bits(w)) {
			t.Fatalf("Vector64 %v came back as %v, %v", w, w2, err)
		}
	}
}

// TestFloat16 converts every half-precision number and checks it against
// its value computed from the fields: (-1)^sign * mantissa * 2^exponent.
func TestFloat16(t *testing.T) {
	for h := range 1 << 16 {
		got := float16ToFloat32(uint16(h))
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		exp, mant := h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f && mant == 0:
			want = math.Inf(int(sign))
		case exp == 0x1f:
			// libSQL makes every NaN the quiet one of its sign.
			if bits := math.Float32bits(got); bits != uint32(h&0x8000)<<16|0x7fc00000 {
				t.Errorf("float16 %#04x = %#08x, want the quiet NaN of its sign", h, bits)
			}
			continue
		case exp == 0:
			want = sign * math.Ldexp(float64(mant), -24)
		default:
			want = sign * math.Ldexp(float64(mant|0x400), exp-25)
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Errorf("float16 %#04x = %v, want %v", h, got, want)
		}
	}
}

func TestVectorTypeString(t *testing.T) {
	for typ, want := range map[VectorType]string{
		0: "VectorType(0)", VectorFloat32: "float32", VectorFloat64: "float64", VectorFloat1Bit: "float1bit",
		VectorFloat8: "float8", VectorFloat16: "float16", VectorFloatB16: "floatb16", 7: "VectorType(7)",
	} {
		if got := typ.String(); got != want {
			t.Errorf("VectorType(%d).String() = %q, want %q", typ, got, want)
		}
	}
}

// FuzzVectorBlob scans arbitrary blobs: Scan never panics, fails only with
// a *VectorError that leaves the receiver alone, agrees between Vector32
// and Vector64, and gives back, through Value, the very bytes of a FLOAT32
// or FLOAT64 blob it read.
func FuzzVectorBlob(f *testing.F) {
	for _, tt := range vectorBlobs {
		f.Add(unhex(f, tt.blob))
	}
	f.Add(unhex(f, "000000000000e03f000000000000f0bf0000000000000040000000205fa0024202"))
	f.Add([]byte{2})
	f.Add([]byte{7})
	f.Add(unhex(f, "0000803f0000"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		v, w := Vector32{9}, Vector64{9}
		err32, err64 := v.Scan(blob), w.Scan(blob)
		for _, err := range []error{err32, err64} {
			var verr *VectorError
			if err != nil && !errors.As(err, &verr) {
				t.Fatalf("error %v (%T), want a *VectorError", err, err)
			}
		}
		if err32 != nil && !slices.Equal(v, Vector32{9}) || err64 != nil && !slices.Equal(w, Vector64{9}) {
			t.Fatalf("a failed Scan changed its receiver: %v, %v", v, w)
		}
		typ := VectorFloat32
		if len(blob)%2 == 1 {
			typ = VectorType(blob[len(blob)-1])
		}
		if typ == VectorFloat64 {
			if err32 == nil {
				t.Fatal("a FLOAT64 blob scanned into a Vector32")
			}
			if err64 == nil {
				if b, _ := w.Value(); !bytes.Equal(b.([]byte), blob) {
					t.Fatalf("FLOAT64 %x came back from Value as %x", blob, b)
				}
			}
			return
		}
		if (err32 == nil) != (err64 == nil) {
			t.Fatalf("Vector32: %v; Vector64: %v", err32, err64)
		}
		if err32 != nil {
			return
		}
		if !slices.Equal(f64bits(w), f64bits(widen(v))) {
			t.Fatalf("Vector64 %v, Vector32 %v", w, v)
		}
		if typ == VectorFloat32 {
			b, _ := v.Value()
			if !bytes.Equal(b.([]byte), blob[:len(blob)&^1]) {
				t.Fatalf("FLOAT32 %x came back from Value as %x", blob, b)
			}
		}
	})
}

// FuzzVectorText scans arbitrary text: Scan never panics, fails only with a
// *VectorError that leaves the receiver alone, reads into a Vector32 the
// float32 roundings of what it reads into a Vector64, and reads back what
// strconv writes for those elements.
func FuzzVectorText(f *testing.F) {
	for _, s := range []string{
		"[0.5,-1,2,1e+10]", "[Inf,-Inf,NaN]", "[]", " [ 1 ,\t2 ] ", "[1,,2]", "[1 2]", "[.5e-3]",
		"[1e400]", "[0x10]", "[", "", "[1e]", "[+inf,nan]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, w := Vector32{9}, Vector64{9}
		err32, err64 := v.Scan(s), w.Scan(s)
		if (err32 == nil) != (err64 == nil) {
			t.Fatalf("Vector32: %v; Vector64: %v", err32, err64)
		}
		if err32 != nil {
			var verr *VectorError
			if !errors.As(err32, &verr) || !errors.As(err64, &verr) {
				t.Fatalf("errors %v (%T), %v (%T), want *VectorError", err32, err32, err64, err64)
			}
			if !slices.Equal(v, Vector32{9}) || !slices.Equal(w, Vector64{9}) {
				t.Fatalf("a failed Scan changed its receiver: %v, %v", v, w)
			}
			return
		}
		// Every element passed the syntax check, and ParseFloat, which reads
		// them, can only have found one out of range.
		inner, n, _ := vectorText(s)
		if n != len(w) || n != len(v) {
			t.Fatalf("%d elements, Vector32 %v, Vector64 %v", n, v, w)
		}
		for elem := range strings.SplitSeq(inner, ",") {
			if n == 0 {
				break
			}
			if _, err := strconv.ParseFloat(strings.Trim(elem, sqliteSpaces), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
				t.Fatalf("element %q: %v", elem, err)
			}
		}
		for i := range w {
			if x := float32(w[i]); math.Float32bits(x) != math.Float32bits(v[i]) && !(math.IsNaN(float64(x)) && v[i] != v[i]) {
				t.Fatalf("element %d: Vector32 %v, Vector64 %v", i, v[i], w[i])
			}
		}
		var text strings.Builder
		text.WriteByte('[')
		for i, x := range w {
			if i > 0 {
				text.WriteByte(',')
			}
			text.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
		text.WriteByte(']')
		var again Vector64
		if err := again.Scan(text.String()); err != nil || !equalFloats(again, w) {
			t.Fatalf("%q read back as %v, %v; want %v", text.String(), again, err, w)
		}
	})
}
