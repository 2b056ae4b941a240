package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The generator writes SQL that SQLite and sqld's parser both take and
// that means the same on both: no function newer than sqld's SQLite, no
// 1_000, no double-quoted strings, and nothing non-deterministic (no
// random(), no time), since a statement replays on the primary and must
// give there what it gave locally. Every read has a total ORDER BY over
// its output, so that its rows come in one order wherever it runs.

// Limits of a namespace's schema and tables.
const (
	maxTables   = 5
	maxViews    = 3
	maxIndexes  = 6
	maxTriggers = 3
	maxRows     = 150 // past it, deletes and updates outweigh inserts
)

// Gen generates random statements. It is deterministic for its seed.
type Gen struct {
	r     *rand.Rand
	args  []any
	vocab []string
}

// NewGen returns a generator seeded with seed.
func NewGen(seed uint64) *Gen {
	return &Gen{
		r:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		vocab: []string{"a", "b", "c", "ab", "ba", "abc", "B", "x y", "", "zz", "a%", "é"},
	}
}

// Intn returns a random int in [0, n).
func (g *Gen) Intn(n int) int { return g.r.IntN(n) }

// Chance reports true with probability p.
func (g *Gen) Chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *Gen, s []T) T { return s[g.r.IntN(len(s))] }

// A Stmt is one generated statement.
type Stmt struct {
	SQL  string
	Args []any
	Read bool // it returns rows to compare
	DDL  bool // it changes the schema
}

// Statement returns a random statement on the objects of namespace ns
// (whose schema is s): DDL, a write or a read.
func (g *Gen) Statement(s *Schema, ns string) Stmt {
	g.args = nil
	var st Stmt
	switch n := g.r.IntN(100); {
	case len(s.Tables) == 0 || n < 7:
		st = g.ddl(s, ns)
	case n < 52:
		st = Stmt{SQL: g.write(s)}
	default:
		st = Stmt{SQL: g.read(s), Read: true}
	}
	if st.SQL == "" {
		st = Stmt{SQL: g.read(s), Read: true}
		if st.SQL == "" {
			st = Stmt{SQL: g.createTable(s, ns), DDL: true}
		}
	}
	st.Args = g.args
	return st
}

// freeName returns a name kind+n in ns that s does not use, or "".
func freeName(s *Schema, ns, kind string, limit int) string {
	for n := range limit {
		name := ns + kind + strconv.Itoa(n)
		if !s.Has(name) {
			return name
		}
	}
	return ""
}

func (g *Gen) ddl(s *Schema, ns string) Stmt {
	var q string
	switch n := g.r.IntN(100); {
	case len(s.Tables) == 0 || n < 22:
		q = g.createTable(s, ns)
	case n < 42:
		q = g.createIndex(s, ns)
	case n < 52:
		q = g.createView(s, ns)
	case n < 62:
		q = g.createTrigger(s, ns)
	case n < 80:
		q = g.alter(s, ns)
	default:
		q = g.drop(s)
	}
	if q == "" {
		q = g.createTable(s, ns)
	}
	if q == "" {
		return Stmt{}
	}
	return Stmt{SQL: q, DDL: true}
}

var colTypes = []string{"INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC", ""}

func (g *Gen) createTable(s *Schema, ns string) string {
	name := freeName(s, ns, "t", maxTables)
	if name == "" {
		return ""
	}
	ncols := 2 + g.r.IntN(4)
	cols := make([]string, ncols)
	types := make([]string, ncols)
	for i := range cols {
		types[i] = pick(g, colTypes)
		cols[i] = "c" + strconv.Itoa(i)
	}
	var defs []string
	var pk []string
	style := g.r.IntN(4)
	for i, c := range cols {
		d := strings.TrimSpace(c + " " + types[i])
		switch {
		case style == 0 && i == 0:
			d = c + " INTEGER PRIMARY KEY"
			if g.Chance(0.3) {
				d += " AUTOINCREMENT"
			}
		case i > 0 && g.Chance(0.12):
			d += " UNIQUE"
		case i > 0 && g.Chance(0.12):
			d += " NOT NULL DEFAULT " + g.literal(types[i])
		case i > 0 && g.Chance(0.1):
			d += " DEFAULT " + g.literal(types[i])
		case i > 0 && g.Chance(0.05):
			d += " CHECK (" + c + " IS NULL OR length(" + c + ") < 6)"
		}
		defs = append(defs, d)
	}
	switch style {
	case 1, 2: // a declared key: a rowid table's, or WITHOUT ROWID's
		k := 1 + g.r.IntN(min(2, ncols))
		pk = cols[:k]
		defs = append(defs, "PRIMARY KEY ("+strings.Join(pk, ", ")+")")
	}
	q := "CREATE TABLE " + name + " (" + strings.Join(defs, ", ") + ")"
	if style == 2 {
		q += " WITHOUT ROWID"
	}
	return q
}

