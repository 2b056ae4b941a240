package libsql

import "github.com/gohrana/libsql/sqlscan"

// sqlParams describes the parameters of one SQL text, as SQLite numbers
// and names them (see sqlscan.Params): what bindArgs needs, and whether
// the text may hold several statements (Multi).
type sqlParams struct{ sqlscan.Params }

// scanParams finds the parameters of sql the way SQLite's tokenizer does.
// It only needs to be exact for SQL that SQLite takes; the server reports
// anything else.
func scanParams(sql string) sqlParams { return sqlParams{sqlscan.ScanParams(sql)} }

// uses reports whether the statement has a named parameter called name,
// with or without its prefix character. A ?NNN is not one: sqld binds it
// only from positional arguments.
func (p *sqlParams) uses(name string) bool {
	for _, n := range p.Names {
		if n != "" && n[0] != '?' && (n == name || n[1:] == name) {
			return true
		}
	}
	return false
}
