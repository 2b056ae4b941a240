package codec

import "testing"

func TestTypeString(t *testing.T) {
	for _, tt := range []struct {
		t    Type
		want string
	}{
		{Null, "null"},
		{Integer, "integer"},
		{Float, "float"},
		{Text, "text"},
		{Blob, "blob"},
		{Blob + 1, "Type(5)"},
		{255, "Type(255)"},
	} {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("Type(%d).String() = %q, want %q", uint8(tt.t), got, tt.want)
		}
	}
}