// indexPart returns one part of an index's key on t: a column, maybe
// DESC, or an expression of one.
func (g *Gen) indexPart(t *Table) string {
	c := pick(g, t.Cols).Name
	switch g.r.IntN(6) {
	case 0:
		return "lower(" + c + ")"
	case 1:
		return c + " DESC"
	case 2:
		return "length(" + c + ")"
	}
	return c
}

// newObject names a new object of kind in ns and picks the table it is
// on, or reports false when s already has limit objects of that kind
// (have): the start of createIndex, createView and createTrigger.
func (g *Gen) newObject(s *Schema, ns, kind string, have, limit int) (name string, on Table, ok bool) {
	if have >= limit {
		return "", Table{}, false
	}
	return freeName(s, ns, kind, limit), pick(g, s.Tables), true
}

func (g *Gen) createIndex(s *Schema, ns string) string {
	name, t, ok := g.newObject(s, ns, "i", len(s.Indexes), maxIndexes)
	if !ok {
		return ""
	}
	parts := []string{g.indexPart(&t)}
	if g.Chance(0.4) {
		parts = append(parts, g.indexPart(&t))
	}
	q := "CREATE "
	if g.Chance(0.2) {
		q += "UNIQUE "
	}
	q += "INDEX " + name + " ON " + t.Name + " (" + strings.Join(parts, ", ") + ")"
	if g.Chance(0.25) {
		q += " WHERE " + g.cond(&t, "", 1)
	}
	return q
}

func (g *Gen) createView(s *Schema, ns string) string {
	name, t, ok := g.newObject(s, ns, "v", len(s.Views), maxViews)
	if !ok {
		return ""
	}
	if g.Chance(0.3) {
		c := pick(g, t.Cols).Name
		return "CREATE VIEW " + name + " AS SELECT " + c + " AS k, count(*) AS n, max(" + pick(g, t.Cols).Name + ") AS m FROM " + t.Name + " GROUP BY " + c
	}
	cols := g.someCols(&t)
	return "CREATE VIEW " + name + " AS SELECT " + strings.Join(cols, ", ") + " FROM " + t.Name + " WHERE " + g.cond(&t, "", 2)
}

func (g *Gen) createTrigger(s *Schema, ns string) string {
	if len(s.Tables) < 2 {
		return ""
	}
	name, on, ok := g.newObject(s, ns, "r", len(s.Triggers), maxTriggers)
	if !ok {
		return ""
	}
	var other Table
	for {
		if other = pick(g, s.Tables); other.Name != on.Name {
			break
		}
	}
	event := pick(g, []string{"INSERT", "UPDATE", "DELETE"})
	row := "new"
	if event == "DELETE" {
		row = "old"
	}
	q := "CREATE TRIGGER " + name + " " + pick(g, []string{"AFTER", "BEFORE"}) + " " + event + " ON " + on.Name
	if g.Chance(0.3) {
		q += " WHEN " + row + "." + pick(g, on.Cols).Name + " IS NOT NULL"
	}
	q += " BEGIN "
	for range 1 + g.r.IntN(2) {
		switch g.r.IntN(3) {
		case 0:
			c := pick(g, other.Cols).Name
			q += "INSERT OR IGNORE INTO " + other.Name + " (" + c + ") VALUES (" + row + "." + pick(g, on.Cols).Name + "); "
		case 1:
			c := pick(g, other.Cols).Name
			q += "UPDATE " + other.Name + " SET " + c + " = " + row + "." + pick(g, on.Cols).Name + " WHERE " + g.cond(&other, "", 1) + "; "
		default:
			q += "DELETE FROM " + other.Name + " WHERE " + g.cond(&other, "", 1) + "; "
		}
	}
	return q + "END"
}

