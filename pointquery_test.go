package libsql

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/gohrana/libsql/internal/fixture"
)

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
