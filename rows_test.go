package libsql

import (
	"database/sql/driver"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/fixture"
	"github.com/gohrana/libsql/internal/session"
)

// decodeFixture decodes the standard n-row response with the named codec.
func decodeFixture(tb testing.TB, codecName string, n int) *session.Result {
	cd, _, err := lookupCodec(codecName)
	if err != nil {
		tb.Fatal(err)
	}
	b := session.NewResult()
	resp := b.Response()
	resp.Body = fixture.Response(n)
	if err := cd.DecodePipelineResponse(resp.Body, &resp.Pipeline); err != nil {
		tb.Fatal(err)
	}
	return b
}

// rowsOver returns rows over a decoded result that they do not own.
func rowsOver(res *codec.StmtResult) *pipelineRows {
	r := &pipelineRows{res: res}
	r.setCols(res.Cols)
	return r
}

// BenchmarkRowsNext measures row delivery alone: Rows.Next over an already
// decoded 20,000-row result into []driver.Value. One op is the whole result.
func BenchmarkRowsNext(b *testing.B) {
	const n = 20000
	for _, name := range benchCodecs {
		b.Run(name, func(b *testing.B) {
			buf := decodeFixture(b, name, n)
			res := buf.Stmt()
			dest := make([]driver.Value, len(res.Cols))
			b.ReportAllocs()
			for b.Loop() {
				r := rowsOver(res)
				for r.Next(dest) == nil {
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

func TestRowsNextAllocsPerRow(t *testing.T) {
	const n = 20000
	for _, name := range benchCodecs {
		buf := decodeFixture(t, name, n)
		res := buf.Stmt()
		dest := make([]driver.Value, len(res.Cols))
		allocs := testing.AllocsPerRun(3, func() {
			r := rowsOver(res)
			for r.Next(dest) == nil {
			}
		})
		if perRow := allocs / n; perRow > 0.05 {
			t.Errorf("%s: %.4f allocations per row, want <= 0.05", name, perRow)
		}
	}
}

// TestRowValuesStayValid checks the arena lifetime promise through the
// driver: values handed out stay unchanged after later rows and Close.
func TestRowValuesStayValid(t *testing.T) {
	const n = 3000
	for _, name := range benchCodecs {
		buf := decodeFixture(t, name, n)
		r := newRows(buf)
		var kept [][]driver.Value
		for {
			dest := make([]driver.Value, 6)
			if r.Next(dest) != nil {
				break
			}
			kept = append(kept, dest)
		}
		r.Close()
		// Reuse the pooled structures, as a later query would.
		again := decodeFixture(t, name, 10)
		again.Release()
		if len(kept) != n {
			t.Fatalf("%s: %d rows", name, len(kept))
		}
		for i, row := range kept {
			want := fixture.MakeRow(i + 1)
			if row[0] != want.A || row[1] != want.B || row[2] != want.C || string(row[3].([]byte)) != string(want.D) || row[5] != want.F {
				t.Fatalf("%s: row %d changed: %v", name, i+1, row)
			}
			if (want.E == nil) != (row[4] == nil) || (want.E != nil && row[4] != *want.E) {
				t.Fatalf("%s: row %d column e: %v", name, i+1, row[4])
			}
		}
	}
}
