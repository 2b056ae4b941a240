package localdb

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gohrana/libsql/embedded/internal/vector"
	"github.com/gohrana/libsql/sqlscan"
	"modernc.org/sqlite"
	"modernc.org/sqlite/vtab"
)

// vectorFuncs are libSQL's vector SQL functions, each with the type it
// builds (0 for the others). libSQL declares them all deterministic.
var vectorFuncs = []struct {
	name string
	t    vector.Type
}{
	{"vector", vector.Float32}, {"vector32", vector.Float32}, {"vector64", vector.Float64},
	{"vector1bit", vector.Float1Bit}, {"vector8", vector.Float8}, {"vector16", vector.Float16},
	{"vectorb16", vector.FloatB16},
}

// registerVector registers libSQL's vector functions and the module
// behind vector_top_k on d.
func registerVector(d *sqlite.Driver) {
	for _, f := range vectorFuncs {
		t := f.t
		d.MustRegisterDeterministicScalarFunction(f.name, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			return vector.Construct(args[0], t)
		})
	}
	d.MustRegisterDeterministicScalarFunction("vector_extract", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return vector.Extract(args[0])
	})
	// The distances read their arguments in place (VolatileArgs): an
	// ORDER BY vector_distance_cos(col, ?) or vector_top_k's scan then
	// copies no row's blob.
	for name, m := range map[string]vector.Metric{"vector_distance_cos": vector.Cosine, "vector_distance_l2": vector.L2} {
		if err := d.RegisterFunction(name, &sqlite.FunctionImpl{
			NArgs: 2, Deterministic: true, VolatileArgs: true,
			Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				return vector.Distance(m, args[0], args[1])
			},
		}); err != nil {
			panic(err)
		}
	}
	if err := d.RegisterModule(topKModuleName, topKModule{}); err != nil {
		panic(err)
	}
}

// topKDriver is the replica's driver: modernc.org/sqlite's, with each
// connection's vector_top_k created once it is open (a connection hook
// runs before the connection has its modules).
type topKDriver struct{ *sqlite.Driver }

func (d topKDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.Driver.Open(dsn)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(sqliteConn)
	if !ok {
		c.Close()
		return nil, errors.New("localdb: the sqlite connection lacks a method of database/sql's")
	}
	if err := reloadSchema(sc); err != nil {
		c.Close()
		return nil, err
	}
	id, err := attachTopK(sc, dsn)
	if err != nil {
		conns.Delete(id)
		c.Close()
		return nil, fmt.Errorf("localdb: vector_top_k: %w", err)
	}
	return &replicaConn{sqliteConn: sc, id: id}, nil
}

// reloadSchema makes a new connection load the schema again, now that it
// has every function of the driver. modernc.org/sqlite runs the DSN's
// pragmas before it registers the driver's functions, and one that needs
// the schema (synchronous) loads it then; SQLite lets a function it does
// not know pass while it loads a schema, so a vector index would load
// with libsql_vector_idx unknown and every write to its table would then
// call the stand-in, and fail (engine.go). Loaded again, the index is
// refused as designed (non-deterministic) and left out.
func reloadSchema(c sqlite.ExecQuerierContext) error {
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "PRAGMA writable_schema = RESET", nil); err != nil {
		return fmt.Errorf("localdb: reload the schema: %w", err)
	}
	if _, err := c.ExecContext(ctx, "PRAGMA writable_schema = ON", nil); err != nil {
		return fmt.Errorf("localdb: reload the schema: %w", err)
	}
	return nil
}

// vector_top_k is a table-valued function in libSQL: an eponymous virtual
// table. modernc.org/sqlite's Go modules cannot be eponymous (their
// xCreate differs from xConnect), so every connection gets a TEMP virtual
// table named vector_top_k instead, which SQLite lets SQL call the same
// way, vector_top_k(idx, q, k). Its search reads the indexed table
// through the connection it belongs to, within the statement that calls
// it (one snapshot), which is why each is created with the number of its
// connection, looked up in conns.
const topKModuleName = "libsql_embedded_top_k"

var (
	connSeq atomic.Uint64
	conns   sync.Map // uint64 → topKConn, while the connection is open
)

// topKConn is what a connection's vector_top_k searches through: the
// connection, and the path of its main database (the key of its cached
// indexes; "" for one in memory).
type topKConn struct {
	conn sqlite.ExecQuerierContext
	file string
}

