package libsql

// The costs of the driver's whole path through database/sql, which no one
// source file owns: the standard 20,000-row scan (BenchmarkScan, and
// database/sql's own floor under it), and the point query and Exec, whose
// allocations are held (TestPointQueryAllocs). Row delivery alone is in
// rows_test.go; the scan over WebSocket in ws_bench_test.go.

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	_ "github.com/gohrana/libsql/codec/gojson" // the baseline, for comparison
	"github.com/gohrana/libsql/internal/fixture"
)

// benchCodecs are the codecs the benchmarks compare (rows_test.go's too).
var benchCodecs = []string{"direct", "gojson"}

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

// scanAll is fixture.ScanAll, failing b on an error.
func scanAll(b *testing.B, ctx context.Context, db *sql.DB, mode string) int {
	n, err := fixture.ScanAll(ctx, db, mode)
	if err != nil {
		b.Fatal(err)
	}
	return n
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

// Point queries against canned answers: the cost of the driver's own path
// for the smallest statement, which tracing must leave unchanged when no
// Tracer is set.

// pointQueryAllocs and pointExecAllocs are the allocations of one point
// query (QueryRowContext and Scan of one row, through database/sql) and of
// one Exec, counted before tracing came: a Tracer left unset must not add
// any (Go 1.26). Lower them when the path gets cheaper.
const (
	pointQueryAllocs = 46
	pointExecAllocs  = 28
)

// cannedRoundTripper answers every POST with body and every GET (the
// version probe) with an empty 200, in process: no server's allocations
// are counted with the driver's.
type cannedRoundTripper struct {
	body   []byte
	length string
}

func (rt *cannedRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}
	if req.Method == http.MethodPost {
		resp.Header["Content-Type"] = []string{"application/json"}
		resp.Header["Content-Length"] = []string{rt.length}
		resp.ContentLength = int64(len(rt.body))
		resp.Body = io.NopCloser(bytes.NewReader(rt.body))
	}
	return resp, nil
}

// pointDB opens a database whose every request is answered with one row
// of the fixture, with opts.
func pointDB(tb testing.TB, opts ...ConnectorOption) *sql.DB {
	tb.Helper()
	body := fixture.Response(1)
	rt := &cannedRoundTripper{body: body, length: strconv.Itoa(len(body))}
	cfg := NewConfig()
	cfg.URL = "http://canned.invalid"
	cfg.Codec = "direct"
	c, err := NewConnector(cfg, append([]ConnectorOption{WithRoundTripper(rt)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxIdleConns(1)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// pointQuery runs one point query and scans its row.
func pointQuery(tb testing.TB, ctx context.Context, db *sql.DB) {
	var (
		a, f int64
		s    string
		c    float64
		d    []byte
		e    sql.NullString
	)
	if err := db.QueryRowContext(ctx, fixture.Query+" LIMIT ?", 1).Scan(&a, &s, &c, &d, &e, &f); err != nil {
		tb.Fatal(err)
	}
}

// pointExec runs one Exec.
func pointExec(tb testing.TB, ctx context.Context, db *sql.DB) {
	if _, err := db.ExecContext(ctx, "UPDATE bench SET f = ? WHERE a = ?", 1, 2); err != nil {
		tb.Fatal(err)
	}
}

func TestPointQueryAllocs(t *testing.T) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("the race detector and coverage change allocation counts")
	}
	ctx := context.Background()
	db := pointDB(t)
	pointQuery(t, ctx, db) // the probe, the pools and the connection
	if n := testing.AllocsPerRun(200, func() { pointQuery(t, ctx, db) }); n > pointQueryAllocs {
		t.Errorf("a point query allocates %.1f times, more than the %d counted before tracing", n, pointQueryAllocs)
	} else {
		t.Logf("a point query allocates %.1f times", n)
	}
	if n := testing.AllocsPerRun(200, func() { pointExec(t, ctx, db) }); n > pointExecAllocs {
		t.Errorf("a point Exec allocates %.1f times, more than the %d counted before tracing", n, pointExecAllocs)
	} else {
		t.Logf("a point Exec allocates %.1f times", n)
	}
}

// BenchmarkPointQuery is one point query through database/sql, answered
// in process: untraced, and with a Tracer that does nothing (the driver's
// own cost of tracing: the events and the Tracer's calls).
func BenchmarkPointQuery(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []ConnectorOption
	}{
		{"untraced", nil},
		{"traced", []ConnectorOption{WithTracer(nopTracer{})}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db := pointDB(b, bc.opts...)
			pointQuery(b, ctx, db)
			b.ReportAllocs()
			for b.Loop() {
				pointQuery(b, ctx, db)
			}
		})
	}
}

// nopTracer is a Tracer that does nothing.
type nopTracer struct{}

func (nopTracer) Start(ctx context.Context, _ *TraceEvent) context.Context { return ctx }
func (nopTracer) End(context.Context, *TraceEvent)                         {}
