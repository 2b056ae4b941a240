package embedded

import (
	"strings"

	"github.com/gohrana/libsql/internal/sqlscan"
)

// A route is where a statement outside a transaction runs.
type route uint8

const (
	routePrimary route = iota // writes, DDL, libSQL-only SQL, anything in doubt
	routeLocal                // reads the local file can answer
	routeRefuse               // a PRAGMA that would change the local file
)

// classify says where a statement runs when no transaction is open.
// Only what certainly reads runs locally; everything else goes to the
// primary, which is always right, only slower.
func classify(query string) route {
	if strings.EqualFold(sqlscan.FirstKeyword(query), "PRAGMA") {
		return classifyPragma(query)
	}
	if !sqlscan.ReadOnly(query) || needsLibSQL(query) {
		return routePrimary
	}
	return routeLocal
}

// readPragmas take an argument yet only read: the schema, the checks.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true,
	"index_info": true, "index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
}

// actionPragmas act even without an argument.
var actionPragmas = map[string]bool{
	"wal_checkpoint": true, "optimize": true, "shrink_memory": true, "incremental_vacuum": true,
}

// classifyPragma: a PRAGMA that only reads (PRAGMA name, or one of
// readPragmas with its argument) runs locally; one that sets or acts is
// refused, since it would change the local file or a local connection
// only. A PRAGMA of more than one statement goes to the primary.
func classifyPragma(query string) route {
	if sqlscan.ScanParams(query).Multi {
		return routePrimary
	}
	if _, name, ok := sqlscan.Pragma(query); ok {
		if readPragmas[name] {
			return routeLocal
		}
		return routeRefuse
	}
	name := pragmaName(query)
	switch {
	case name == "":
		return routePrimary
	case actionPragmas[name]:
		return routeRefuse
	}
	return routeLocal
}

// pragmaName returns the name of a PRAGMA without a value, in lower case:
// the last word of "PRAGMA [schema.]name", "" if there is anything else.
func pragmaName(query string) string {
	s := sqlscan.NewScanner(query)
	var words []string
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		text := query[t.Start:t.End]
		switch t.Kind {
		case sqlscan.Space, sqlscan.Comment, sqlscan.Semicolon:
		case sqlscan.Word:
			words = append(words, strings.ToLower(text))
		case sqlscan.Punct:
			if text != "." {
				return ""
			}
		default:
			return ""
		}
	}
	if len(words) < 2 || len(words) > 3 {
		return ""
	}
	return words[len(words)-1]
}

// needsLibSQL reports whether a statement names a libSQL-only function or
// table (vector, vector32, vector_distance_cos, vector_top_k,
// libsql_vector_idx, ...), which the local SQLite lacks.
func needsLibSQL(query string) bool {
	s := sqlscan.NewScanner(query)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if t.Kind != sqlscan.Word && t.Kind != sqlscan.Quoted {
			continue
		}
		w := query[t.Start:t.End]
		if t.Kind == sqlscan.Quoted && len(w) >= 2 {
			w = w[1 : len(w)-1]
		}
		if hasPrefixFold(w, "vector") || hasPrefixFold(w, "libsql_") {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// localFallback reports whether a local read failed for want of
// libSQL's own SQL (a function or table the local SQLite lacks, such as a
// vector index's), so the primary should answer it instead.
func localFallback(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such function:") || strings.Contains(msg, "unknown function:") ||
		strings.Contains(msg, "no such module:")
}