// attachTopK creates the connection's vector_top_k, found under the
// number it returns. A query_only connection (a reader) allows it for the
// while.
func attachTopK(c sqlite.ExecQuerierContext, dsn string) (uint64, error) {
	ctx := context.Background()
	id := connSeq.Add(1)
	rows, err := query(ctx, c, "SELECT file FROM pragma_database_list WHERE name = 'main'")
	if err != nil {
		return id, err
	}
	tc := topKConn{conn: c}
	if len(rows) == 1 {
		tc.file, _ = rows[0][0].(string)
	}
	conns.Store(id, tc)
	readOnly := strings.Contains(dsn, "query_only")
	if readOnly {
		if _, err := c.ExecContext(ctx, "PRAGMA query_only = 0", nil); err != nil {
			return id, err
		}
	}
	_, err = c.ExecContext(ctx, fmt.Sprintf("CREATE VIRTUAL TABLE temp.vector_top_k USING %s(%d)", topKModuleName, id), nil)
	if readOnly {
		if _, err2 := c.ExecContext(ctx, "PRAGMA query_only = 1", nil); err == nil {
			err = err2
		}
	}
	return id, err
}

type topKModule struct{}

func (topKModule) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	return connectTopK(ctx, args)
}

func (topKModule) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	return connectTopK(ctx, args)
}

// connectTopK declares libSQL's columns: the three hidden arguments and id.
func connectTopK(ctx vtab.Context, args []string) (vtab.Table, error) {
	if len(args) != 4 {
		return nil, errors.New("vector_top_k: want the connection's number")
	}
	var id uint64
	if _, err := fmt.Sscan(args[3], &id); err != nil {
		return nil, err
	}
	c, ok := conns.Load(id)
	if !ok {
		return nil, errors.New("vector_top_k: unknown connection")
	}
	if err := ctx.Declare("CREATE TABLE x(idx hidden, vector hidden, k hidden, id)"); err != nil {
		return nil, err
	}
	tc := c.(topKConn)
	return &topKTable{conn: tc.conn, file: tc.file}, nil
}

type topKTable struct {
	conn sqlite.ExecQuerierContext
	file string
}

// BestIndex takes the equality constraints on the hidden columns as the
// search's arguments, in column order, as libSQL's vectorVtabBestIndex.
func (t *topKTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedCost = 1
	info.EstimatedRows = 100
	info.IdxNum = 1
	var cols []int
	for i, c := range info.Constraints {
		if c.Usable && c.Op == vtab.OpEQ && c.Column >= 0 && c.Column <= 2 {
			cols = append(cols, i)
		}
	}
	sort.Slice(cols, func(a, b int) bool { return info.Constraints[cols[a]].Column < info.Constraints[cols[b]].Column })
	for n, i := range cols {
		info.Constraints[i].ArgIndex = n
		info.Constraints[i].Omit = true
	}
	return nil
}

func (t *topKTable) Open() (vtab.Cursor, error) { return &topKCursor{t: t}, nil }
func (t *topKTable) Disconnect() error          { t.conn = nil; return nil }
func (t *topKTable) Destroy() error             { t.conn = nil; return nil }

type topKCursor struct {
	t   *topKTable
	ids []any
	i   int
}

func (c *topKCursor) Filter(_ int, _ string, vals []vtab.Value) error {
	c.ids, c.i = nil, 0
	ids, err := topK(c.t.conn, c.t.file, vals)
	if err != nil {
		return err
	}
	c.ids = ids
	return nil
}

func (c *topKCursor) Next() error { c.i++; return nil }
func (c *topKCursor) Eof() bool   { return c.i >= len(c.ids) }
func (c *topKCursor) Column(col int) (vtab.Value, error) {
	if col == 3 {
		return c.ids[c.i], nil
	}
	return nil, nil
}
func (c *topKCursor) Rowid() (int64, error) { return int64(c.i), nil }
func (c *topKCursor) Close() error          { return nil }

// searchErr is libSQL's error of vector_top_k.
func searchErr(format string, args ...any) error {
	return fmt.Errorf("vector index(search): "+format, args...)
}

