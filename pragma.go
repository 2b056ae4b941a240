package libsql

import (
	"errors"
	"strings"
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

// pragmaSetting reports whether sql is one assignment of a connection
// setting, "PRAGMA [schema.]name = value" or "PRAGMA [schema.]name(value)",
// and returns its key: the lower-case name, with its schema if given.
func pragmaSetting(sql string) (key string, ok bool) {
	s := strings.TrimSpace(sql)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	if len(s) < len("PRAGMA ") || !strings.EqualFold(s[:6], "PRAGMA") || !isSpace(s[6]) {
		return "", false
	}
	s = strings.TrimLeft(s[6:], " \t\r\n")
	name, rest := identPrefix(s)
	if name == "" {
		return "", false
	}
	key = strings.ToLower(name)
	if strings.HasPrefix(rest, ".") {
		var field string
		field, rest = identPrefix(rest[1:])
		if field == "" {
			return "", false
		}
		name = field
		key += "." + strings.ToLower(field)
	}
	rest = strings.TrimLeft(rest, " \t\r\n")
	if rest == "" || (rest[0] != '=' && rest[0] != '(') || strings.ContainsRune(rest, ';') {
		return "", false
	}
	return key, connectionPragmas[strings.ToLower(name)]
}

// pragmaSQL turns a Config.Pragmas entry, "name(value)", into its
// statement. The value is a number, a word or a single-quoted string, so
// that a DSN cannot smuggle in another statement.
func pragmaSQL(p string) (string, error) {
	name, rest := identPrefix(p)
	if name != "" && strings.HasPrefix(rest, ".") {
		var field string
		field, rest = identPrefix(rest[1:])
		if field == "" {
			name = ""
		}
	}
	if name == "" || len(rest) < 3 || rest[0] != '(' || rest[len(rest)-1] != ')' {
		return "", errors.New("want name(value), as in foreign_keys(1)")
	}
	v := rest[1 : len(rest)-1]
	if !simpleValue(v) {
		return "", errors.New("the value must be a number, a word or a quoted string without quotes inside")
	}
	return "PRAGMA " + p, nil
}

// identPrefix splits s after a leading SQL identifier ([A-Za-z_][A-Za-z0-9_]*).
func identPrefix(s string) (ident, rest string) {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return s[:i], s[i:]
}

func simpleValue(v string) bool {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return !strings.ContainsAny(v[1:len(v)-1], "'\x00")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c == '_' || c == '.' || c == '-' || c == '+' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return v != ""
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
