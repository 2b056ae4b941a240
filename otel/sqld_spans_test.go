package otellibsql_test

import (
	"errors"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
	otellibsql "github.com/gohrana/libsql/otel"
)

// rowsInBig is the size of the table whose scan is over the server's
// response limit (64 KB here), so that it streams through a cursor.
const rowsInBig = 2500

// TestSqld: against a real sqld over HTTP and WebSocket, statements,
// transactions and errors have their spans, the requests the bytes and
// server time sqld reported, and a result over the response limit its
// cursor's fetches. The sqld is a process of the test's own
// (internal/sqldproc): the binary of scripts/sqld.sh or $LIBSQL_OTEL_SQLD.
func TestSqld(t *testing.T) {
	srv := sqldproc.Starter{Env: "LIBSQL_OTEL_SQLD"}.Start(t, "--max-response-size", "64KB")
	for _, transport := range []string{libsql.TransportHTTP, libsql.TransportWS} {
		t.Run(transport, func(t *testing.T) {
			cfg := libsql.NewConfig()
			cfg.URL = srv.URL()
			cfg.Transport = transport
			db, rec := openDB(t, cfg)
			ctx := t.Context()
			table := "t_" + transport
			for _, q := range []string{
				"CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, v TEXT)",
				"INSERT INTO " + table + " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
					strconv.Itoa(rowsInBig) + ") SELECT x, printf('row %08d of the big table', x) FROM c",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			ins := rec.one(t, "INSERT")
			wantAttrs(t, ins, map[attribute.Key]string{otellibsql.TransportKey: transport, otellibsql.RowsAffectedKey: strconv.Itoa(rowsInBig)})
			req := rec.named("libsql.request execute")[1]
			if a := attrs(req); a[otellibsql.BytesSentKey].AsInt64() == 0 || a[otellibsql.BytesReceivedKey].AsInt64() == 0 ||
				a[otellibsql.ServerTimeKey].AsFloat64() <= 0 {
				t.Errorf("the INSERT's request: %v", req.Attributes)
			}
			rec.reset()

			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET v = ? WHERE id = 1", "first"); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES (1, 'again')"); !errors.Is(err, libsql.ErrUniqueViolation) {
				t.Fatalf("the duplicate INSERT: %v", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			wantAttrs(t, rec.one(t, "UPDATE"), map[attribute.Key]string{otellibsql.BeginKey: "true", otellibsql.InTxKey: "true"})
			if dup := rec.one(t, "INSERT"); dup.Status.Code != codes.Error {
				t.Errorf("the duplicate INSERT: status %+v", dup.Status)
			} else {
				wantAttrs(t, dup, map[attribute.Key]string{semconv.DBResponseStatusCodeKey: "SQLITE_CONSTRAINT"}, otellibsql.BeginKey)
			}
			rec.one(t, "COMMIT")
			rec.reset()

			if n := readRows(t, db, "SELECT id, v FROM "+table+" ORDER BY id"); n != rowsInBig {
				t.Fatalf("%d rows", n)
			}
			sel := rec.one(t, "SELECT")
			wantAttrs(t, sel, map[attribute.Key]string{semconv.DBResponseReturnedRowsKey: strconv.Itoa(rowsInBig)})
			rec.one(t, "libsql.request cursor")
			fetches, fetched := rec.named("libsql.fetch"), int64(0)
			for _, f := range fetches {
				if f.Parent.SpanID() != sel.SpanContext.SpanID() {
					t.Errorf("a fetch is not the SELECT's")
				}
				fetched += attrs(f)[otellibsql.RowsKey].AsInt64()
			}
			// One fetch: the body of /v3/cursor. Over WebSocket too: an
			// autocommit result past the response limit streams through
			// /v3/cursor on the same server (a side cursor), after a batch
			// on the stream found nothing there that a new stream lacks.
			if fetched != rowsInBig || len(fetches) != 1 {
				t.Errorf("%d fetches brought %d rows of %d:\n%s", len(fetches), fetched, rowsInBig, rec.tree())
			}
			if transport != libsql.TransportWS {
				return
			}
			// In a transaction the result stays on the transaction's
			// stream: fetch_cursor after fetch_cursor, each of at most
			// 1,000 rows (and of an eighth of the response limit, which
			// sqld applies too), each a span of the SELECT.
			rec.reset()
			tx, err = db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if n := readRows(t, tx, "SELECT id, v FROM "+table+" ORDER BY id"); n != rowsInBig {
				t.Fatalf("in a transaction: %d rows", n)
			}
			sel = rec.one(t, "SELECT")
			fetches, fetched = rec.named("libsql.fetch"), 0
			for _, f := range fetches {
				if f.Parent.SpanID() != sel.SpanContext.SpanID() {
					t.Errorf("a fetch is not the SELECT's")
				}
				fetched += attrs(f)[otellibsql.RowsKey].AsInt64()
			}
			if fetched != rowsInBig || len(fetches) < rowsInBig/1000+1 {
				t.Errorf("in a transaction, %d fetches brought %d rows of %d:\n%s", len(fetches), fetched, rowsInBig, rec.tree())
			}
		})
	}
}
