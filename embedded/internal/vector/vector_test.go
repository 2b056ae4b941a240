package vector

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// The blobs are sqld 0.24.32's answers (TestVectorDifferential in
// embedded compares many more); FLOAT8's alignment bytes are zero here.
func TestConstruct(t *testing.T) {
	tests := []struct {
		arg  any
		t    Type
		want string
	}{
		{"[1,2,3]", Float32, "0000803f0000004000004040"},
		{"[]", Float32, ""},
		{"[]", Float64, "02"},
		{"[]", Float1Bit, "001003"},
		{"[1 2]", Float32, "00004041"},
		{"[1,-2,3.5]", Float64, "000000000000f03f00000000000000c00000000000000c4002"},
		{"[1,-2,3.5]", Float1Bit, "050d03"},
		{"[1,-2,3.5]", Float8, "8b00ff00b1b0b03c000000c0000104"},
		{"[1,-2,3.5]", Float16, "003c00c0004305"},
		{"[1,-2,3.5]", FloatB16, "803f00c0604006"},
		{[]byte{0, 0, 0x80, 0x3f, 1}, Float32, "0000803f"},
		{[]byte{5, 13, 3}, Float32, "0000803f000080bf0000803f"},
	}
	for _, tt := range tests {
		b, err := Construct(tt.arg, tt.t)
		if err != nil || hex.EncodeToString(b) != tt.want {
			t.Errorf("Construct(%v, %d) = %x, %v; want %s", tt.arg, tt.t, b, err, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		arg  any
		want string
	}{
		{nil, "vector: unexpected value type: got NULL, expected TEXT or BLOB"},
		{int64(1), "vector: unexpected value type: got INTEGER, expected TEXT or BLOB"},
		{1.5, "vector: unexpected value type: got FLOAT, expected TEXT or BLOB"},
		{"1,2]", "vector: must start with '['"},
		{"[1,2", "vector: must end with ']'"},
		{"[1,2]x", "vector: non-space symbols after closing ']' are forbidden"},
		{"[1,,2]", "vector: invalid float at position 1: ''"},
		{"[a]", "vector: invalid float at position 0: 'a'"},
		{"[" + strings.Repeat("1", 1026) + "]", "vector: float string length exceeded 1024 characters: '" + strings.Repeat("1", 1025) + "'"},
		{"[" + strings.Repeat("1,", MaxDims) + "1]", "vector: max size exceeded 65536"},
		{[]byte{0}, "vector: unexpected binary type: 0"},
		{[]byte{0, 0, 1}, "vector: float32 vector blob length must be divisible by 4 (excluding optional 'type'-byte): length=2"},
		{[]byte{0, 2}[:1], "vector: unexpected binary type: 0"},
		{[]byte{0, 0, 0, 2}[1:], "vector: float64 vector blob length must be divisible by 8 (excluding 'type'-byte): length=2"},
		{[]byte{3}, "vector: float1bit vector blob length must be divisible by 2 and not be empty (excluding 'type'-byte): length=0"},
		{[]byte{4}, "vector: float8 vector blob length must be divisible by 2 and has at least 2 bytes (excluding 'type'-byte): length=0"},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 4, 4}, "out of memory"},
		{[]byte{1, 2, 3, 4, 5, 6}, "vector: unexpected data part size: type=1, dims=1, 6 != 4"},
		{make([]byte, 4*MaxDims+4), "vector: max size exceeded: 65537 > 65536"},
	}
	for _, tt := range tests {
		_, err := Construct(tt.arg, Float32)
		var ve *Error
		if !errors.As(err, &ve) || ve.Msg != tt.want {
			t.Errorf("Construct(%.40v): %v, want %s", tt.arg, err, tt.want)
		}
	}
}

func TestView(t *testing.T) {
	b, _ := Construct("[1,2]", Float16)
	if v, ok := View(b, Float16, 2); !ok || v.Dims != 2 {
		t.Errorf("View of a FLOAT16 blob: %v, %v", v, ok)
	}
	for _, tc := range []struct {
		t    Type
		dims int
	}{{Float16, 3}, {Float32, 2}} {
		if _, ok := View(b, tc.t, tc.dims); ok {
			t.Errorf("View(%x, %d, %d) accepted", b, tc.t, tc.dims)
		}
	}
}