// topK is vector_top_k(idx, query, k) on conn: the keys (rowid, or the
// first primary key column of a WITHOUT ROWID table) of the k rows of the
// index's table nearest query by the index's metric, nearest first, from
// an exact scan of the rows the index holds (a non-NULL vector, and the
// partial index's WHERE). The arguments are checked, and fail, as
// libSQL's vectorIndexSearch checks them.
func topK(conn sqlite.ExecQuerierContext, file string, vals []vtab.Value) ([]any, error) {
	if conn == nil {
		return nil, errors.New("vector_top_k: the connection is closed")
	}
	if len(vals) != 3 {
		return nil, searchErr("got %d parameters, expected 3", len(vals))
	}
	q, err := vector.Parse(vals[1], vector.Float32)
	if err != nil {
		return nil, err
	}
	var k int
	switch v := vals[2].(type) {
	case int64:
		k = int(int32(v)) // sqlite3_value_int
		if k < 0 {
			return nil, searchErr("third parameter (k) must be a non-negative integer, but negative value were provided")
		}
	case float64:
		k = int(int32(v))
		if float64(k) != v {
			return nil, searchErr("third parameter (k) must be an integer, but float value were provided")
		}
		if k < 0 {
			return nil, searchErr("third parameter (k) must be a non-negative integer, but negative value were provided")
		}
	default:
		return nil, searchErr("third parameter (k) must be an integer, but unexpected type of value were provided")
	}
	name, ok := vals[0].(string)
	if !ok {
		return nil, searchErr("first parameter (index) must be a string")
	}
	if schema, idx, ok := strings.Cut(name, "."); ok {
		if !strings.EqualFold(schema, "main") {
			return nil, searchErr("unknown schema '%s'", schema)
		}
		name = idx
	}
	ctx := context.Background()
	ix, err := readIndex(ctx, conn, name)
	if err != nil {
		return nil, err
	}
	if q.Dims != ix.dims {
		return nil, searchErr("dimensions are different: %d != %d", q.Dims, ix.dims)
	}
	if q.Type != ix.typ {
		return nil, searchErr("vector type differs from column type: %d != %d", q.Type, ix.typ)
	}
	if k = min(k, ix.limit); k == 0 {
		return nil, nil
	}
	e, err := topKIndexes.rows(ctx, conn, file, ix)
	if err != nil {
		return nil, searchErr("%v", err)
	}
	if e != nil && e.rows != nil {
		return e.search(q, k), nil
	}
	return ix.scan(ctx, conn, q, k)
}

// vectorIndex is what a search needs of a libSQL vector index.
type vectorIndex struct {
	name   string
	typ    vector.Type
	dims   int
	metric vector.Metric
	table  string
	column string // the indexed expression: a column
	where  string // a partial index's condition, or ""
	key    string // rowid, or the first primary key column
	limit  int    // the most rows a search returns: libSQL's search_l
}

// readIndex reads an index's parameters (libsql_vector_meta_shadow's
// binary metadata: 9-byte records, a tag and a little-endian u64, the last
// of a tag winning) and its definition (sqlite_schema).
func readIndex(ctx context.Context, conn sqlite.ExecQuerierContext, name string) (*vectorIndex, error) {
	rows, err := query(ctx, conn, "SELECT metadata FROM main.libsql_vector_meta_shadow WHERE name = ?", name)
	if err != nil || len(rows) == 0 {
		return nil, searchErr("failed to parse vector index parameters")
	}
	meta, _ := rows[0][0].([]byte)
	params := map[byte]uint64{}
	for i := 0; i+9 <= len(meta); i += 9 {
		params[meta[i]] = binary.LittleEndian.Uint64(meta[i+1:])
	}
	ix := &vectorIndex{name: name, typ: vector.Type(params[3]), dims: int(params[4]), metric: vector.Cosine, limit: int(params[9])}
	if ix.limit <= 0 {
		ix.limit = 200 // libSQL's VECTOR_SEARCH_L_DEFAULT
	}
	if params[5] == uint64(vector.L2) {
		ix.metric = vector.L2
	}
	rows, err = query(ctx, conn, "SELECT tbl_name, sql FROM main.sqlite_schema WHERE type = 'index' AND name = ?", name)
	if err != nil || len(rows) == 0 {
		return nil, searchErr("index not found")
	}
	ix.table, _ = rows[0][0].(string)
	def, _ := rows[0][1].(string)
	if ix.column, ix.where, err = parseIndexSQL(def); err != nil {
		return nil, searchErr("%v", err)
	}
	rows, err = query(ctx, conn, "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", ix.table)
	if err != nil || len(rows) == 0 {
		return nil, searchErr("index not found")
	}
	ix.key = "rowid"
	if wr, _ := rows[0][0].(int64); wr != 0 {
		rows, err = query(ctx, conn, "SELECT name FROM pragma_table_info(?) WHERE pk = 1", ix.table)
		if err != nil || len(rows) == 0 {
			return nil, searchErr("failed to extract table key")
		}
		k, _ := rows[0][0].(string)
		ix.key = quoteIdent(k)
	}
	return ix, nil
}

