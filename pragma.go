package libsql

import (
	"errors"
	"strings"

	"github.com/gohrana/libsql/sqlscan"
)

// Connection settings. Over HTTP every autocommit statement runs on a
// server stream of its own, so a PRAGMA that sets a connection's state
// ("PRAGMA foreign_keys = OFF") would be forgotten by the next statement.
// The driver remembers each such assignment that succeeded and replays it
// at the head of every server stream the connection opens afterwards, in
// the same request as the stream's first statement (session.Conn.Persist).
// Only the PRAGMAs below are remembered: they are per-connection state.
// Others are database-wide and stored in the file (journal_mode,
// user_version), or are one-shot commands and queries (optimize,
// table_info(t)), which replaying would repeat.

// connectionPragmas are the PRAGMAs whose value belongs to a connection.
var connectionPragmas = map[string]bool{
	"analysis_limit": true, "automatic_index": true, "busy_timeout": true, "cache_size": true,
	"cache_spill": true, "case_sensitive_like": true, "cell_size_check": true,
	"checkpoint_fullfsync": true, "defer_foreign_keys": true, "foreign_keys": true,
	"fullfsync": true, "hard_heap_limit": true, "ignore_check_constraints": true,
	"journal_size_limit": true, "legacy_alter_table": true, "mmap_size": true,
	"query_only": true, "recursive_triggers": true, "reverse_unordered_selects": true,
	"secure_delete": true, "soft_heap_limit": true, "synchronous": true, "temp_store": true,
	"threads": true, "trusted_schema": true,
}

// setting reports whether the text is one assignment of a connection
// setting, "PRAGMA [schema.]name = value" or "PRAGMA [schema.]name(value)"
// (comments and a final ';' allowed), and returns its key: the lower-case
// name, with its schema if given.
func (p *sqlText) setting() (key string, ok bool) {
	return p.PragmaKey, connectionPragmas[p.PragmaName]
}

// pragmaSQL turns a Config.Pragmas entry, "name(value)" or
// "schema.name(value)", into its statement. The entry is that and nothing
// else, no blanks, comments or ';', and the value a number, a word or a
// string, so that a DSN cannot smuggle in another statement.
func pragmaSQL(p string) (string, error) {
	open := strings.IndexByte(p, '(')
	if open < 0 || !strings.HasSuffix(p, ")") || !pragmaName(p[:open]) {
		return "", errors.New("want name(value), as in foreign_keys(1)")
	}
	if !pragmaValue(p[open+1 : len(p)-1]) {
		return "", errors.New("the value must be a number, a word or a quoted string ('...')")
	}
	return "PRAGMA " + p, nil
}

// pragmaName reports whether s is a name or schema.name: words and a dot.
func pragmaName(s string) bool {
	sc := sqlscan.NewScanner(s)
	if sc.Next().Kind != sqlscan.Word {
		return false
	}
	switch t := sc.Next(); {
	case t.Kind == sqlscan.EOF:
		return true
	case t.Kind != sqlscan.Punct || s[t.Start:t.End] != ".":
		return false
	}
	return sc.Next().Kind == sqlscan.Word && sc.Next().Kind == sqlscan.EOF
}

// pragmaValue reports whether v is one value: a number with an optional
// sign, a word or a string. A NUL, where SQLite would end the statement,
// is none.
func pragmaValue(v string) bool {
	if strings.IndexByte(v, 0) >= 0 {
		return false
	}
	sc := sqlscan.NewScanner(v)
	t := sc.Next()
	if t.Kind == sqlscan.Punct && (v[t.Start:t.End] == "-" || v[t.Start:t.End] == "+") {
		if t = sc.Next(); t.Kind != sqlscan.Number {
			return false
		}
	}
	switch t.Kind {
	case sqlscan.Number, sqlscan.Word, sqlscan.String:
		return sc.Next().Kind == sqlscan.EOF
	}
	return false
}
