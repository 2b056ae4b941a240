package embedded_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gohrana/libsql/embedded"
)

func randomVec(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func vecText(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprint(f)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// exactTopK ranks ids by the distance of their vectors to q, in float64.
func exactTopK(vecs map[int64][]float32, q []float32, k int, l2 bool, keep func(int64) bool) []int64 {
	type c struct {
		id int64
		d  float64
	}
	var cs []c
	for id, v := range vecs {
		if keep != nil && !keep(id) {
			continue
		}
		var dot, n1, n2, sq float64
		for i := range v {
			x, y := float64(v[i]), float64(q[i])
			dot, n1, n2, sq = dot+x*y, n1+x*x, n2+y*y, sq+(x-y)*(x-y)
		}
		d := 1 - dot/math.Sqrt(n1*n2)
		if l2 {
			d = math.Sqrt(sq)
		}
		cs = append(cs, c{id, d})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []int64
	for _, x := range cs[:min(k, len(cs))] {
		out = append(out, x.id)
	}
	return out
}

func ids(t *testing.T, r *replica, q string, args ...any) []int64 {
	t.Helper()
	rows, err := r.db.QueryContext(testCtx(t), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVectorTopKLocal: with the primary stopped, vector_top_k on the
// replica answers an exact search (recall 1.0 against the test's own
// scan) for a cosine index, an l2 one, a partial one and one on a
// WITHOUT ROWID table; ORDER BY vector_distance_cos(...) LIMIT 10 answers
// what the primary answered; vector_top_k's errors are the primary's.
func TestVectorTopKLocal(t *testing.T) {
	p, prim := startPrimary(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	rng := rand.New(rand.NewPCG(7, 24))
	const dims, n = 16, 400
	mustExec(t, prim, fmt.Sprintf("CREATE TABLE items (id INTEGER PRIMARY KEY, e F32_BLOB(%d), tag INTEGER)", dims))
	mustExec(t, prim, "CREATE INDEX items_cos ON items (libsql_vector_idx(e))")
	mustExec(t, prim, "CREATE INDEX items_l2 ON items (libsql_vector_idx(e, 'metric=l2'))")
	mustExec(t, prim, "CREATE INDEX items_part ON items (libsql_vector_idx(e)) WHERE tag = 1")
	mustExec(t, prim, fmt.Sprintf("CREATE TABLE wr (k TEXT PRIMARY KEY, e F32_BLOB(%d)) WITHOUT ROWID", dims))
	mustExec(t, prim, "CREATE INDEX wr_idx ON wr (libsql_vector_idx(e))")
	vecs := map[int64][]float32{}
	for id := int64(1); id <= n; id++ {
		v := randomVec(rng, dims)
		vecs[id] = v
		mustExec(t, prim, "INSERT INTO items VALUES (?, vector32(?), ?)", id, vecText(v), id%3)
		if id <= 50 {
			mustExec(t, prim, "INSERT INTO wr VALUES (?, vector32(?))", fmt.Sprintf("k%03d", id), vecText(v))
		}
	}
	mustExec(t, prim, "INSERT INTO items VALUES (?, NULL, 1)", n+1) // not indexed
	r.sync(t)

	// The replica's decoded copy of an index follows the file: a row the
	// primary adds after a search is found by the next search after a
	// sync, and a row it deletes is gone.
	q0 := vecText(randomVec(rng, dims))
	before := ids(t, r, "SELECT id FROM vector_top_k('items_cos', vector32(?), 3)", q0)
	mustExec(t, prim, "INSERT INTO items VALUES (?, vector32(?), 0)", n+2, q0)
	r.sync(t)
	if got := ids(t, r, "SELECT id FROM vector_top_k('items_cos', vector32(?), 3)", q0); !slices.Equal(got, append([]int64{n + 2}, before[:2]...)) {
		t.Errorf("after an insert of the query itself: %v, before it %v", got, before)
	}
	mustExec(t, prim, "DELETE FROM items WHERE id = ?", n+2)
	r.sync(t)
	if got := ids(t, r, "SELECT id FROM vector_top_k('items_cos', vector32(?), 3)", q0); !slices.Equal(got, before) {
		t.Errorf("after its delete: %v, before the insert %v", got, before)
	}

	queries := make([][]float32, 20)
	orderBy := make([]string, len(queries))
	for i := range queries {
		queries[i] = randomVec(rng, dims)
		orderBy[i] = render(t, prim, fmt.Sprintf("SELECT id FROM items WHERE e IS NOT NULL ORDER BY vector_distance_cos(e, vector32('%s')), id LIMIT 10", vecText(queries[i])))
	}
	topKErrors := []string{
		"SELECT id FROM vector_top_k('items_cos', vector32('[1,2]'), 3)",
		"SELECT id FROM vector_top_k('items_cos', vector64('" + vecText(queries[0]) + "'), 3)",
		"SELECT id FROM vector_top_k('nope', '" + vecText(queries[0]) + "', 3)",
		"SELECT id FROM vector_top_k('items_cos', '" + vecText(queries[0]) + "', -1)",
		"SELECT id FROM vector_top_k('items_cos', '" + vecText(queries[0]) + "', 1.5)",
		"SELECT id FROM vector_top_k('items_cos', '" + vecText(queries[0]) + "', 'x')",
		"SELECT id FROM vector_top_k(7, '" + vecText(queries[0]) + "', 3)",
		"SELECT id FROM vector_top_k('items_cos', '[1,2', 3)",
		"SELECT id FROM vector_top_k('other.items_cos', '" + vecText(queries[0]) + "', 3)",
		"SELECT id FROM vector_top_k('items_cos', '" + vecText(queries[0]) + "')",
	}
	wantErr := make([]answer, len(topKErrors))
	for i, q := range topKErrors {
		wantErr[i] = ask(t, prim, q)
	}
	p.Kill()

	for i, q := range queries {
		for _, tc := range []struct {
			idx  string
			l2   bool
			keep func(int64) bool
		}{
			{"items_cos", false, nil},
			{"items_l2", true, nil},
			{"items_part", false, func(id int64) bool { return id%3 == 1 }},
		} {
			got := ids(t, r, "SELECT id FROM vector_top_k(?, vector32(?), 10)", tc.idx, vecText(q))
			if want := exactTopK(vecs, q, 10, tc.l2, tc.keep); !slices.Equal(got, want) {
				t.Errorf("%s, query %d: %v, exact %v", tc.idx, i, got, want)
			}
		}
		got := render(t, r.db, fmt.Sprintf("SELECT id FROM items WHERE e IS NOT NULL ORDER BY vector_distance_cos(e, vector32('%s')), id LIMIT 10", vecText(q)))
		if got != orderBy[i] {
			t.Errorf("ORDER BY vector_distance_cos, query %d: replica %s, primary %s", i, got, orderBy[i])
		}
	}
	// A join on the results, and a WITHOUT ROWID table's key.
	got := render(t, r.db, "SELECT items.id FROM vector_top_k('items_cos', (SELECT e FROM items WHERE id = 42), 1) AS v JOIN items ON items.rowid = v.id")
	if got != "[42]" {
		t.Errorf("the nearest of item 42 is %s", got)
	}
	if got := render(t, r.db, "SELECT id FROM vector_top_k('wr_idx', (SELECT e FROM wr WHERE k = 'k007'), 1)"); got != "[k007]" {
		t.Errorf("WITHOUT ROWID: %s", got)
	}
	// k = 0 answers no rows (sqld 0.24.32 crashes on it: "double free or
	// corruption").
	if got := render(t, r.db, "SELECT count(*) FROM vector_top_k('items_cos', '"+vecText(queries[0])+"', 0)"); got != "[0]" {
		t.Errorf("k = 0: %s", got)
	}
	// A k above the index's search_l (200) gets search_l rows (the
	// primary's DiskANN gets about as many: 200 or 201 from run to run).
	if got := render(t, r.db, "SELECT count(*) FROM vector_top_k('main.items_cos', '"+vecText(queries[0])+"', 1000)"); got != "[200]" {
		t.Errorf("k = 1000: %s rows", got)
	}
	for i, q := range topKErrors {
		if got := ask(t, r.db, q); !sameAnswer(wantErr[i], got) {
			t.Errorf("%s\nreplica: %v\nprimary: %v", q, got, wantErr[i])
		}
	}
}
