package otellibsql_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gohrana/libsql"
	otellibsql "github.com/gohrana/libsql/otel"
)

// recording is a tracer provider that keeps every ended span in memory.
type recording struct {
	*sdktrace.TracerProvider
	exp *tracetest.InMemoryExporter
}

func newRecording(t testing.TB) *recording {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return &recording{TracerProvider: tp, exp: exp}
}

// spans returns the spans ended so far, in the order they started.
func (r *recording) spans() tracetest.SpanStubs {
	spans := r.exp.GetSpans()
	slices.SortStableFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return spans
}

// reset forgets the spans ended so far.
func (r *recording) reset() { r.exp.Reset() }

// tree renders the spans ended so far by name, each under its parent, in
// the order they started; a span whose parent has not ended (or is not
// the test's) is a root.
func (r *recording) tree() string {
	spans := r.spans()
	ended := map[[8]byte]bool{}
	for _, s := range spans {
		ended[s.SpanContext.SpanID()] = true
	}
	var b strings.Builder
	var walk func(parent [8]byte, root bool, depth int)
	walk = func(parent [8]byte, root bool, depth int) {
		for _, s := range spans {
			p := s.Parent.SpanID()
			if root && !ended[p] || !root && p == parent {
				b.WriteString(strings.Repeat("  ", depth) + s.Name + "\n")
				walk(s.SpanContext.SpanID(), false, depth+1)
			}
		}
	}
	walk([8]byte{}, true, 0)
	return b.String()
}

// named returns the spans ended so far with the name.
func (r *recording) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range r.spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one span ended so far with the name.
func (r *recording) one(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	spans := r.named(name)
	if len(spans) != 1 {
		t.Fatalf("%d spans %q, want 1; spans:\n%s", len(spans), name, r.tree())
	}
	return spans[0]
}

// querier is what readRows queries: a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readRows runs query on q and reads its rows to the end, failing the test
// on an error; it returns how many there were.
func readRows(t *testing.T, q querier, query string) int {
	t.Helper()
	rows, err := q.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// oneOfKind returns the one span ended so far with the name, which must
// be of the kind.
func (r *recording) oneOfKind(t *testing.T, name string, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	s := r.one(t, name)
	if s.SpanKind != kind {
		t.Errorf("%s: kind %v, want %v", name, s.SpanKind, kind)
	}
	return s
}

func wantTree(t *testing.T, r *recording, want string) {
	t.Helper()
	if got := r.tree(); got != want {
		t.Errorf("spans:\n%s\nwant:\n%s", got, want)
	}
}

// attrs returns a span's attributes by key.
func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// wantAttrs checks that span s has the attributes want (by their values'
// text) and none of the keys in absent.
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[attribute.Key]string, absent ...attribute.Key) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if g, ok := got[k]; !ok || g.String() != v {
			t.Errorf("%s: %s = %q (set: %t), want %q", s.Name, k, g.String(), ok, v)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("%s: %s = %q, want none", s.Name, k, v.String())
		}
	}
}

// openDB opens a database on cfg, traced into a new recording, which it
// returns with it.
func openDB(t *testing.T, cfg *libsql.Config) (*sql.DB, *recording) {
	t.Helper()
	r := newRecording(t)
	c, err := libsql.NewConnector(cfg, libsql.WithTracer(newTracer(r)))
	if err != nil {
		t.Fatal(err)
	}
	return sqlOpenDB(t, c), r
}

// newTracer returns a Tracer whose spans r records.
func newTracer(r *recording) *otellibsql.Tracer {
	return otellibsql.NewTracer(otellibsql.WithTracerProvider(r))
}

// sqlOpenDB opens a database on c, closed when the test ends.
func sqlOpenDB(t *testing.T, c *libsql.Connector) *sql.DB {
	t.Helper()
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
}