func (g *Gen) alter(s *Schema, ns string) string {
	t := pick(g, s.Tables)
	switch g.r.IntN(4) {
	case 0:
		if len(t.Cols) >= 7 {
			return ""
		}
		for i := len(t.Cols); ; i++ {
			c := "c" + strconv.Itoa(i)
			if !slices.Contains(t.ColNames(), c) {
				typ := pick(g, colTypes)
				q := "ALTER TABLE " + t.Name + " ADD COLUMN " + strings.TrimSpace(c+" "+typ)
				if g.Chance(0.4) {
					v := g.goValue(typ)
					if f, ok := v.(float64); ok && typ == "" && f == float64(int64(f)) {
						// The rows before the column read its default
						// from the schema: sqld's SQLite reads DEFAULT 3.0
						// of a column without affinity as 3, the local
						// SQLite as 3.0 (docs/EMBEDDED.md, Limits).
						v = f + 0.5
					}
					q += " DEFAULT " + Literal(v)
				}
				return q
			}
		}
	case 1:
		c := pick(g, t.Cols).Name
		for i := 0; ; i++ {
			n := "c" + strconv.Itoa(i)
			if !slices.Contains(t.ColNames(), n) {
				return "ALTER TABLE " + t.Name + " RENAME COLUMN " + c + " TO " + n
			}
		}
	case 2:
		if len(t.Cols) < 3 {
			return ""
		}
		return "ALTER TABLE " + t.Name + " DROP COLUMN " + t.Cols[len(t.Cols)-1].Name
	}
	if name := freeName(s, ns, "t", maxTables); name != "" {
		return "ALTER TABLE " + t.Name + " RENAME TO " + name
	}
	return ""
}

func (g *Gen) drop(s *Schema) string {
	switch n := g.r.IntN(10); {
	case n < 3 && len(s.Indexes) > 0:
		return "DROP INDEX " + pick(g, s.Indexes)
	case n < 5 && len(s.Views) > 0:
		return "DROP VIEW " + pick(g, s.Views).Name
	case n < 7 && len(s.Triggers) > 0:
		return "DROP TRIGGER " + pick(g, s.Triggers)
	case len(s.Tables) > 2:
		return "DROP TABLE " + pick(g, s.Tables).Name
	}
	return ""
}

// write returns an INSERT, REPLACE, upsert, UPDATE or DELETE.
func (g *Gen) write(s *Schema) string {
	t := pick(g, s.Tables)
	n := g.r.IntN(100)
	if t.Rows > maxRows {
		n = 60 + n%40 // updates and deletes
	}
	switch {
	case n < 30:
		return g.insert(&t, pick(g, []string{"INSERT", "INSERT", "INSERT OR IGNORE", "INSERT OR REPLACE", "REPLACE"}))
	case n < 40:
		return g.upsert(&t)
	case n < 48 && len(s.Tables) > 1:
		return g.insertSelect(s, &t)
	case n < 75:
		return g.update(&t)
	default:
		return "DELETE FROM " + t.Name + " WHERE " + g.cond(&t, "", 2)
	}
}

func (g *Gen) insert(t *Table, verb string) string {
	cols := g.someCols(t)
	var rows []string
	for range 1 + g.r.IntN(3) {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = g.value(t.colType(c))
		}
		rows = append(rows, "("+strings.Join(vals, ", ")+")")
	}
	return verb + " INTO " + t.Name + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Join(rows, ", ")
}

func (g *Gen) upsert(t *Table) string {
	q := g.insert(t, "INSERT")
	if len(t.Unique) == 0 || g.Chance(0.2) {
		return q + " ON CONFLICT DO NOTHING"
	}
	target := pick(g, t.Unique)
	var set []string
	for _, c := range t.Cols {
		if !slices.Contains(target, c.Name) && g.Chance(0.5) {
			e := "excluded." + c.Name
			switch g.r.IntN(3) {
			case 1:
				e = c.Name
			case 2:
				e = g.value(c.Type) // only now: a ? adds its argument
			}
			set = append(set, c.Name+" = "+e)
		}
	}
	q += " ON CONFLICT (" + strings.Join(target, ", ") + ")"
	if len(set) == 0 {
		return q + " DO NOTHING"
	}
	q += " DO UPDATE SET " + strings.Join(set, ", ")
	if g.Chance(0.3) {
		q += " WHERE " + g.cond(t, "", 1)
	}
	return q
}

