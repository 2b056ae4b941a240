package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Render returns a value as the comparisons see it: its Go type's kind
// and its value, so that 1, 1.0 and '1' differ.
func Render(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case int64:
		return "i:" + strconv.FormatInt(v, 10)
	case float64:
		return "f:" + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "t:" + strconv.Quote(v)
	case []byte:
		return fmt.Sprintf("b:%x", v)
	case bool:
		return "bool:" + strconv.FormatBool(v)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// Query runs q and returns its rows, each rendered as one line.
func Query(ctx context.Context, db Queryer, q string, args ...any) ([]string, error) {
	rows, err := rowsOf(ctx, db, q, args...)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, row := range rows {
		vals := make([]string, len(row))
		for j, v := range row {
			vals[j] = Render(v)
		}
		out[i] = strings.Join(vals, " | ")
	}
	return out, nil
}

// internal reports whether the object named name belongs to SQLite, sqld
// or the driver, not to the statements under test.
func internal(name string) bool {
	return strings.HasPrefix(name, "sqlite_") || strings.HasPrefix(name, "libsql_") || strings.HasPrefix(name, "_litestream")
}

// An object is one row of sqlite_schema.
type object struct {
	typ, name, table, sql string
	rootpage              int64
}

func objects(ctx context.Context, db Queryer) ([]object, error) {
	// In the order of creation: SQLite fires the triggers of an event in
	// the order it loaded them, so a copy must create them in the same.
	rows, err := rowsOf(ctx, db, "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	var out []object
	for _, r := range rows {
		var o object
		var ok [3]bool
		o.typ, ok[0] = r[0].(string)
		o.name, ok[1] = r[1].(string)
		o.table, ok[2] = r[2].(string)
		if ok != [3]bool{true, true, true} {
			return nil, fmt.Errorf("a row of sqlite_schema: %v", r)
		}
		o.rootpage, _ = r[3].(int64)
		o.sql, _ = r[4].(string)
		if !internal(o.name) || o.name == "sqlite_sequence" {
			out = append(out, o)
		}
	}
	return out, nil
}

// Dump returns the schema and the rows of every table of db but the
// internal ones (sqlite_sequence's included), as sorted lines: what two
// databases must agree on to be the same state. With rootpages, the
// tables' and indexes' root pages are part of it: two copies of one file
// agree on them, a database rebuilt from the same SQL need not.
func Dump(ctx context.Context, db Queryer, rootpages bool) ([]string, error) {
	objs, err := objects(ctx, db)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		// sqlite_sequence stays once made, whatever was dropped since:
		// its rows are the state, not its being there.
		if o.name != "sqlite_sequence" {
			line := "schema " + o.typ + " " + o.name + " on " + o.table + ": " + o.sql
			if rootpages {
				line += " @" + strconv.FormatInt(o.rootpage, 10)
			}
			out = append(out, line)
		}
		if o.typ != "table" {
			continue
		}
		q := "SELECT * FROM " + quoteName(o.name)
		if !withoutRowid(o.sql) && o.name != "sqlite_sequence" {
			q = "SELECT _rowid_, * FROM " + quoteName(o.name)
		}
		rows, err := Query(ctx, db, q)
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", o.name, err)
		}
		for _, r := range rows {
			out = append(out, "row "+o.name+": "+r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// withoutRowid reports whether a CREATE TABLE's text makes a WITHOUT
// ROWID table (its last words).
func withoutRowid(createSQL string) bool {
	f := strings.Fields(strings.ToUpper(createSQL))
	return len(f) >= 2 && f[len(f)-2] == "WITHOUT" && strings.TrimRight(f[len(f)-1], ";") == "ROWID"
}

func quoteName(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// Diff describes how two dumps differ: the first lines of each that the
// other lacks, or "" if they are equal.
func Diff(aName string, a []string, bName string, b []string) string {
	var onlyA, onlyB []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || i < len(a) && a[i] < b[j]:
			onlyA = append(onlyA, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return ""
	}
	var s strings.Builder
	show := func(name string, lines []string) {
		fmt.Fprintf(&s, "only in %s (%d):\n", name, len(lines))
		for k, l := range lines {
			if k == 8 {
				fmt.Fprintf(&s, "  ...\n")
				break
			}
			fmt.Fprintf(&s, "  %.200s\n", l)
		}
	}
	show(aName, onlyA)
	show(bName, onlyB)
	return s.String()
}

// Copy makes dst (a database with no objects of its own but maybe
// sqlite_sequence) hold src's state: its tables with their rows (and
// rowids), sqlite_sequence, then its indexes, views and triggers.
func Copy(ctx context.Context, src Queryer, dst *sql.DB) error {
	objs, err := objects(ctx, src)
	if err != nil {
		return err
	}
	tx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	order := map[string]int{"table": 0, "index": 1, "view": 2, "trigger": 3}
	slices.SortStableFunc(objs, func(a, b object) int { return order[a.typ] - order[b.typ] })
	for _, o := range objs {
		if o.sql == "" || o.name == "sqlite_sequence" {
			continue // an index of a constraint, made with its table
		}
		if _, err := tx.ExecContext(ctx, o.sql); err != nil {
			return fmt.Errorf("copy: %s: %w", o.sql, err)
		}
		if o.typ == "table" {
			if err := copyRows(ctx, src, tx, o); err != nil {
				return err
			}
		}
	}
	seq, err := rowsOf(ctx, src, "SELECT name, seq FROM sqlite_sequence")
	if err == nil && len(seq) > 0 {
		// The rows copied with their rowids moved dst's own.
		if _, err := tx.ExecContext(ctx, "DELETE FROM sqlite_sequence"); err != nil {
			return fmt.Errorf("copy sqlite_sequence: %w", err)
		}
		for _, r := range seq {
			if _, err := tx.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", r[0], r[1]); err != nil {
				return fmt.Errorf("copy sqlite_sequence: %w", err)
			}
		}
	}
	return tx.Commit()
}

func copyRows(ctx context.Context, src Queryer, tx *sql.Tx, o object) error {
	cols, err := rowsOf(ctx, src, "SELECT name FROM pragma_table_info(?) ORDER BY cid", o.name)
	if err != nil {
		return err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteName(c[0].(string))
	}
	list := strings.Join(names, ", ")
	if !withoutRowid(o.sql) {
		list = "_rowid_, " + list
	}
	rows, err := rowsOf(ctx, src, "SELECT "+list+" FROM "+quoteName(o.name))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(rows[0])), ", ")
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+quoteName(o.name)+" ("+list+") VALUES ("+marks+")")
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rows {
		for i, v := range r {
			if b, ok := v.([]byte); ok && b == nil {
				r[i] = []byte{} // modernc.org/sqlite reads x'' so; bound, it would be NULL
			}
		}
		if _, err := stmt.ExecContext(ctx, r...); err != nil {
			return fmt.Errorf("copy a row of %s: %w", o.name, err)
		}
	}
	return nil
}
