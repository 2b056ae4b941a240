package embedded

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/sqlscan"
)

// A route is where a statement outside a transaction runs.
type route uint8

const (
	routePrimary route = iota // writes, DDL, libSQL-only SQL, anything in doubt
	routeLocal                // reads the local file can answer
	routeRefuse               // a PRAGMA that would change the local file
	routeCheck                // an integrity check of the whole local file
	routeTables               // a description of tables: local while every table and view loaded
	routeIndexes              // a description of indexes: local while every object loaded
)

// classify says where a statement runs when no transaction is open,
// from its text query and what the driver's rules say of it (st, from
// sqlscan.Analyze). Only what certainly reads runs locally; everything
// else goes to the primary, which is always right, only slower.
func classify(query string, st *sqlscan.Statement) route {
	if strings.EqualFold(st.Keyword, "PRAGMA") {
		return classifyPragma(query, st)
	}
	if !st.ReadOnly {
		return routePrimary
	}
	return names(query)
}

// readPragmas take an argument yet only read: the schema, the checks.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true,
	"index_info": true, "index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
}

// schemaPragmas describe the schema's objects, as PRAGMAs or as the
// table-valued functions pragma_<name>: a local schema that lacks an
// object the primary's has (localdb.Unloaded) would describe it wrongly.
// Each maps to the route that says which objects it needs.
var schemaPragmas = map[string]route{
	"table_info": routeTables, "table_xinfo": routeTables, "table_list": routeTables,
	"foreign_key_list": routeTables, "foreign_key_check": routeTables,
	"index_list": routeIndexes, "index_info": routeIndexes, "index_xinfo": routeIndexes,
}

// checkPragmas check the whole file without a table argument.
var checkPragmas = map[string]bool{"integrity_check": true, "quick_check": true}

// actionPragmas act even without an argument.
var actionPragmas = map[string]bool{
	"wal_checkpoint": true, "optimize": true, "shrink_memory": true, "incremental_vacuum": true,
}

// classifyPragma: a PRAGMA that only reads (PRAGMA name, or one of
// readPragmas with its argument) runs locally; one that sets or acts is
// refused, since it would change the local file or a local connection
// only. A PRAGMA of more than one statement goes to the primary.
func classifyPragma(query string, st *sqlscan.Statement) route {
	if st.Multi {
		return routePrimary
	}
	if name := st.PragmaName; st.SetsPragma() {
		switch {
		case checkPragmas[name]:
			if _, err := checkLimit(query); err == nil {
				return routeCheck
			}
			return routeLocal // a table's check: the table and its indexes
		case schemaPragmas[name] != 0:
			return schemaPragmas[name]
		case readPragmas[name]:
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
	case checkPragmas[name]:
		return routeCheck
	case schemaPragmas[name] != 0:
		return schemaPragmas[name]
	}
	return routeLocal
}

// checkLimit returns the limit of an integrity_check or quick_check
// PRAGMA: 0 without an argument, the number given, or an error if the
// argument is not a number (a table's name).
func checkLimit(query string) (int, error) {
	s := sqlscan.NewScanner(query)
	open := false
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		text := query[t.Start:t.End]
		switch {
		case t.Kind == sqlscan.Punct && (text == "(" || text == "="):
			open = true
		case open && t.Kind == sqlscan.Number:
			return strconv.Atoi(text)
		case open && t.Kind != sqlscan.Space && t.Kind != sqlscan.Comment:
			return 0, fmt.Errorf("embedded: %q is not a limit", text)
		}
	}
	return 0, nil
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

// names returns the route of a read by the names it uses: the primary
// for a libsql_* function (libsql_server_version, libsql_vector_idx),
// which the local SQLite lacks; routeTables or routeIndexes for a
// table-valued function that describes the schema (pragma_index_list);
// else the local file. libSQL's vector SQL (vector32, vector_extract,
// vector_distance_cos, vector_top_k, ...) runs locally (localdb); a
// function the local file lacks fails there with "no such function" and
// goes to the primary (localFallback).
func names(query string) route {
	found := routeLocal
	s := sqlscan.NewScanner(query)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if t.Kind != sqlscan.Word && t.Kind != sqlscan.Quoted {
			continue
		}
		w := query[t.Start:t.End]
		if t.Kind == sqlscan.Quoted && len(w) >= 2 {
			w = w[1 : len(w)-1]
		}
		switch {
		case hasPrefixFold(w, "libsql_"):
			return routePrimary
		case hasPrefixFold(w, "pragma_"):
			if r := schemaPragmas[strings.ToLower(w[len("pragma_"):])]; r > found {
				found = r
			}
		}
	}
	return found
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// localFallback reports whether a local read failed for want of
// libSQL's own SQL (a function or table the local SQLite lacks), so the
// primary should answer it instead.
func localFallback(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such function:") || strings.Contains(msg, "unknown function:") ||
		strings.Contains(msg, "no such module:")
}

// missingObject reports whether a local read failed for want of a table,
// view or index: the primary should answer it if the local schema lacks
// objects the primary has (localdb.Unloaded).
func missingObject(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table:") || strings.Contains(msg, "no such index:")
}