// parseIndexSQL returns the indexed column of a CREATE INDEX ... ON t
// (libsql_vector_idx(col, ...)) [WHERE cond] and its condition.
func parseIndexSQL(def string) (column, where string, err error) {
	s := sqlscan.NewScanner(def)
	var toks []sqlscan.Token
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if t.Kind != sqlscan.Space && t.Kind != sqlscan.Comment {
			toks = append(toks, t)
		}
	}
	text := func(t sqlscan.Token) string { return def[t.Start:t.End] }
	depth := 0
	for i, t := range toks {
		switch {
		case t.Kind == sqlscan.Punct && text(t) == "(":
			depth++
		case t.Kind == sqlscan.Punct && text(t) == ")":
			depth--
		case depth == 1 && t.Kind == sqlscan.Word && strings.EqualFold(text(t), "libsql_vector_idx") &&
			i+2 < len(toks) && text(toks[i+1]) == "(" && (toks[i+2].Kind == sqlscan.Word || toks[i+2].Kind == sqlscan.Quoted):
			column = text(toks[i+2])
		case depth == 0 && t.Kind == sqlscan.Word && strings.EqualFold(text(t), "WHERE"):
			where = strings.TrimSpace(def[t.End:])
			return column, where, nil
		}
	}
	if column == "" {
		return "", "", errors.New("failed to find the indexed column")
	}
	return column, "", nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// scanSQL is the SELECT of the key and expr from each row the index
// holds (a non-NULL vector, and the partial index's WHERE), in table order.
func (ix *vectorIndex) scanSQL(expr string) string {
	stmt := fmt.Sprintf("SELECT %s, %s FROM main.%s WHERE %s IS NOT NULL", ix.key, expr, quoteIdent(ix.table), ix.column)
	if ix.where != "" {
		stmt += " AND (" + ix.where + ")"
	}
	return stmt
}

// scan returns the keys of the k rows nearest q, nearest first; rows at
// the same distance in the table's order. Like libSQL's, it returns at
// most the index's search_l rows (DiskANN keeps that many candidates).
func (ix *vectorIndex) scan(ctx context.Context, conn sqlite.ExecQuerierContext, q *vector.Vector, k int) ([]any, error) {
	k = min(k, ix.limit)
	if k == 0 {
		return nil, nil
	}
	// The distances are computed by SQLite calling vector_distance_*,
	// which reads each row's blob in place.
	fn := "vector_distance_cos"
	if ix.metric == vector.L2 {
		fn = "vector_distance_l2"
	}
	stmt := ix.scanSQL(fmt.Sprintf("%s(%s, ?)", fn, ix.column))
	rows, err := conn.QueryContext(ctx, stmt, []driver.NamedValue{{Ordinal: 1, Value: q.Blob()}})
	if err != nil {
		return nil, searchErr("%v", err)
	}
	defer rows.Close()
	best := &nearest{k: k}
	dest := make([]driver.Value, 2)
	for n := 0; ; n++ {
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			return nil, searchErr("%v", err)
		}
		d := float32(math.NaN()) // SQLite's NULL for a NaN distance
		if f, ok := dest[1].(float64); ok {
			d = float32(f)
		}
		best.offer(candidate{dist: d, seq: n, key: dest[0]})
	}
	return best.sorted(), nil
}

type candidate struct {
	dist float32
	seq  int
	key  any
}

// less orders by distance, NaN last, then by scan order.
func (a candidate) less(b candidate) bool {
	an, bn := math.IsNaN(float64(a.dist)), math.IsNaN(float64(b.dist))
	switch {
	case an != bn:
		return bn
	case !an && a.dist != b.dist:
		return a.dist < b.dist
	}
	return a.seq < b.seq
}

// nearest keeps the k least candidates in a max-heap.
type nearest struct {
	k int
	h []candidate
}

func (n *nearest) offer(c candidate) {
	if len(n.h) < n.k {
		n.h = append(n.h, c)
		for i := len(n.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !n.h[p].less(n.h[i]) {
				break
			}
			n.h[p], n.h[i] = n.h[i], n.h[p]
			i = p
		}
		return
	}
	if !c.less(n.h[0]) {
		return
	}
	n.h[0] = c
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(n.h) && n.h[m].less(n.h[l]) {
			m = l
		}
		if r < len(n.h) && n.h[m].less(n.h[r]) {
			m = r
		}
		if m == i {
			break
		}
		n.h[i], n.h[m] = n.h[m], n.h[i]
		i = m
	}
}

func (n *nearest) sorted() []any {
	sort.Slice(n.h, func(i, j int) bool { return n.h[i].less(n.h[j]) })
	out := make([]any, len(n.h))
	for i, c := range n.h {
		out[i] = c.key
	}
	return out
}

// query runs a statement on conn and returns its rows.
func query(ctx context.Context, conn sqlite.ExecQuerierContext, stmt string, args ...any) ([][]driver.Value, error) {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	rows, err := conn.QueryContext(ctx, stmt, nv)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]driver.Value
	for {
		dest := make([]driver.Value, len(rows.Columns()))
		if err := rows.Next(dest); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, dest)
	}
}
