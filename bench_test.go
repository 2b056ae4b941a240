package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gohrana/libsql/codec"
	_ "github.com/gohrana/libsql/codec/gojson" // the baseline, for comparison
	"github.com/gohrana/libsql/internal/fixture"
	"github.com/gohrana/libsql/internal/session"
)

var benchCodecs = []string{"direct", "gojson"}

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

// cannedServer answers every pipeline request with body.
func cannedServer(tb testing.TB, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// BenchmarkScan is what a user sees: db.Query and rows.Scan of the standard
// 20,000-row result through database/sql, served by a canned local HTTP
// server so that the server's work does not dominate. One op is the whole
// result; ns/row includes HTTP, decoding, row delivery and Scan.
func BenchmarkScan(b *testing.B) {
	const n = 20000
	srv := cannedServer(b, fixture.Response(n))
	for _, name := range benchCodecs {
		for _, mode := range []string{"typed", "any"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				db, err := sql.Open(DriverName, srv.URL+"?codec="+name)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				ctx := context.Background()
				b.ReportAllocs()
				b.SetBytes(int64(len(fixture.Response(n))))
				for b.Loop() {
					if got := scanAll(b, ctx, db, mode); got != n {
						b.Fatalf("%d rows", got)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}

func scanAll(b *testing.B, ctx context.Context, db *sql.DB, mode string) int {
	rows, err := db.QueryContext(ctx, fixture.Query)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	count := 0
	var (
		a, f int64
		s    string
		c    float64
		d    []byte
		e    sql.NullString
		anys = make([]any, 6)
		ptrs = []any{&anys[0], &anys[1], &anys[2], &anys[3], &anys[4], &anys[5]}
	)
	for rows.Next() {
		var err error
		if mode == "typed" {
			err = rows.Scan(&a, &s, &c, &d, &e, &f)
		} else {
			err = rows.Scan(ptrs...)
		}
		if err != nil {
			b.Fatal(err)
		}
		count++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return count
}

// BenchmarkScanFloor is database/sql's own cost per row, the floor under
// BenchmarkScan: the same 20,000 rows, scanned the same way, from a driver
// that does nothing but copy values it holds in memory (the rows the
// direct codec decodes from the canned response, as driver.Values) into
// Next's dest. What BenchmarkScan costs beyond it is this driver's.
func BenchmarkScanFloor(b *testing.B) {
	const n = 20000
	srv := cannedServer(b, fixture.Response(n))
	src, err := sql.Open(DriverName, srv.URL+"?codec=direct")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	rows, err := src.Query(fixture.Query)
	if err != nil {
		b.Fatal(err)
	}
	cols, _ := rows.Columns()
	var held [][]driver.Value
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		row := make([]driver.Value, len(cols))
		for i, v := range vals {
			row[i] = v
		}
		held = append(held, row)
	}
	if err := rows.Err(); err != nil || len(held) != n {
		b.Fatalf("%d rows: %v", len(held), err)
	}
	db := sql.OpenDB(floorConnector{cols: cols, rows: held})
	defer db.Close()
	for _, mode := range []string{"typed", "any"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if got := scanAll(b, ctx, db, mode); got != n {
					b.Fatalf("%d rows", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

// floorConnector is the driver of BenchmarkScanFloor: every query returns
// rows, whatever its text.
type floorConnector struct {
	cols []string
	rows [][]driver.Value
}

func (c floorConnector) Connect(context.Context) (driver.Conn, error) { return floorConn(c), nil }
func (c floorConnector) Driver() driver.Driver                        { return nil }

type floorConn floorConnector

func (c floorConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c floorConn) Close() error                        { return nil }
func (c floorConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c floorConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &floorRows{c: c}, nil
}

type floorRows struct {
	c    floorConn
	next int
}

func (r *floorRows) Columns() []string { return r.c.cols }
func (r *floorRows) Close() error      { return nil }
func (r *floorRows) Next(dest []driver.Value) error {
	if r.next == len(r.c.rows) {
		return io.EOF
	}
	copy(dest, r.c.rows[r.next])
	r.next++
	return nil
}
