// Package difftest is the randomized differential tester of embedded
// replicas: it generates random SQL (DDL, DML, reads of many shapes) and
// Sync calls for one or more actors (replicas with and without offline
// writes, clients of the primary), runs them, and holds every local
// answer against a shadow SQLite database that ran the same statements,
// every synced file against the primary, and the primary's record of
// each replica's transactions against what was committed and what was
// reported as a conflict. A run is an op log (Script) that can be written
// out, replayed and shrunk.
//
// The package holds the parts that need no server: the schema model, the
// generator, the op log's text form, result dumps, the copy of a database
// into a shadow, and the shrinker. The runner, which starts sqld and
// opens replicas, is embedded's difftest_test.go.
package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// A Table is what the generator knows of a table.
type Table struct {
	Name         string
	Cols         []Column
	PK           []string // the declared primary key's columns, in order
	WithoutRowid bool
	Unique       [][]string // column lists with a UNIQUE constraint or full unique index: upsert targets
	Rows         int
}

// A Column is a table's column and its declared type.
type Column struct{ Name, Type string }

// ColNames returns the table's column names.
func (t *Table) ColNames() []string {
	out := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		out[i] = c.Name
	}
	return out
}

// A View is a view and its column names.
type View struct {
	Name string
	Cols []string
}

// Schema is what the generator knows of a database: the objects of one
// namespace (a name prefix).
type Schema struct {
	Tables   []Table
	Views    []View
	Indexes  []string
	Triggers []string
}

// Table returns the table named name, or nil.
func (s *Schema) Table(name string) *Table {
	for i := range s.Tables {
		if s.Tables[i].Name == name {
			return &s.Tables[i]
		}
	}
	return nil
}

// Has reports whether the schema has an object named name.
func (s *Schema) Has(name string) bool {
	if s.Table(name) != nil || slices.Contains(s.Indexes, name) || slices.Contains(s.Triggers, name) {
		return true
	}
	return slices.ContainsFunc(s.Views, func(v View) bool { return v.Name == name })
}

// Queryer is what ReadSchema reads through.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ReadSchema reads the objects whose names start with prefix, but
// excluded, from db.
func ReadSchema(ctx context.Context, db Queryer, prefix string, excluded ...string) (Schema, error) {
	var s Schema
	objs, err := rowsOf(ctx, db, "SELECT type, name FROM sqlite_schema WHERE name LIKE ? ESCAPE '\\' ORDER BY name",
		strings.ReplaceAll(prefix, "_", "\\_")+"%")
	if err != nil {
		return s, err
	}
	for _, o := range objs {
		typ, name := o[0].(string), o[1].(string)
		if slices.Contains(excluded, name) {
			continue
		}
		switch typ {
		case "table":
			t, err := readTable(ctx, db, name)
			if err != nil {
				return s, err
			}
			s.Tables = append(s.Tables, t)
		case "view":
			cols, err := rowsOf(ctx, db, "SELECT name FROM pragma_table_info(?) ORDER BY cid", name)
			if err != nil {
				// A view over a dropped table: it stays in the schema
				// and fails to read, as on the primary.
				s.Views = append(s.Views, View{Name: name})
				continue
			}
			v := View{Name: name}
			for _, c := range cols {
				v.Cols = append(v.Cols, c[0].(string))
			}
			s.Views = append(s.Views, v)
		case "index":
			s.Indexes = append(s.Indexes, name)
		case "trigger":
			s.Triggers = append(s.Triggers, name)
		}
	}
	return s, nil
}

func readTable(ctx context.Context, db Queryer, name string) (Table, error) {
	t := Table{Name: name}
	cols, err := rowsOf(ctx, db, "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", name)
	if err != nil {
		return t, err
	}
	if len(cols) == 0 {
		// Dropped since sqlite_schema was read (a schema read over
		// HTTP is one request per query, not one snapshot).
		return t, fmt.Errorf("table %s: no columns", name)
	}
	pk := map[int64]string{}
	for _, c := range cols {
		t.Cols = append(t.Cols, Column{Name: c[0].(string), Type: c[1].(string)})
		if n := c[2].(int64); n > 0 {
			pk[n] = c[0].(string)
		}
	}
	for i := int64(1); i <= int64(len(pk)); i++ {
		t.PK = append(t.PK, pk[i])
	}
	wr, err := rowsOf(ctx, db, "SELECT wr FROM pragma_table_list(?) WHERE schema = 'main'", name)
	if err != nil {
		return t, err
	}
	t.WithoutRowid = len(wr) == 1 && wr[0][0].(int64) == 1
	idx, err := rowsOf(ctx, db, "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND NOT partial ORDER BY name", name)
	if err != nil {
		return t, err
	}
	for _, ix := range idx {
		cols, err := rowsOf(ctx, db, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", ix[0].(string))
		if err != nil {
			return t, err
		}
		var u []string
		for _, c := range cols {
			n, ok := c[0].(string)
			if !ok {
				u = nil // an expression: no conflict target
				break
			}
			u = append(u, n)
		}
		if len(u) > 0 {
			t.Unique = append(t.Unique, u)
		}
	}
	if len(t.PK) > 0 && !slices.ContainsFunc(t.Unique, func(u []string) bool { return slices.Equal(u, t.PK) }) {
		t.Unique = append(t.Unique, t.PK) // a rowid alias has no index
	}
	n, err := rowsOf(ctx, db, "SELECT count(*) FROM "+name)
	if err != nil {
		return t, err
	}
	t.Rows = int(n[0][0].(int64))
	return t, nil
}

// rowsOf runs a query and returns its rows.
func rowsOf(ctx context.Context, db Queryer, q string, args ...any) ([][]any, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}
