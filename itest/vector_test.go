package itest

import (
	"database/sql"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// The tests of libsql.Vector32 and libsql.Vector64 against libSQL's vector
// functions, F32_BLOB columns and vector indexes, on every transport and
// codec.

// bits32 and bits64 give a vector's elements as their bits, so that NaNs,
// and -0 against 0, compare.
func bits32(v libsql.Vector32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func bits64(v libsql.Vector64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

// randomVector32 returns n elements in [-1, 1).
func randomVector32(r *rand.Rand, n int) libsql.Vector32 {
	v := make(libsql.Vector32, n)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	return v
}

// TestVectorRoundTrip stores both types in vector columns and reads them
// back bit for bit, special values included, and checks that the server
// holds libSQL's own blobs: those of vector32() and vector64() of the same
// elements, whose text vector_extract prints.
func TestVectorRoundTrip(t *testing.T) {
	long32 := randomVector32(rand.New(rand.NewPCG(1, 2)), 1536)
	long64 := make(libsql.Vector64, len(long32))
	for i, x := range long32 {
		long64[i] = float64(x)
	}
	negZero := float32(math.Copysign(0, -1))
	inf32, nan32 := float32(math.Inf(1)), float32(math.NaN())
	cases := []struct {
		name string
		v32  libsql.Vector32
		v64  libsql.Vector64
		text string // vector_extract of both, when it prints the elements exactly
	}{
		{"small", libsql.Vector32{0.5, -1, 2, 1e10}, libsql.Vector64{0.5, -1, 2, 1e10}, "[0.5,-1,2,1e+10]"},
		{"special", libsql.Vector32{negZero, inf32, -inf32, nan32}, libsql.Vector64{math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}, ""},
		{"extremes", libsql.Vector32{math.MaxFloat32, math.SmallestNonzeroFloat32}, libsql.Vector64{math.MaxFloat64, math.SmallestNonzeroFloat64}, ""},
		{"empty", libsql.Vector32{}, libsql.Vector64{}, "[]"},
		{"null", nil, nil, ""},
		{"long", long32, long64, ""},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "vec_rt", "(id INTEGER PRIMARY KEY, e F32_BLOB(4), d F64_BLOB(4))")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := t.Context()
				res, err := db.ExecContext(ctx, "INSERT INTO "+table+" (e, d) VALUES (?, ?)", tc.v32, tc.v64)
				require.NoError(t, err)
				id, err := res.LastInsertId()
				require.NoError(t, err)

				var e libsql.Vector32
				var d libsql.Vector64
				var typ32, typ64 string
				require.NoError(t, db.QueryRowContext(ctx,
					"SELECT e, d, typeof(e), typeof(d) FROM "+table+" WHERE id = ?", id).Scan(&e, &d, &typ32, &typ64))
				if tc.v32 == nil {
					require.Nil(t, e, "a nil Vector32 is NULL")
					require.Nil(t, d, "a nil Vector64 is NULL")
					require.Equal(t, []string{"null", "null"}, []string{typ32, typ64})
					return
				}
				require.Equal(t, []string{"blob", "blob"}, []string{typ32, typ64})
				require.NotNil(t, e, "an empty Vector32 stays apart from NULL")
				require.NotNil(t, d, "an empty Vector64 stays apart from NULL")
				require.Equal(t, bits32(tc.v32), bits32(e), "Vector32 back")
				require.Equal(t, bits64(tc.v64), bits64(d), "Vector64 back")

				// The server made the same blobs of the same elements, as
				// vector32() and vector64() of the FLOAT64 vector.
				var same32, same64 bool
				require.NoError(t, db.QueryRowContext(ctx,
					"SELECT e = vector32(vector64(?)), d = vector64(?) FROM "+table+" WHERE id = ?",
					tc.v64, tc.v64, id).Scan(&same32, &same64))
				if tc.name != "special" && tc.name != "extremes" { // rounding differs from these elements
					require.True(t, same32, "the stored Vector32 is vector32() of its elements")
				}
				require.True(t, same64, "the stored Vector64 is vector64() of its elements")

				if tc.text != "" {
					var text32, text64 string
					require.NoError(t, db.QueryRowContext(ctx,
						"SELECT vector_extract(e), vector_extract(d) FROM "+table+" WHERE id = ?", id).Scan(&text32, &text64))
					require.Equal(t, tc.text, text32)
					require.Equal(t, tc.text, text64)
				}
			})
		}

		// What the server makes itself scans too.
		var v libsql.Vector32
		var w libsql.Vector64
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT vector32('[1,2,3]'), vector64('[0.5,-1,2,1e10]')").Scan(&v, &w))
		require.Equal(t, libsql.Vector32{1, 2, 3}, v)
		require.Equal(t, libsql.Vector64{0.5, -1, 2, 1e10}, w)
	})
}

