package localdb

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Queryer is what the schema functions read through: a *sql.DB or a
// *sql.Conn of the replica's driver.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// unloadedSQL lists the tables, views and indexes of sqlite_schema that
// the connection's SQLite did not load: libSQL-only schema it cannot read
// (a vector index, see engine.go). Triggers are left out: they act only
// on writes, which never run locally.
const unloadedSQL = `SELECT s.type, s.name FROM sqlite_schema AS s
WHERE (s.type = 'index' AND NOT EXISTS (SELECT 1 FROM pragma_index_list(s.tbl_name) AS i WHERE i.name = s.name))
   OR (s.type IN ('table', 'view') AND NOT EXISTS (SELECT 1 FROM pragma_table_list(s.name) AS t WHERE t.schema = 'main'))
ORDER BY s.name`

// An Object is a table, view or index of the schema.
type Object struct {
	Type string // "table", "view" or "index"
	Name string
}

// Unloaded returns the tables, views and indexes of the file's schema
// that the local SQLite did not load. While it returns any, the local
// schema differs from the primary's: what describes them must come from
// the primary, and an object the local SQLite lacks is no proof that the
// primary lacks it.
func Unloaded(ctx context.Context, q Queryer) ([]Object, error) {
	return queryAll(ctx, q, unloadedSQL, func(o *Object) []any { return []any{&o.Type, &o.Name} })
}

// neverUsed matches SQLite's integrity_check message for a page that no
// loaded b-tree reaches ("Page 6: never used"; "Page 6 is never used"
// before SQLite 3.44).
var neverUsed = regexp.MustCompile(`^Page (\d+)(?::| is) never used$`)

// dbHeader is the line with which integrity_check starts the messages
// about a database.
const dbHeader = "*** in database main ***"

// IntegrityCheck runs PRAGMA integrity_check (or quick_check, if quick)
// over the whole file and returns its rows, with at most limit messages
// (SQLite's default of 100 if limit <= 0), as the primary would answer of
// its own file: the pages of the b-trees the local SQLite did not load
// (Unloaded: libSQL keeps a vector index's b-tree empty and its content
// in shadow tables, which are checked) are not reported as never used.
// A file without problems answers the single row "ok".
func IntegrityCheck(ctx context.Context, q Queryer, quick bool, limit int) ([]string, error) {
	unloaded, err := Unloaded(ctx, q)
	if err != nil {
		return nil, err
	}
	hidden := map[uint64]bool{}
	for _, o := range unloaded {
		pages, err := strings1(ctx, q, "SELECT pageno FROM dbstat WHERE name = ?", o.Name)
		if err != nil {
			return nil, err
		}
		for _, p := range pages {
			n, err := strconv.ParseUint(p, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("localdb: dbstat page %q: %w", p, err)
			}
			hidden[n] = true
		}
	}
	pragma := "integrity_check"
	if quick {
		pragma = "quick_check"
	}
	if limit <= 0 {
		limit = 100
	}
	// The hidden pages' messages must not crowd out the rest.
	rows, err := strings1(ctx, q, fmt.Sprintf("PRAGMA %s(%d)", pragma, limit+len(hidden)))
	if err != nil {
		return nil, err
	}
	// A row holds one or more messages, one a line, the first after the
	// database's header line.
	var out []string
	left := limit
	for _, row := range rows {
		if row == "ok" {
			continue
		}
		var keep []string
		for _, line := range strings.Split(row, "\n") {
			if sub := neverUsed.FindStringSubmatch(line); sub != nil {
				if n, err := strconv.ParseUint(sub[1], 10, 32); err == nil && hidden[n] {
					continue
				}
			}
			if line != dbHeader {
				if left == 0 {
					continue
				}
				left--
			}
			keep = append(keep, line)
		}
		if len(keep) == 0 || (len(keep) == 1 && keep[0] == dbHeader) {
			continue
		}
		if keep[0] != dbHeader && len(out) == 0 {
			keep = append([]string{dbHeader}, keep...)
		}
		out = append(out, strings.Join(keep, "\n"))
	}
	if len(out) == 0 {
		return []string{"ok"}, nil
	}
	return out, nil
}

// strings1 returns the first column of every row of a query, as text.
func strings1(ctx context.Context, q Queryer, query string, args ...any) ([]string, error) {
	return queryAll(ctx, q, query, func(s *string) []any { return []any{s} }, args...)
}

// queryAll returns every row of a query, each scanned into a new T
// through the destinations that dests gives for it.
func queryAll[T any](ctx context.Context, q Queryer, query string, dests func(*T) []any, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(dests(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
