package ws

import (
	"testing"

	"github.com/gohrana/libsql/codec"
)

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
		{exec("BEGIN"), true},
		{exec("  begin immediate"), true},
		{exec("SAVEPOINT a"), true},
		{exec("BEGINNING"), false},
		{exec("COMMIT"), true},
		{exec("end transaction"), true},
		{exec("ROLLBACK"), false},
		{exec("ENDURANCE"), false},
		{exec("release savepoint sp;"), true},
		{exec("'BEGIN'"), false},
		{exec("ROLLBACK TO sp"), false},
		// Past comments (missed before).
		{exec("/* note */ BEGIN"), true},
		{exec("-- note\nbegin immediate"), true},
		{exec("/* a */ SAVEPOINT /* b */ sp"), true},
		{exec("-- done\nCOMMIT"), true},
		// Not a statement that begins or ends one, which SQLite would
		// refuse, or one sqld refuses before running any of it (several
		// statements in one execute); these were taken.
		{exec("(BEGIN)"), false},
		{exec("BEGIN foo"), false},
		{exec("BEGIN; SELECT 1"), false},
		{[]codec.StreamRequest{{Type: codec.RequestSequence, SQL: "BEGIN; SELECT 1"}}, true},
		{[]codec.StreamRequest{{Type: codec.RequestBatch}}, true},
		{nil, false},
	}
	for _, tt := range tests {
		if got := mayLeaveTx(tt.reqs); got != tt.want {
			t.Errorf("mayLeaveTx(%+v) = %v, want %v", tt.reqs, got, tt.want)
		}
	}
}
