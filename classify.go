package libsql

import "github.com/gohrana/libsql/sqlscan"

// The statement classifier of the write bound (writers.go): a statement
// that certainly only reads takes no write slot.

// readOnlySQL reports whether sql certainly only reads, judged from its
// tokens alone, cheaply and conservatively (sqlscan.ReadOnly): one
// statement that begins with SELECT, VALUES or EXPLAIN, or with WITH and
// has none of the words INSERT, UPDATE, DELETE and REPLACE outside
// strings, quoted names and comments. Anything else, PRAGMA included, may
// write, and takes a slot.
func readOnlySQL(sql string) bool { return sqlscan.ReadOnly(sql) }
