package ws

import (
	"testing"

	"github.com/gohrana/libsql/codec"
)

// TestMayLeaveTx: only a batch or a script sent with end may leave a
// transaction open; a statement never does, whatever its text, since the
// session sends one that may begin or fail to end a transaction without
// end (transport.Stream.Send).
func TestMayLeaveTx(t *testing.T) {
	exec := func(sql string) []codec.StreamRequest {
		return []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql}}}
	}
	tests := []struct {
		reqs []codec.StreamRequest
		want bool
	}{
		{exec("SELECT 1"), false},
		{exec("INSERT INTO t VALUES (1)"), false},
		{exec("BEGIN"), false},
		{exec("COMMIT"), false},
		{[]codec.StreamRequest{{Type: codec.RequestSequence, SQL: "BEGIN; SELECT 1"}}, true},
		{[]codec.StreamRequest{{Type: codec.RequestBatch}}, true},
		{append(exec("SELECT 1"), codec.StreamRequest{Type: codec.RequestBatch}), true},
		{[]codec.StreamRequest{{Type: codec.RequestDescribe, SQL: "BEGIN"}}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := mayLeaveTx(tt.reqs); got != tt.want {
			t.Errorf("mayLeaveTx(%+v) = %v, want %v", tt.reqs, got, tt.want)
		}
	}
}
