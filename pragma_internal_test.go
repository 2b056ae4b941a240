package libsql

import "testing"

func TestPragmaSetting(t *testing.T) {
	tests := []struct {
		sql string
		key string // "" when not a remembered setting
	}{
		{"PRAGMA foreign_keys = OFF", "foreign_keys"},
		{"  pragma Foreign_Keys=0;  ", "foreign_keys"},
		{"PRAGMA\tforeign_keys(1)", "foreign_keys"},
		{"PRAGMA main.cache_size = -2000", "main.cache_size"},
		{"PRAGMA busy_timeout = 1000", "busy_timeout"},
		// Comments are skipped, schema names may be any identifier (these
		// were not recognised before).
		{"/* keys off */ PRAGMA foreign_keys = OFF", "foreign_keys"},
		{"PRAGMA foreign_keys = OFF; -- done", "foreign_keys"},
		{"PRAGMA /* a */ main . /* b */ cache_size = /* c */ -2000", "main.cache_size"},
		{"PRAGMA schéma.cache_size = 0", "schéma.cache_size"},
		{"PRAGMA foreign_keys", ""},                 // a query
		{"PRAGMA table_info(t)", ""},                // a query with an argument
		{"PRAGMA journal_mode = WAL", ""},           // stored in the database file
		{"PRAGMA user_version = 3", ""},             // stored in the database file
		{"PRAGMA optimize", ""},                     // a command
		{"PRAGMA foreign_keys = OFF; SELECT 1", ""}, // two statements
		{"PRAGMA foreign_keys = 1 junk", ""},        // SQLite refuses it (was recognised)
		{"PRAGMA foreign_keys = (1)", ""},           // likewise
		{"-- PRAGMA foreign_keys = 1", ""},
		{"PRAGMAforeign_keys = 1", ""},
		{"PRAGMA = 1", ""},
		{"PRAGMA main. = 1", ""},
		{"SELECT 'PRAGMA foreign_keys = 1'", ""},
		{"PRAG", ""},
		{"", ""},
	}
	for _, tt := range tests {
		text := analyzeSQL(tt.sql)
		key, ok := text.setting()
		if ok != (tt.key != "") || key != tt.key && ok {
			t.Errorf("setting of %q = %q, %v; want %q", tt.sql, key, ok, tt.key)
		}
	}
}

func TestPragmaSQL(t *testing.T) {
	for _, tt := range []struct{ in, sql string }{
		{"foreign_keys(1)", "PRAGMA foreign_keys(1)"},
		{"main.cache_size(-2000)", "PRAGMA main.cache_size(-2000)"},
		{"temp_store('memory')", "PRAGMA temp_store('memory')"},
		{"synchronous(NORMAL)", "PRAGMA synchronous(NORMAL)"},
		{"foreign_keys", ""},
		{"foreign_keys()", ""},
		{"foreign_keys(1", ""},
		{"9lives(1)", ""},
		{"main.(1)", ""},
		{"a(1) b(2)", ""},
		{"a(x y)", ""},
		{"a('x'y')", ""},
		{"a('x''y')", "PRAGMA a('x''y')"}, // a quote doubled in the string (was refused)
		{"a(+1)", "PRAGMA a(+1)"},
		{"a(1-2)", ""},     // was taken
		{"a(b.c)", ""},     // was taken
		{"a( 1)", ""},      // no blanks
		{"a(1/**/)", ""},   // no comments
		{"a(1);", ""},      // nothing after
		{"a(-x)", ""},      // a sign before a number only
		{"a('x\x00')", ""}, // a NUL ends SQLite's statement
		{"a.b.c(1)", ""},
		{"\"a\"(1)", ""}, // words only
		{"a(x'00')", ""},
		{"a(?)", ""},
	} {
		sql, err := pragmaSQL(tt.in)
		if sql != tt.sql || (err == nil) != (tt.sql != "") {
			t.Errorf("pragmaSQL(%q) = %q, %v; want %q", tt.in, sql, err, tt.sql)
		}
	}
}
