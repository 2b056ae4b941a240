// Command vector-perf measures vector search on an embedded replica
// against the same on its primary, in one run: vector_top_k (k = 10) and
// ORDER BY vector_distance_cos(...) LIMIT 10 over a table of F32_BLOB
// vectors with a libSQL vector index, on the replica's local file and on
// the primary over ws://, each with its p50 and p90 latency and its recall
// against an exact search the command computes itself.
//
//	sqld -d /tmp/vperf --http-listen-addr 127.0.0.1:8089 --no-welcome &
//	cd bench && go run ./cmd/vector-perf -url http://127.0.0.1:8089
//
// It creates the table perf_vec on the server (a new server is best).
// docs/dev/PERF.md has the numbers of a run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	_ "github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/embedded"
)

func main() {
	base := harness.URLFlag("http://127.0.0.1:8089")
	rows := flag.Int("rows", 10000, "vectors in the table")
	dims := flag.Int("dims", 256, "dimensions of each vector")
	queries := flag.Int("queries", 200, "queries of each kind")
	fill := flag.Bool("fill", true, "create and fill perf_vec (false: reuse the one a previous run left, same -rows, -dims)")
	flag.IntVar(&neighbors, "max-neighbors", 32, "the index's max_neighbors (libSQL's default makes 10,000 inserts take many minutes)")
	harness.Main("vector-perf", base, func() error { return run(*base, *rows, *dims, *queries, *fill) })
}

var neighbors int

func text(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprint(f)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func random(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// exact returns the ids of the k vectors nearest q by cosine distance.
func exact(vecs [][]float32, q []float32, k int) []int64 {
	type c struct {
		id int64
		d  float64
	}
	cs := make([]c, len(vecs))
	for i, v := range vecs {
		var dot, n1, n2 float64
		for j := range v {
			x, y := float64(v[j]), float64(q[j])
			dot, n1, n2 = dot+x*y, n1+x*x, n2+y*y
		}
		cs[i] = c{int64(i + 1), 1 - dot/math.Sqrt(n1*n2)}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := make([]int64, k)
	for i := range out {
		out[i] = cs[i].id
	}
	return out
}

func run(base string, rows, dims, nq int, fill bool) error {
	ctx := context.Background()
	ws := "ws" + strings.TrimPrefix(base, "http")
	w, err := harness.NewWorkspace(ctx, "vector-perf", ws)
	if err != nil {
		return err
	}
	defer w.Close()
	dir, prim := w.Dir, w.Primary
	fmt.Printf("vector-perf against %s: %d vectors of F32_BLOB(%d), max_neighbors=%d, k = 10, %d queries each\n\n", base, rows, dims, neighbors, nq)

	r := rand.New(rand.NewPCG(24, 10))
	vecs := make([][]float32, rows)
	for i := range vecs {
		vecs[i] = random(r, dims)
	}
	start := time.Now()
	if fill {
		if err := fillTable(ctx, prim, vecs, dims); err != nil {
			return err
		}
		fmt.Printf("fill (primary, with its DiskANN index): %v\n", time.Since(start).Round(time.Millisecond))
	}
	return search(ctx, prim, base, dir, r, vecs, dims, nq)
}

// fillTable creates perf_vec with its index and inserts vecs (ids from 1).
func fillTable(ctx context.Context, prim *sql.DB, vecs [][]float32, dims int) error {
	start := time.Now()
	rows := len(vecs)
	for _, q := range []string{
		"DROP TABLE IF EXISTS perf_vec",
		fmt.Sprintf("CREATE TABLE perf_vec (id INTEGER PRIMARY KEY, e F32_BLOB(%d))", dims),
		"CREATE INDEX perf_vec_idx ON perf_vec (libsql_vector_idx(e, 'max_neighbors=" + fmt.Sprint(neighbors) + "'))",
	} {
		if _, err := prim.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	const batch = 10
	for i := 0; i < rows; i += batch {
		var b strings.Builder
		b.WriteString("INSERT INTO perf_vec VALUES ")
		for j := i; j < min(i+batch, rows); j++ {
			if j > i {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, vector32('%s'))", j+1, text(vecs[j]))
		}
		if _, err := prim.ExecContext(ctx, b.String()); err != nil {
			return err
		}
		if (i+batch)%2000 == 0 {
			fmt.Printf("  %d rows, %v\n", i+batch, time.Since(start).Round(time.Second))
		}
	}
	return nil
}

// search syncs a replica and measures the searches on it and on prim.
func search(ctx context.Context, prim *sql.DB, base, dir string, r *rand.Rand, vecs [][]float32, dims, nq int) error {

	c, err := embedded.NewConnector(filepath.Join(dir, "replica.db"), base, embedded.WithSyncInterval(0))
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	if _, err := c.Sync(ctx); err != nil {
		return err
	}
	fmt.Printf("replica sync: %v\n\n", time.Since(start).Round(time.Millisecond))
	replica := sql.OpenDB(c)
	defer replica.Close()

	qs := make([][]float32, nq)
	want := make([][]int64, nq)
	for i := range qs {
		qs[i] = random(r, dims)
		want[i] = exact(vecs, qs[i], 10)
	}
	topK := "SELECT id FROM vector_top_k('perf_vec_idx', vector32(?), 10)"
	orderBy := "SELECT id FROM perf_vec ORDER BY vector_distance_cos(e, vector32(?)) LIMIT 10"
	fmt.Printf("%-46s %9s %9s %7s\n", "", "p50", "p90", "recall")
	for _, m := range []struct {
		name string
		db   *sql.DB
		q    string
	}{
		{"vector_top_k, replica (local, exact scan)", replica, topK},
		{"vector_top_k, primary over ws:// (DiskANN)", prim, topK},
		{"ORDER BY vector_distance_cos, replica", replica, orderBy},
		{"ORDER BY vector_distance_cos, primary ws://", prim, orderBy},
	} {
		lat := make([]time.Duration, nq)
		hits := 0
		for i, q := range qs {
			arg := text(q)
			t0 := time.Now()
			got, err := ids(ctx, m.db, m.q, arg)
			lat[i] = time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			for _, id := range got {
				if slices.Contains(want[i], id) {
					hits++
				}
			}
		}
		slices.Sort(lat)
		fmt.Printf("%-46s %9v %9v %7.3f\n", m.name, lat[nq/2].Round(10*time.Microsecond), lat[nq*9/10].Round(10*time.Microsecond), float64(hits)/float64(10*nq))
	}
	return nil
}

func ids(ctx context.Context, db *sql.DB, q string, args ...any) ([]int64, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
