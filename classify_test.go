package libsql

import "testing"

// readOnlySQL is sqlscan.ReadOnly, whose table of statements is
// sqlscan's TestReadOnly; here only that the write bound asks it.
func TestReadOnlySQL(t *testing.T) {
	for sql, want := range map[string]bool{"SELECT 1": true, "INSERT INTO t VALUES (1)": false, "PRAGMA user_version": false} {
		if got := readOnlySQL(sql); got != want {
			t.Errorf("readOnlySQL(%q) = %t, want %t", sql, got, want)
		}
	}
}
