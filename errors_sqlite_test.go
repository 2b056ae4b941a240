package libsql

import "testing"

// TestSQLiteCodes checks the numeric codes against SQLite's (and
// mattn/go-sqlite3's) numbers, written out here rather than taken from the
// package's tables.
func TestSQLiteCodes(t *testing.T) {
	tests := []struct {
		code, message     string
		primary, extended int
	}{
		{"SQLITE_UNKNOWN", "SQLite error: no such table: x", 1, 1},
		{"SQL_INPUT_ERROR", "SQL input error: no such column: c (at offset 7)", 1, 1},
		{"SQLITE_INTERNAL", "", 2, 2},
		{"SQLITE_PERM", "", 3, 3},
		{"SQLITE_ABORT", "", 4, 4},
		{"SQLITE_BUSY", "SQLite error: database is locked", 5, 5},
		{"SQLITE_LOCKED", "", 6, 6},
		{"SQLITE_NOMEM", "", 7, 7},
		{"SQLITE_READONLY", "", 8, 8},
		{"SQLITE_INTERRUPT", "", 9, 9},
		{"SQLITE_IOERR", "", 10, 10},
		{"SQLITE_CORRUPT", "", 11, 11},
		{"SQLITE_NOTFOUND", "", 12, 12},
		{"SQLITE_FULL", "", 13, 13},
		{"SQLITE_CANTOPEN", "", 14, 14},
		{"SQLITE_PROTOCOL", "", 15, 15},
		{"SQLITE_SCHEMA", "", 17, 17},
		{"SQLITE_TOOBIG", "", 18, 18},
		{"SQLITE_MISMATCH", "", 20, 20},
		{"SQLITE_MISUSE", "", 21, 21},
		{"SQLITE_NOLFS", "", 22, 22},
		{"SQLITE_AUTH", "", 23, 23},
		{"SQLITE_RANGE", "", 25, 25},
		{"SQLITE_NOTADB", "", 26, 26},
		// SQLITE_CONSTRAINT_* from the message; a PRIMARY KEY clash reads
		// as UNIQUE (2067), as SQLite words it.
		{"SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.c", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.id", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: FOREIGN KEY constraint failed", 19, 787},
		{"SQLITE_CONSTRAINT", "SQLite error: NOT NULL constraint failed: t.c", 19, 1299},
		{"SQLITE_CONSTRAINT", "SQLite error: CHECK constraint failed: named", 19, 275},
		{"SQLITE_CONSTRAINT", "SQLite error: cannot store TEXT value in INTEGER column s.a", 19, 3091},
		{"SQLITE_CONSTRAINT", "UNIQUE constraint failed: t.c", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: constraint failed", 19, 19},
		{"SQLITE_CONSTRAINT", "SQLite error: ", 19, 19},
		{"SQLITE_CONSTRAINT", "SQLite error: unique constraint failed: t.c", 19, 19},
		{"SQLITE_BUSY", "SQLite error: UNIQUE constraint failed: t.c", 5, 5},
		// Not SQLite's.
		{"SQL_PARSE_ERROR", "SQL string could not be parsed: syntax error", 0, 0},
		{"SQL_NO_STATEMENT", "", 0, 0},
		{"STREAM_EXPIRED", "", 0, 0},
		{"TRANSACTION_TIMEOUT", "", 0, 0},
		{"READONLY_TRANSACTION", "", 0, 0},
		{"", "connection refused", 0, 0},
		{"sqlite_busy", "", 0, 0},
	}
	for _, tt := range tests {
		e := &Error{Code: tt.code, Message: tt.message}
		if got := e.SQLiteCode(); got != tt.primary {
			t.Errorf("%s %q: SQLiteCode %d, want %d", tt.code, tt.message, got, tt.primary)
		}
		if got := e.SQLiteExtendedCode(); got != tt.extended {
			t.Errorf("%s %q: SQLiteExtendedCode %d, want %d", tt.code, tt.message, got, tt.extended)
		}
		if got := e.SQLiteExtendedCode() & 0xff; got != e.SQLiteCode() {
			t.Errorf("%s %q: the extended code's low byte %d is not the primary code", tt.code, tt.message, got)
		}
	}
	var nilErr *Error
	if nilErr.SQLiteCode() != 0 || nilErr.SQLiteExtendedCode() != 0 {
		t.Error("a nil *Error has codes")
	}
}
