package libsql

import (
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/sqlscan"
)

// sqlText is what the driver's rules say of one SQL text
// (sqlscan.Statement): its parameters as SQLite numbers and names them,
// what bindArgs needs; whether it holds several statements (Multi); its
// first keyword, for tracing; whether it certainly only reads, for the
// write bound; whether it may begin a transaction; whether it sets a
// pragma. The text is read once, by analyzeSQL, and the value handed
// down: a prepared statement keeps it.
type sqlText struct{ sqlscan.Statement }

// analyzeSQL reads sql the way SQLite's tokenizer does. It only needs to
// be exact for SQL that SQLite takes; the server reports anything else.
func analyzeSQL(sql string) sqlText { return sqlText{sqlscan.Analyze(sql)} }

// uses reports whether the statement has a named parameter called name,
// with or without its prefix character. A ?NNN is not one: sqld binds it
// only from positional arguments.
func (p *sqlText) uses(name string) bool {
	for _, n := range p.Names {
		if n != "" && n[0] != '?' && (n == name || n[1:] == name) {
			return true
		}
	}
	return false
}

// unbound returns the named parameters that none of args binds, as the
// statement spells them. A ?NNN among named ones is not bindable by name
// (bindArgs refuses the mix first).
func (p *sqlText) unbound(args []codec.NamedArg) []string {
	var missing []string
	for _, n := range p.Names {
		if n == "" || n[0] == '?' {
			continue
		}
		found := false
		for _, a := range args {
			if a.Name == n || a.Name == n[1:] {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	return missing
}

// beginsTx reports whether the text is one statement that may begin a
// transaction: BEGIN, or SAVEPOINT (which begins one outside a
// transaction).
func (p *sqlText) beginsTx() bool {
	return p.Tx == sqlscan.TxBegin || p.Tx == sqlscan.TxSavepoint
}
