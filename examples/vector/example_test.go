package main

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/exampletest"
)

// forEachVariantDB runs f once per transport and codec
// (exampletest.ForEachDB), with the database opened and the fruits
// inserted into a fresh table.
func forEachVariantDB(t *testing.T, f func(t *testing.T, ctx context.Context, db *sql.DB)) {
	t.Helper()
	open := func(dsn string) (*sql.DB, error) { return sql.Open("libsql", dsn) }
	exampletest.ForEachDB(t, open, f, Reset, func(ctx context.Context, db *sql.DB) error {
		return Add(ctx, db, Fruits)
	})
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `sour and juicy [0.1 0.9 0.1 0.9]: lemon (0.009), lime (0.016), orange (0.104)
sweet and crunchy [0.9 0.1 0.9 0.2]: apple (0.051), carrot (0.124), banana (0.212)
lime is stored as [0.2 0.9 0.2 0.7]
`
	exampletest.CheckRun(t, want, run)
}

// cosDistance is the cosine distance of a and b, computed in float64.
func cosDistance(a, b libsql.Vector32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/math.Sqrt(na*nb)
}

// TestNearest asks for the neighbours of random queries and wants those a
// look at every fruit finds, in the same order, at the same distances.
func TestNearest(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sql.DB) {
		r := rand.New(rand.NewPCG(4, 2))
		for range 20 {
			query := make(libsql.Vector32, Dims)
			for i := range query {
				query[i] = r.Float32()
			}
			k := 1 + r.IntN(len(Fruits))
			got, err := Nearest(ctx, db, query, k)
			if err != nil {
				t.Fatal(err)
			}

			want := slices.Clone(Fruits)
			slices.SortFunc(want, func(a, b Fruit) int {
				return cmp.Compare(cosDistance(query, a.Embedding), cosDistance(query, b.Embedding))
			})
			if len(got) != k {
				t.Fatalf("Nearest(%v, %d) = %v: %d fruits", query, k, got, len(got))
			}
			for i, n := range got {
				w := want[i]
				if n.Name != w.Name || math.Abs(n.Distance-cosDistance(query, w.Embedding)) > 1e-6 {
					t.Errorf("Nearest(%v, %d)[%d] = %+v, want %s at %.6f", query, k, i, n, w.Name, cosDistance(query, w.Embedding))
				}
			}
		}
	})
}

// TestEmbedding reads every embedding back as it was inserted, and wants
// sql.ErrNoRows for a fruit that is not there.
func TestEmbedding(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sql.DB) {
		for _, f := range Fruits {
			got, err := Embedding(ctx, db, f.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, f.Embedding) {
				t.Errorf("Embedding(%s) = %v, want %v", f.Name, got, f.Embedding)
			}
		}
		if _, err := Embedding(ctx, db, "durian"); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("Embedding(durian): error %v, want sql.ErrNoRows", err)
		}
	})
}
