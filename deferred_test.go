package libsql

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSQLSnippet(t *testing.T) {
	long := "INSERT INTO t (a, b, c) VALUES ('" + strings.Repeat("é", 40) + "')"
	tests := []struct{ in, want string }{
		{"INSERT INTO t VALUES (?)", "INSERT INTO t VALUES (?)"},
		{"INSERT INTO t\nVALUES (?)", "INSERT INTO t …"},
		{long, long[:59] + " …"}, // cut before the 2-byte rune that straddles byte 60
	}
	for _, tt := range tests {
		got := sqlSnippet(tt.in)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("sqlSnippet(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDeferredFrom(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		ctx  context.Context
		def  bool
		want bool
	}{
		{ctx, false, false},
		{ctx, true, true},
		{WithDeferredExec(ctx, true), false, true},
		{WithDeferredExec(ctx, false), true, false},
		{WithDeferredExec(WithDeferredExec(ctx, true), false), true, false},
	} {
		if got := deferredFrom(tt.ctx, tt.def); got != tt.want {
			t.Errorf("deferredFrom(%v, %v) = %v, want %v", tt.ctx, tt.def, got, tt.want)
		}
	}
}