// cosDistance32 is libSQL's cosine distance of two FLOAT32 vectors:
// float32 sums, and 1 - dot/sqrt(|a|²|b|²) in float64, rounded to float32.
// The conversions keep each product from being fused into its sum.
func cosDistance32(a, b libsql.Vector32) float64 {
	var dot, na, nb float32
	for i := range a {
		dot += float32(a[i] * b[i])
		na += float32(a[i] * a[i])
		nb += float32(b[i] * b[i])
	}
	return float64(float32(1 - float64(dot)/math.Sqrt(float64(na*nb))))
}

// cosDistance64 is the cosine distance of two FLOAT64 vectors, which
// libSQL computes in float64 and returns rounded to float32.
func cosDistance64(a, b libsql.Vector64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return float64(float32(1 - dot/math.Sqrt(na*nb)))
}

// TestVectorDistanceCos compares vector_distance_cos of vectors sent as
// arguments with the distance computed in Go.
func TestVectorDistanceCos(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 10 {
			a, b := randomVector32(r, 64), randomVector32(r, 64)
			var got float64
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT vector_distance_cos(?, ?)", a, b).Scan(&got))
			require.InDelta(t, cosDistance32(a, b), got, 1e-6, "FLOAT32 distance of %v and %v", a, b)

			a64, b64 := make(libsql.Vector64, len(a)), make(libsql.Vector64, len(b))
			for i := range a {
				a64[i], b64[i] = float64(a[i])+r.Float64()*1e-9, float64(b[i])
			}
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT vector_distance_cos(?, ?)", a64, b64).Scan(&got))
			require.InDelta(t, cosDistance64(a64, b64), got, 1e-6, "FLOAT64 distance")
		}
		// The same vector: no distance; opposite ones: 2.
		v := libsql.Vector32{1, 2, 3}
		var same, opposite float64
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT vector_distance_cos(?, ?), vector_distance_cos(?, ?)",
			v, v, v, libsql.Vector32{-1, -2, -3}).Scan(&same, &opposite))
		require.InDelta(t, 0, same, 1e-6)
		require.InDelta(t, 2, opposite, 1e-6)
	})
}

// TestVectorTopK indexes an F32_BLOB column with libsql_vector_idx and
// asks vector_top_k for the nearest neighbours of a Vector32, which must be
// those a scan of all rows by cosine distance in Go finds.
func TestVectorTopK(t *testing.T) {
	const rows, dims, k = 64, 8, 5
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		ctx := t.Context()
		table := freshTable(t, db, "vec_knn", "(id INTEGER PRIMARY KEY, e F32_BLOB(8) NOT NULL)")
		index := table + "_idx"
		mustExec(t, db, "CREATE INDEX "+index+" ON "+table+" (libsql_vector_idx(e))")

		r := rand.New(rand.NewPCG(5, 6))
		stored := make(map[int64]libsql.Vector32, rows)
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		ins, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" (id, e) VALUES (?, ?)")
		require.NoError(t, err)
		for id := int64(1); id <= rows; id++ {
			stored[id] = randomVector32(r, dims)
			_, err := ins.ExecContext(ctx, id, stored[id])
			require.NoError(t, err)
		}
		require.NoError(t, ins.Close())
		require.NoError(t, tx.Commit())

		// The index checks each vector's type byte and length against the
		// column's.
		_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (e) VALUES (?)", make(libsql.Vector64, dims))
		require.ErrorContains(t, err, "vector type differs from column type: 2 != 1")
		_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (e) VALUES (?)", make(libsql.Vector32, dims-1))
		require.ErrorContains(t, err, "dimensions are different: 7 != 8")

		for range 5 {
			query := randomVector32(r, dims)
			ids := make([]int64, 0, rows)
			for id := range stored {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(i, j int) bool {
				return cosDistance32(query, stored[ids[i]]) < cosDistance32(query, stored[ids[j]])
			})
			want := ids[:k]

			got := make([]int64, 0, k)
			res, err := db.QueryContext(ctx,
				"SELECT t.id, t.e FROM vector_top_k('"+index+"', ?, ?) AS top JOIN "+table+" AS t ON t.rowid = top.id",
				query, k)
			require.NoError(t, err)
			for res.Next() {
				var id int64
				var e libsql.Vector32
				require.NoError(t, res.Scan(&id, &e))
				require.Equal(t, stored[id], e, "row %d's vector", id)
				got = append(got, id)
			}
			require.NoError(t, res.Err())
			require.NoError(t, res.Close())
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, want, got, "the %d nearest neighbours of %v", k, query)
		}
	})
}

