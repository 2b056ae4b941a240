package localdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/vector"
	"modernc.org/sqlite"
)

func TestParseIndexSQL(t *testing.T) {
	tests := []struct {
		sql, column, where string
	}{
		{"CREATE INDEX v_idx ON v (libsql_vector_idx(emb))", "emb", ""},
		{"CREATE INDEX opt_l2 ON opt (libsql_vector_idx(e, 'metric=l2', 'max_neighbors=8'))", "e", ""},
		{"CREATE INDEX opt_part ON opt (libsql_vector_idx(e)) WHERE id > 5", "e", "id > 5"},
		{`CREATE INDEX "q" ON "t t" ( LIBSQL_VECTOR_IDX ( "my col" ) ) where (a = 'WHERE')`, `"my col"`, "(a = 'WHERE')"},
	}
	for _, tt := range tests {
		col, where, err := parseIndexSQL(tt.sql)
		if err != nil || col != tt.column || where != tt.where {
			t.Errorf("parseIndexSQL(%q) = %q, %q, %v", tt.sql, col, where, err)
		}
	}
	if _, _, err := parseIndexSQL("CREATE INDEX i ON t (a)"); err == nil {
		t.Error("an index without libsql_vector_idx parsed")
	}
}

func TestNearest(t *testing.T) {
	n := &nearest{k: 3}
	for i, d := range []float32{5, 1, 4, 1, 3, 9, 0} {
		n.offer(candidate{dist: d, seq: i, key: int64(i)})
	}
	got := n.sorted()
	want := []any{int64(6), int64(1), int64(3)} // 0, then the two 1s in scan order
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted = %v, want %v", got, want)
		}
	}
}

// vectorFile writes a table t (id INTEGER PRIMARY KEY, e, tag) of rows
// random FLOAT32 vectors of dims dimensions (tag = id % 3) and returns its
// path and a reader connection of the replica's driver.
func vectorFile(tb testing.TB, rows, dims int, extra ...string) (string, *sql.Conn) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "v.db")
	db, err := openDB(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, e BLOB, tag INTEGER)"); err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	tx, _ := db.Begin()
	for i := range rows {
		v := make([]byte, 4*dims)
		for j := range dims {
			binary.LittleEndian.PutUint32(v[4*j:], math.Float32bits(float32(r.NormFloat64())))
		}
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?, ?)", i+1, v, (i+1)%3); err != nil {
			tb.Fatal(err)
		}
	}
	for _, q := range extra {
		if _, err := tx.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	db.Close()
	if db, err = OpenReaders(path, 1, nil); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return path, conn
}

func randomQuery(r *rand.Rand, dims int) *vector.Vector {
	q := vector.New(vector.Float32, dims)
	for j := range dims {
		binary.LittleEndian.PutUint32(q.Data[4*j:], math.Float32bits(float32(r.NormFloat64())))
	}
	return q
}