func (g *Gen) insertSelect(s *Schema, t *Table) string {
	src := pick(g, s.Tables)
	cols := g.someCols(t)
	exprs := make([]string, len(cols))
	for i := range cols {
		if g.Chance(0.8) {
			exprs[i] = pick(g, src.Cols).Name
		} else {
			exprs[i] = g.value(t.colType(cols[i]))
		}
	}
	verb := pick(g, []string{"INSERT", "INSERT OR IGNORE", "INSERT OR REPLACE"})
	return verb + " INTO " + t.Name + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(exprs, ", ") +
		" FROM " + src.Name + " WHERE " + g.cond(&src, "", 1) + " ORDER BY " + ordinals(len(exprs)) + " LIMIT " + strconv.Itoa(1+g.r.IntN(5))
}

func (g *Gen) update(t *Table) string {
	var set []string
	for range 1 + g.r.IntN(2) {
		c := pick(g, t.Cols)
		var e string
		switch g.r.IntN(4) {
		case 0:
			e = c.Name + " || 'u'"
		case 1:
			e = "coalesce(" + c.Name + ", 0) + 1"
		default:
			e = g.value(c.Type)
		}
		set = append(set, c.Name+" = "+e)
	}
	verb := pick(g, []string{"UPDATE", "UPDATE", "UPDATE OR IGNORE", "UPDATE OR REPLACE"})
	return verb + " " + t.Name + " SET " + strings.Join(set, ", ") + " WHERE " + g.cond(t, "", 2)
}

// read returns a query with a total ORDER BY over its output.
func (g *Gen) read(s *Schema) string {
	if len(s.Tables) == 0 {
		return ""
	}
	t := pick(g, s.Tables)
	switch n := g.r.IntN(100); {
	case n < 30:
		cols := g.someCols(&t)
		q := "SELECT " + strings.Join(cols, ", ") + " FROM " + t.Name
		if g.Chance(0.8) {
			q += " WHERE " + g.cond(&t, "", 2)
		}
		q += " ORDER BY " + orderBy(g, len(cols))
		if g.Chance(0.3) {
			q += " LIMIT " + strconv.Itoa(1+g.r.IntN(10))
		}
		return q
	case n < 45:
		k := pick(g, t.Cols).Name
		v := pick(g, t.Cols).Name
		return "SELECT " + k + ", count(*), count(" + v + "), min(" + v + "), max(" + v + "), total(length(" + v + ")) FROM " + t.Name +
			" WHERE " + g.cond(&t, "", 1) + " GROUP BY " + k + " ORDER BY 1, 2, 3, 4, 5, 6"
	case n < 55:
		return "SELECT count(*), sum(typeof(" + pick(g, t.Cols).Name + ") = 'null') FROM " + t.Name + " WHERE " + g.cond(&t, "", 2)
	case n < 70 && len(s.Tables) > 1:
		u := pick(g, s.Tables)
		a, b := pick(g, t.Cols).Name, pick(g, u.Cols).Name
		join := pick(g, []string{"JOIN", "LEFT JOIN"})
		return "SELECT x." + a + ", y." + b + ", x." + pick(g, t.Cols).Name + " FROM " + t.Name + " AS x " + join + " " + u.Name +
			" AS y ON x." + a + " = y." + b + " WHERE " + g.cond(&t, "x", 1) + " ORDER BY 1, 2, 3"
	case n < 82 && len(s.Tables) > 1:
		u := pick(g, s.Tables)
		c := pick(g, t.Cols).Name
		if g.Chance(0.5) {
			sub := "SELECT " + pick(g, u.Cols).Name + " FROM " + u.Name + " WHERE " + g.cond(&u, "", 1)
			return "SELECT " + c + " FROM " + t.Name + " WHERE " + c + " IN (" + sub + ") ORDER BY 1"
		}
		return "SELECT " + c + ", (SELECT count(*) FROM " + u.Name + " WHERE " + pick(g, u.Cols).Name + " = " + t.Name + "." + c + ") FROM " + t.Name + " ORDER BY 1, 2"
	case n < 92 && len(s.Views) > 0:
		v := pick(g, s.Views)
		if len(v.Cols) == 0 {
			return "SELECT * FROM " + v.Name
		}
		return "SELECT * FROM " + v.Name + " ORDER BY " + ordinals(len(v.Cols))
	}
	c := pick(g, t.Cols).Name
	return "SELECT DISTINCT " + c + " FROM " + t.Name + " WHERE " + g.cond(&t, "", 1) + " ORDER BY 1 " + pick(g, []string{"ASC", "DESC"})
}