// TestVectorExtract scans vector_extract's text, which prints each element
// with six significant digits (%g): exactly for elements that have no more,
// rounded for the others; and the text of a compressed vector, converted to
// FLOAT32 first.
func TestVectorExtract(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		ctx := t.Context()
		var v libsql.Vector32
		var w libsql.Vector64
		require.NoError(t, db.QueryRowContext(ctx, "SELECT vector_extract(?), vector_extract(?)",
			libsql.Vector32{0.5, -1, 2, 1e10, float32(math.Inf(-1))}, libsql.Vector64{0.5, -1, 2, 1e10, math.Inf(1)}).Scan(&v, &w))
		require.Equal(t, libsql.Vector32{0.5, -1, 2, 1e10, float32(math.Inf(-1))}, v)
		require.Equal(t, libsql.Vector64{0.5, -1, 2, 1e10, math.Inf(1)}, w)

		var text string
		require.NoError(t, db.QueryRowContext(ctx, "SELECT vector_extract(?)", libsql.Vector64{math.Pi, math.NaN()}).Scan(&text))
		require.Equal(t, "[3.14159,NaN]", text)
		require.NoError(t, w.Scan(text))
		require.Equal(t, 3.14159, w[0])
		require.True(t, math.IsNaN(w[1]), "NaN")

		require.NoError(t, db.QueryRowContext(ctx, "SELECT vector_extract(vector1bit('[1,-2,0.5,0,-3]'))").Scan(&v))
		require.Equal(t, libsql.Vector32{1, -1, 1, -1, -1}, v)
		require.NoError(t, db.QueryRowContext(ctx, "SELECT vector_extract(vector32('[]'))").Scan(&v))
		require.Equal(t, libsql.Vector32{}, v)
	})
}

// TestVectorCompressed scans the blobs of libSQL's compressed types, which
// must give what vector32() and vector64() convert them to, bit for bit.
func TestVectorCompressed(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	elems := randomVector32(r, 37)
	elems = append(elems, 0, float32(math.Copysign(0, -1)), 1e-7, 65504, 65520, 1e30, -3e38, float32(math.Inf(1)))
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		for _, fn := range []string{"vector16", "vectorb16", "vector8", "vector1bit"} {
			t.Run(fn, func(t *testing.T) {
				for _, v := range []libsql.Vector32{elems, elems[:1], {}} {
					var got, want libsql.Vector32
					var got64, want64 libsql.Vector64
					require.NoError(t, db.QueryRowContext(t.Context(),
						"SELECT "+fn+"(?1), vector32("+fn+"(?1)), "+fn+"(?1), vector64("+fn+"(?1))", v).Scan(&got, &want, &got64, &want64))
					require.Equal(t, bits32(want), bits32(got), "Vector32 of %s(%v)", fn, v)
					require.Equal(t, bits64(want64), bits64(got64), "Vector64 of %s(%v)", fn, v)
				}
			})
		}
	})
}

// TestVectorWrongType scans what is no vector the receiver can hold: a
// FLOAT64 vector into a Vector32, blobs of a length their type does not
// allow or of no vector type, and values that are no blob or text. Each is
// a *libsql.VectorError that names the type, through database/sql's own
// error.
func TestVectorWrongType(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		for _, tc := range []struct {
			name, expr string
			typ        libsql.VectorType
			message    string
		}{
			{"float64", "vector64('[1,2]')", libsql.VectorFloat64, "a vector of type 2 (float64) cannot scan into Vector32 without rounding"},
			{"ragged float32", "x'0000803f0000'", libsql.VectorFloat32, "a 6-byte blob cannot scan into Vector32: a vector of type 1 (float32) is 4 bytes per element"},
			{"unknown type", "x'0000803f07'", 7, "it ends in 7, which is no vector type"},
			{"integer", "42", 0, "cannot scan int64 into Vector32"},
			{"text", "'[1,2'", 0, "it does not end with ']'"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var v libsql.Vector32
				err := db.QueryRowContext(t.Context(), "SELECT "+tc.expr).Scan(&v)
				var verr *libsql.VectorError
				require.True(t, errors.As(err, &verr), "want a *libsql.VectorError, got %T: %v", err, err)
				require.Equal(t, tc.typ, verr.Type)
				require.ErrorContains(t, err, tc.message)
			})
		}
		// The FLOAT64 vector goes into a Vector64.
		var w libsql.Vector64
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT vector64('[1,2]')").Scan(&w))
		require.Equal(t, libsql.Vector64{1, 2}, w)
	})
}
