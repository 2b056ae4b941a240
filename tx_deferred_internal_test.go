package libsql

import (
	"context"
	"testing"
)

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