// someCols returns a random non-empty subset of t's columns, in order.
func (g *Gen) someCols(t *Table) []string {
	var cols []string
	for _, c := range t.Cols {
		if g.Chance(0.6) {
			cols = append(cols, c.Name)
		}
	}
	if len(cols) == 0 {
		cols = []string{pick(g, t.Cols).Name}
	}
	return cols
}

func ordinals(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ", ")
}

// orderBy orders by every output column, the first maybe descending.
func orderBy(g *Gen, n int) string {
	s := ordinals(n)
	if g.Chance(0.3) {
		s = strings.Replace(s, "1", "1 DESC", 1)
	}
	return s
}

func (t *Table) colType(name string) string {
	for _, c := range t.Cols {
		if c.Name == name {
			return c.Type
		}
	}
	return ""
}

// cond returns a condition on t's columns (qualified by alias if not
// ""), of at most depth levels of AND and OR.
func (g *Gen) cond(t *Table, alias string, depth int) string {
	if depth > 0 && g.Chance(0.3) {
		op := pick(g, []string{" AND ", " OR "})
		return "(" + g.cond(t, alias, depth-1) + op + g.cond(t, alias, depth-1) + ")"
	}
	c := pick(g, t.Cols)
	name := c.Name
	if alias != "" {
		name = alias + "." + name
	}
	switch g.r.IntN(9) {
	case 0:
		return name + " IS NULL"
	case 1:
		return name + " IS NOT NULL"
	case 2:
		return name + " BETWEEN " + g.value(c.Type) + " AND " + g.value(c.Type)
	case 3:
		return name + " IN (" + g.value(c.Type) + ", " + g.value(c.Type) + ")"
	case 4:
		return "lower(" + name + ") LIKE 'a%'"
	case 5:
		return "length(" + name + ") > " + strconv.Itoa(g.r.IntN(3))
	case 6:
		return "NOT (" + name + " = " + g.value(c.Type) + ")"
	}
	return name + " " + pick(g, []string{"=", "<", ">", "<=", ">=", "<>"}) + " " + g.value(c.Type)
}

// value returns a value of about type typ: a literal or, sometimes, a ?
// with its argument appended to g.args.
func (g *Gen) value(typ string) string {
	if g.Chance(0.35) {
		g.args = append(g.args, g.goValue(typ))
		return "?"
	}
	return g.literal(typ)
}

func (g *Gen) goValue(typ string) any {
	if g.Chance(0.08) {
		return nil
	}
	switch typ {
	case "INTEGER":
		return int64(g.r.IntN(24) - 3)
	case "REAL":
		return float64(g.r.IntN(40)-5) / 4
	case "TEXT":
		return pick(g, g.vocab)
	case "BLOB":
		return []byte(pick(g, g.vocab))
	}
	switch g.r.IntN(3) {
	case 0:
		return int64(g.r.IntN(24) - 3)
	case 1:
		return float64(g.r.IntN(40)-5) / 4
	}
	return pick(g, g.vocab)
}

func (g *Gen) literal(typ string) string {
	return Literal(g.goValue(typ))
}

// Literal returns v (nil, int64, float64, string or []byte) as an SQL
// literal.
func Literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("x'%x'", v)
	}
	panic(fmt.Sprintf("difftest: no literal for %T", v))
}