// TestTopKCacheMatchesScan: the search over an index's decoded rows
// answers what the SQL scan answers, ties (rows of one vector), zero
// vectors (NaN distances), NULLs and a partial index's WHERE included; an
// index with a row that is not a vector of its type and length is not
// decoded, and the scan reports that row.
func TestTopKCacheMatchesScan(t *testing.T) {
	const dims = 16
	path, conn := vectorFile(t, 300, dims,
		"INSERT INTO t SELECT id + 1000, (SELECT e FROM t WHERE id = 7), 1 FROM t WHERE id <= 12",
		"INSERT INTO t VALUES (2000, zeroblob(64), 1), (2001, zeroblob(64), 0), (2002, NULL, 1)")
	r := rand.New(rand.NewPCG(3, 4))
	err := conn.Raw(func(dc any) error {
		c := dc.(sqlite.ExecQuerierContext)
		for _, ix := range []vectorIndex{
			{name: "cos", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 200},
			{name: "l2", typ: vector.Float32, dims: dims, metric: vector.L2, table: "t", column: "e", key: "rowid", limit: 200},
			{name: "part", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", where: "tag = 1", key: "id", limit: 200},
			{name: "small", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 5},
		} {
			e, err := topKIndexes.rows(context.Background(), c, path, &ix)
			if err != nil || e == nil || e.rows == nil {
				return fmt.Errorf("%s: not decoded: %v, %v", ix.name, e, err)
			}
			queries := []*vector.Vector{vector.New(vector.Float32, dims), randomQuery(r, dims)}
			for range 20 {
				queries = append(queries, randomQuery(r, dims))
			}
			// The query of the tied rows themselves.
			rows, err := query(context.Background(), c, "SELECT e FROM t WHERE id = 7")
			if err != nil {
				return err
			}
			tied, _ := vector.View(rows[0][0].([]byte), vector.Float32, dims)
			queries = append(queries, tied)
			for i, q := range queries {
				for _, k := range []int{1, 10, 30, 400} {
					want, err := ix.scan(context.Background(), c, q, k)
					if err != nil {
						return err
					}
					if got := e.search(q, k); fmt.Sprint(got) != fmt.Sprint(want) {
						return fmt.Errorf("%s, query %d, k %d: decoded %v, scan %v", ix.name, i, k, got, want)
					}
				}
			}
		}
		if _, err := c.ExecContext(context.Background(), "PRAGMA query_only = 0", nil); err != nil {
			return err
		}
		// A local transaction of offline writes (a row and its queue
		// entry) changes the file's version: the next search sees the row.
		ix := vectorIndex{name: "cos", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 200}
		q := randomQuery(r, dims)
		for i, stmt := range []string{
			"CREATE TABLE " + QueueTable + " (id INTEGER PRIMARY KEY, txn BLOB NOT NULL)",
			"BEGIN; INSERT INTO t VALUES (2500, ?, 0); INSERT INTO " + QueueTable + " VALUES (1, x'00'); COMMIT",
			"BEGIN; DELETE FROM t WHERE id = 2500; INSERT INTO " + QueueTable + " VALUES (2, x'00'); COMMIT",
		} {
			if _, err := c.ExecContext(context.Background(), stmt, []driver.NamedValue{{Ordinal: 1, Value: q.Blob()}}[:strings.Count(stmt, "?")]); err != nil {
				return fmt.Errorf("%s: %v", stmt, err)
			}
			e, err := topKIndexes.rows(context.Background(), c, path, &ix)
			if err != nil || e == nil || e.rows == nil {
				return fmt.Errorf("not decoded: %v, %v", e, err)
			}
			got := e.search(q, 1)
			if want := i == 1; (fmt.Sprint(got) == "[2500]") != want {
				return fmt.Errorf("after %s: nearest %v", stmt, got)
			}
		}
		if _, err := c.ExecContext(context.Background(), "INSERT INTO t VALUES (3000, vector64('[1,2]'), 0)", nil); err != nil {
			return err
		}
		ix = vectorIndex{name: "bad", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 200}
		if e, err := topKIndexes.rows(context.Background(), c, path, &ix); err != nil || (e != nil && e.rows != nil) {
			return fmt.Errorf("an index with a FLOAT64 row was decoded: %v, %v", e, err)
		}
		if _, err := ix.scan(context.Background(), c, randomQuery(r, dims), 3); err == nil {
			return errors.New("the scan of an index with a FLOAT64 row did not fail")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTopK: vector_top_k's exact search over 10,000 FLOAT32 vectors
// of 256 dimensions (the distances and the heap), on one connection of
// the replica's driver: through SQLite (scan), and over the rows decoded
// once (decoded; the cache's check of page 1 included).
func BenchmarkTopK(b *testing.B) {
	const rows, dims = 10000, 256
	path, conn := vectorFile(b, rows, dims)
	q := randomQuery(rand.New(rand.NewPCG(5, 6)), dims)
	ix := &vectorIndex{name: "bench", typ: vector.Float32, dims: dims, metric: vector.Cosine, table: "t", column: "e", key: "rowid", limit: 200}
	for _, decoded := range []bool{false, true} {
		name := map[bool]string{false: "scan", true: "decoded"}[decoded]
		b.Run(name, func(b *testing.B) {
			err := conn.Raw(func(dc any) error {
				c := dc.(sqlite.ExecQuerierContext)
				for range b.N {
					var ids []any
					var err error
					if decoded {
						var e *topKEntry
						if e, err = topKIndexes.rows(context.Background(), c, path, ix); err == nil {
							ids = e.search(q, 10)
						}
					} else {
						ids, err = ix.scan(context.Background(), c, q, 10)
					}
					if err != nil || len(ids) != 10 {
						return fmt.Errorf("%v, %v", ids, err)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestTopKAfterSchemaChange: a reader's vector_top_k still finds its
// connection after a schema change in the file (SQLite connects the
// table again when it reloads the schema), and a closed connection leaves
// nothing behind.
func TestTopKAfterSchemaChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	w, err := openDB(path, "journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec("CREATE TABLE a (x)"); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		conns.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	r, err := OpenReaders(path, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		var ok string
		if err := r.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("%s: integrity_check: %q, %v", when, ok, err)
		}
		_, err := r.Exec("SELECT id FROM vector_top_k('nope', '[1]', 1)")
		if err == nil || !strings.Contains(err.Error(), "vector index(search): failed to parse vector index parameters") {
			t.Fatalf("%s: vector_top_k of no index: %v", when, err)
		}
	}
	check("first")
	if _, err := w.Exec("CREATE TABLE b (y)"); err != nil {
		t.Fatal(err)
	}
	check("after CREATE TABLE")
	if _, err := w.Exec("DROP TABLE a"); err != nil {
		t.Fatal(err)
	}
	check("after DROP TABLE")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if after := count(); after != before {
		t.Errorf("%d connections registered before the readers opened, %d after they closed", before, after)
	}
}

// TestNewConnectionLeavesVectorIndexOut: a connection opened on a file
// that holds a libSQL vector index loads the schema without the index, so
// that a write to its table does not call the libsql_vector_idx stand-in
// (which fails). modernc.org/sqlite runs the DSN's pragmas, which may load
// the schema, before it registers the driver's functions: the offline
// writer of a reopened replica used to load the index with the function
// unknown, and every local write to the table failed.
func TestNewConnectionLeavesVectorIndexOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	// The file as a replica of libSQL has it: the vector index is an index
	// on libsql_vector_idx(e), which SQLite would refuse to create.
	setup, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, setup,
		"PRAGMA journal_mode = WAL",
		"CREATE TABLE t (id INTEGER PRIMARY KEY, e BLOB)",
		"CREATE INDEX t_vec ON t (e)",
		"CREATE INDEX t_id_e ON t (id, e)",
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX t_vec ON t (libsql_vector_idx(e))' WHERE name = 't_vec'",
	)
	setup.Close()
	for name, open := range map[string]func() (*sql.DB, error){
		"writer":  func() (*sql.DB, error) { return OpenWriter(path, false, nil) },
		"readers": func() (*sql.DB, error) { return OpenReaders(path, 1, nil) },
	} {
		db, err := open()
		if err != nil {
			t.Fatal(err)
		}
		var indexes []string
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_index_list('t') ORDER BY name")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			rows.Scan(&n)
			indexes = append(indexes, n)
		}
		rows.Close()
		if strings.Join(indexes, ",") != "t_id_e" {
			t.Errorf("%s: a new connection has the indexes %q, want only t_id_e", name, indexes)
		}
		if name == "writer" {
			if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1, x'00')"); err != nil {
				t.Errorf("writer: a write to the vector index's table: %v", err)
			}
		}
		db.Close()
	}
}
