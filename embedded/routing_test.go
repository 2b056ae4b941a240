package embedded_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded"
)

// TestReadYourWrites: 200 rounds of a write then a read, on any of the
// pool's connections, with no background sync: every read sees its write,
// because it waits until the local file has applied the write's index.
// With read-your-writes off the misses are only reported.
func TestReadYourWrites(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE rw (id INTEGER PRIMARY KEY, v INTEGER)")
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "off"}[on]
		t.Run(name, func(t *testing.T) {
			r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(time.Hour), embedded.WithReadYourWrites(on))
			r.db.SetMaxOpenConns(4)
			r.sync(t)
			misses := 0
			for i := range 200 {
				id := i + 1
				if !on {
					id += 1000
				}
				mustExec(t, r.db, "INSERT INTO rw (id, v) VALUES (?, ?)", id, i)
				var v int
				err := r.db.QueryRowContext(testCtx(t), "SELECT v FROM rw WHERE id = ?", id).Scan(&v)
				if errors.Is(err, sql.ErrNoRows) {
					misses++
					continue
				}
				if err != nil || v != i {
					t.Fatalf("round %d: %v, %d", i, err, v)
				}
			}
			if on && misses != 0 {
				t.Errorf("%d of 200 reads missed their write", misses)
			}
			t.Logf("read-your-writes %s: %d of 200 reads missed their write", name, misses)
		})
	}
}

// TestTransactions: every statement of a transaction runs on the primary
// and sees the transaction's writes; a commit is seen locally after, a
// rollback never; a read-only transaction refuses writes; a transaction
// begun with SQL on a *sql.Conn is followed to its COMMIT.
func TestTransactions(t *testing.T) {
	p := sqlds.Start(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	ctx := testCtx(t)
	mustExec(t, r.db, "CREATE TABLE acct (id INTEGER PRIMARY KEY, bal INTEGER)")
	mustExec(t, r.db, "INSERT INTO acct VALUES (1, 100), (2, 100)")

	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE acct SET bal = bal - 10 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	var bal int
	if err := tx.QueryRowContext(ctx, "SELECT bal FROM acct WHERE id = 1").Scan(&bal); err != nil || bal != 90 {
		t.Fatalf("inside the transaction: %d, %v", bal, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := one[int](t, r.db, "SELECT bal FROM acct WHERE id = 1"); got != 90 {
		t.Errorf("after commit: %d", got)
	}

	tx, err = r.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM acct"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	r.sync(t)
	if got := one[int](t, r.db, "SELECT count(*) FROM acct"); got != 2 {
		t.Errorf("after rollback: %d rows", got)
	}

	ro, err := r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.QueryRowContext(ctx, "SELECT sum(bal) FROM acct").Scan(&bal); err != nil || bal != 190 {
		t.Errorf("read-only transaction: %d, %v", bal, err)
	}
	if _, err := ro.ExecContext(ctx, "UPDATE acct SET bal = 0"); err == nil {
		t.Error("a write in a read-only transaction ran")
	}
	ro.Rollback()

	c, err := r.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"BEGIN IMMEDIATE", "INSERT INTO acct VALUES (3, 5)"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM acct").Scan(&n); err != nil || n != 3 {
		t.Fatalf("inside BEGIN: %d rows, %v (want its own insert)", n, err)
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := one[int](t, r.db, "SELECT count(*) FROM acct"); got != 3 {
		t.Errorf("after COMMIT: %d rows", got)
	}
}

// TestPragmas: PRAGMAs that read run locally; those that would change the
// local file or a local connection are refused.
func TestPragmas(t *testing.T) {
	p, prim := startPrimary(t)
	mustExec(t, prim, "CREATE TABLE t (a INTEGER, b TEXT)")
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	r.sync(t)
	if got := one[string](t, r.db, "PRAGMA journal_mode"); got != "wal" {
		t.Errorf("journal_mode %q (read locally)", got)
	}
	if got := one[string](t, r.db, "SELECT group_concat(name) FROM pragma_table_info('t')"); got != "a,b" {
		t.Errorf("table_info: %q", got)
	}
	rows, err := r.db.Query("PRAGMA table_info(t)")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, q := range []string{"PRAGMA journal_mode = DELETE", "PRAGMA foreign_keys = ON", "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA optimize"} {
		if _, err := r.db.Exec(q); !errors.Is(err, embedded.ErrPragma) {
			t.Errorf("%s: %v, want ErrPragma", q, err)
		}
	}
}

// libsqlSchema is every piece of libSQL-only schema that sqld 0.24.32
// accepts (CREATE FUNCTION ... LANGUAGE wasm it refuses): vector indexes
// (libsql_vector_idx) on every vector type, with options, partial, on a
// WITHOUT ROWID and on a RANDOM ROWID table, and with a normal index
// beside; RANDOM ROWID; ALTER TABLE ... ALTER COLUMN.
var libsqlSchema = []string{
	"CREATE TABLE v (id INTEGER PRIMARY KEY, emb F32_BLOB(4), tag TEXT)",
	"CREATE INDEX v_idx ON v (libsql_vector_idx(emb))",
	"CREATE INDEX v_tag ON v (tag)",
	`INSERT INTO v WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 100)
		SELECT x, vector32('[' || x || ', 1, 2, ' || (x % 5) || ']'), 't' || (x % 7) FROM g`,
	"CREATE VIEW v_view AS SELECT id, tag FROM v WHERE id % 2 = 0",
	"CREATE TABLE w (id INTEGER PRIMARY KEY, v_id INTEGER, note TEXT)",
	"INSERT INTO w SELECT id, 101 - id, 'w' || id FROM v WHERE id <= 50",
	"CREATE TABLE r (x INTEGER, y TEXT) RANDOM ROWID",
	"CREATE INDEX r_x ON r (x)",
	"INSERT INTO r (x, y) SELECT id, tag FROM v",
	"CREATE TABLE rv (id INTEGER PRIMARY KEY, e F32_BLOB(4)) RANDOM ROWID",
	"CREATE INDEX rv_idx ON rv (libsql_vector_idx(e))",
	"INSERT INTO rv (e) SELECT emb FROM v WHERE id <= 30",
	"CREATE TABLE wr (id INTEGER PRIMARY KEY, e F32_BLOB(4)) WITHOUT ROWID",
	"CREATE INDEX wr_idx ON wr (libsql_vector_idx(e))",
	"INSERT INTO wr SELECT id, emb FROM v WHERE id <= 40",
	"CREATE TABLE opt (id INTEGER PRIMARY KEY, e F32_BLOB(4))",
	"CREATE INDEX opt_l2 ON opt (libsql_vector_idx(e, 'metric=l2', 'compress_neighbors=float8', 'max_neighbors=8'))",
	"CREATE INDEX opt_part ON opt (libsql_vector_idx(e)) WHERE id > 5",
	"INSERT INTO opt SELECT id, emb FROM v WHERE id <= 20",
	"ALTER TABLE opt ALTER COLUMN e TO e F32_BLOB(4) NOT NULL",
	"CREATE TABLE t64 (id INTEGER PRIMARY KEY, e F64_BLOB(3))",
	"CREATE INDEX t64_idx ON t64 (libsql_vector_idx(e))",
	"INSERT INTO t64 SELECT id, vector64('[' || id || ', 0.5, -1]') FROM v WHERE id <= 25",
	"CREATE TABLE t16 (id INTEGER PRIMARY KEY, e F16_BLOB(3))",
	"CREATE INDEX t16_idx ON t16 (libsql_vector_idx(e))",
	"INSERT INTO t16 SELECT id, vector16('[' || id || ', 0.5, -1]') FROM v WHERE id <= 25",
	"CREATE TABLE tb16 (id INTEGER PRIMARY KEY, e FB16_BLOB(3))",
	"CREATE INDEX tb16_idx ON tb16 (libsql_vector_idx(e))",
	"INSERT INTO tb16 SELECT id, vectorb16('[' || id || ', 0.5, -1]') FROM v WHERE id <= 25",
	"CREATE TABLE t8 (id INTEGER PRIMARY KEY, e F8_BLOB(3))",
	"CREATE INDEX t8_idx ON t8 (libsql_vector_idx(e))",
	"INSERT INTO t8 SELECT id, vector8('[' || id || ', 0.5, -1]') FROM v WHERE id <= 25",
	"CREATE TABLE t1 (id INTEGER PRIMARY KEY, e F1BIT_BLOB(8))",
	"CREATE INDEX t1_idx ON t1 (libsql_vector_idx(e))",
	"INSERT INTO t1 SELECT id, vector1bit('[1, -1, 1, -1, ' || (id % 3 - 1) || ', 1, 1, -1]') FROM v WHERE id <= 25",
	"CREATE TABLE f32 (id INTEGER PRIMARY KEY, e FLOAT32(2))",
	"CREATE INDEX f32_idx ON f32 (libsql_vector_idx(e))",
	"INSERT INTO f32 SELECT id, vector32('[' || id || ', 1]') FROM v WHERE id <= 25",
}

// libsqlReads are the query shapes that can reach an index: counts,
// covering scans, ORDER BY, GROUP BY, DISTINCT, joins, subqueries, a view,
// the raw schema, and the checks. Each must answer on the replica what it
// answers on the primary.
var libsqlReads = []string{
	"SELECT count(*) FROM v",
	"SELECT count(*), sum(id) FROM v WHERE id > 0",
	"SELECT count(emb), count(tag) FROM v",
	"SELECT id FROM v ORDER BY id",
	"SELECT id FROM v ORDER BY id DESC LIMIT 7",
	"SELECT id, emb FROM v ORDER BY emb LIMIT 5",
	"SELECT count(DISTINCT emb) FROM v",
	"SELECT emb FROM v GROUP BY emb ORDER BY emb LIMIT 3",
	"SELECT tag, count(*) FROM v GROUP BY tag ORDER BY tag",
	"SELECT id FROM v WHERE tag = 't3' ORDER BY id",
	"SELECT id FROM v WHERE emb = (SELECT emb FROM v WHERE id = 42)",
	"SELECT id FROM v WHERE emb IS NULL",
	"SELECT min(emb) = (SELECT emb FROM v WHERE id = 1), max(id) FROM v",
	"SELECT EXISTS (SELECT 1 FROM v)",
	"SELECT count(*) FROM v JOIN w ON w.v_id = v.id",
	"SELECT v.id, w.note FROM w JOIN v ON v.emb = (SELECT emb FROM v AS v2 WHERE v2.id = w.v_id) ORDER BY w.id LIMIT 5",
	"SELECT count(*) FROM v AS a JOIN v AS b ON a.emb = b.emb",
	"SELECT count(*) FROM v WHERE id IN (SELECT x FROM r)",
	"SELECT count(*), sum(id) FROM v_view",
	"SELECT count(*), sum(x) FROM r",
	"SELECT rowid, x, y FROM r ORDER BY rowid",
	"SELECT x FROM r WHERE x BETWEEN 10 AND 15 ORDER BY x",
	"SELECT count(*) FROM rv",
	"SELECT count(*), sum(id) FROM wr",
	"SELECT id FROM wr ORDER BY e LIMIT 3",
	"SELECT count(*), sum(id) FROM opt",
	"SELECT count(*) FROM opt WHERE id > 5",
	"SELECT count(*), sum(id) FROM t64",
	"SELECT count(*), sum(id) FROM t16",
	"SELECT count(*), sum(id) FROM tb16",
	"SELECT count(*), sum(id) FROM t8",
	"SELECT count(*), sum(id) FROM t1",
	"SELECT count(*), sum(id) FROM f32",
	"SELECT count(*) FROM v_idx_shadow",
	"SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
	"PRAGMA integrity_check",
	"PRAGMA quick_check",
	"PRAGMA integrity_check(5)",
	"PRAGMA integrity_check(v)",
	"PRAGMA table_info(v)",
	"SELECT name FROM pragma_table_info('opt')",
}

// libsqlSchemaReads describe indexes the local SQLite cannot load: they go
// to the primary, so they match it but need it.
var libsqlSchemaReads = []string{
	"PRAGMA index_list(v)",
	"PRAGMA index_info(v_idx)",
	"SELECT name FROM pragma_index_list('v') ORDER BY name",
}

// TestLibSQLSchema: with every piece of libSQL-only schema on the
// primary, each read through the replica answers what the primary
// answers; the reads of the local file go on answering the same with the
// primary stopped; the replica goes on syncing. To vanilla SQLite a
// vector index is an empty b-tree on an expression index (a count through
// it said 0), and RANDOM ROWID a syntax error (every statement failed
// with "malformed database schema").
func TestLibSQLSchema(t *testing.T) {
	p, prim := startPrimary(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	r.sync(t) // the replica exists before the schema arrives, and after
	for _, q := range libsqlSchema {
		mustExec(t, prim, q)
	}
	r.sync(t)
	want := map[string]string{}
	for _, q := range append(libsqlReads, libsqlSchemaReads...) {
		want[q] = render(t, prim, q)
		if got := render(t, r.db, q); got != want[q] {
			t.Errorf("%s\nreplica: %s\nprimary: %s", q, got, want[q])
		}
	}
	if want["SELECT count(*) FROM v"] != "[100]" || want["PRAGMA integrity_check"] != "[ok]" {
		t.Fatalf("the primary answers count %s, integrity_check %s", want["SELECT count(*) FROM v"], want["PRAGMA integrity_check"])
	}

	// Syncing goes on past the schema; new rows are read locally.
	mustExec(t, prim, "INSERT INTO r (x, y) VALUES (1000, 'late')")
	mustExec(t, prim, "INSERT INTO v (id, emb, tag) VALUES (1000, vector32('[9, 9, 9, 9]'), 'late')")
	r.sync(t)
	for _, q := range libsqlReads {
		want[q] = render(t, prim, q)
		if got := render(t, r.db, q); got != want[q] {
			t.Errorf("after a sync: %s\nreplica: %s\nprimary: %s", q, got, want[q])
		}
	}

	// Each read of libsqlReads ran on the local file: with the primary
	// gone it answers the same.
	p.Kill()
	for _, q := range libsqlReads {
		if got := render(t, r.db, q); got != want[q] {
			t.Errorf("with the primary stopped: %s\nreplica: %s\nprimary: %s", q, got, want[q])
		}
	}
}

// render returns the rows of a query as text ([]byte as hex), or the
// error it met.
func render(t testing.TB, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.QueryContext(testCtx(t), q)
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "error: " + err.Error()
		}
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				vals[i] = fmt.Sprintf("x'%x'", bs)
			}
		}
		fmt.Fprintf(&b, "%v", vals)
	}
	if err := rows.Err(); err != nil {
		return "error: " + err.Error()
	}
	return b.String()
}

// TestVectorOnPrimary: vector SQL through the Connector answers what the
// primary answers (it runs locally since issue 24: vector_test.go).
func TestVectorOnPrimary(t *testing.T) {
	p, _ := axesPrimary(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	r.sync(t)
	if got := one[int](t, r.db, "SELECT id FROM vector_top_k('items_idx', vector32('[0,1,0.1]'), 1)"); got != 2 {
		t.Errorf("vector_top_k: id %d", got)
	}
	if got := one[float64](t, r.db, "SELECT vector_distance_cos(e, vector32('[1,0,0]')) FROM items WHERE id = 1"); got > 1e-6 {
		t.Errorf("vector_distance_cos: %v", got)
	}
}

// TestWebSocketPrimary: statements go to a ws:// primary; replication
// takes the same server's HTTP port.
func TestWebSocketPrimary(t *testing.T) {
	p := sqlds.Start(t)
	r := openReplica(t, "", p.WS(), embedded.WithSyncInterval(0))
	mustExec(t, r.db, "CREATE TABLE w (v TEXT)")
	mustExec(t, r.db, "INSERT INTO w VALUES ('over ws')")
	if got := one[string](t, r.db, "SELECT v FROM w"); got != "over ws" {
		t.Errorf("read after a write over ws: %q", got)
	}
}

// TestOfflinePrimary: with the primary down, local reads go on and writes
// fail within their context with a PrimaryError that says they did not
// run; once the primary is back, writes and syncs work again.
func TestOfflinePrimary(t *testing.T) {
	p := sqlds.Start(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(50*time.Millisecond))
	mustExec(t, r.db, "CREATE TABLE o (v INTEGER)")
	mustExec(t, r.db, "INSERT INTO o VALUES (1)")
	if got := one[int](t, r.db, "SELECT count(*) FROM o"); got != 1 {
		t.Fatalf("%d rows", got)
	}
	p.Kill()

	for range 20 { // readers carry on while syncs fail
		if got := one[int](t, r.db, "SELECT count(*) FROM o"); got != 1 {
			t.Fatalf("offline read: %d rows", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := r.db.ExecContext(ctx, "INSERT INTO o VALUES (2)")
	var pe *embedded.PrimaryError
	if !errors.As(err, &pe) || pe.MayHaveRun {
		t.Fatalf("offline write: %v, want a PrimaryError that did not run", err)
	}
	if !strings.Contains(err.Error(), "unreachable") || time.Since(start) > 3*time.Second {
		t.Errorf("offline write: %v after %v", err, time.Since(start))
	}
	if _, err := r.c.Sync(ctx); err == nil {
		t.Error("Sync with the primary down succeeded")
	}

	restartSqld(t, p)
	mustExec(t, r.db, "INSERT INTO o VALUES (3)")
	if got := one[int](t, r.db, "SELECT count(*) FROM o"); got != 2 {
		t.Errorf("after the primary came back: %d rows", got)
	}
}

// TestReadYourWritesBound: a read after a write waits for a sync only as
// long as the read's context and WithReadYourWritesWait allow, then fails
// with ErrNotReplicated; reads without a write before them do not wait.
func TestReadYourWritesBound(t *testing.T) {
	p := sqlds.Start(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0), embedded.WithReadYourWritesWait(300*time.Millisecond))
	mustExec(t, r.db, "CREATE TABLE b (v INTEGER)")
	if got := one[int](t, r.db, "SELECT count(*) FROM b"); got != 0 {
		t.Fatalf("%d rows", got)
	}
	mustExec(t, r.db, "INSERT INTO b VALUES (1)")
	p.Kill() // the write ran; no sync can fetch it now

	tests := []struct {
		name    string
		timeout time.Duration
		max     time.Duration
	}{
		{"the bound", time.Minute, 2 * time.Second},
		{"the context", 100 * time.Millisecond, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
		start := time.Now()
		var n int
		err := r.db.QueryRowContext(ctx, "SELECT count(*) FROM b").Scan(&n)
		took := time.Since(start)
		cancel()
		var nr *embedded.NotReplicatedError
		if !errors.Is(err, embedded.ErrNotReplicated) || !errors.As(err, &nr) || nr.Want == 0 {
			t.Errorf("%s: %v, want ErrNotReplicated", tt.name, err)
		}
		if took > tt.max {
			t.Errorf("%s: the read waited %v", tt.name, took)
		}
	}
}

// TestBatch: libsql.Batch on a replica's connection runs on the primary,
// all or nothing, inside a transaction too; the next local read, on
// another connection, sees what it wrote (read-your-writes), and a batch
// that failed wrote nothing.
func TestBatch(t *testing.T) {
	p := sqlds.Start(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(time.Hour))
	ctx := testCtx(t)
	mustExec(t, r.db, "CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT)")
	c, err := r.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for round := range 20 {
		id := round * 2
		out, err := libsql.Batch(ctx, c, []libsql.Statement{
			{SQL: "INSERT INTO b VALUES (?, 'x')", Args: []any{id + 1}},
			{SQL: "INSERT INTO b VALUES (?, 'y')", Args: []any{id + 2}},
			{SQL: "SELECT count(*) FROM b"},
		}, libsql.WithBatchMode(libsql.BatchWrite))
		if err != nil {
			t.Fatal(err)
		}
		if got := out[2].Rows[0][0]; got != int64(id+2) {
			t.Fatalf("round %d: the batch's own count %v, want %d", round, got, id+2)
		}
		// Another connection of the pool reads locally.
		if got := one[int](t, r.db, "SELECT count(*) FROM b"); got != id+2 {
			t.Fatalf("round %d: the local read after the batch: %d rows, want %d", round, got, id+2)
		}
	}
	_, err = libsql.Batch(ctx, c, []libsql.Statement{
		{SQL: "INSERT INTO b VALUES (100, 'z')"},
		{SQL: "INSERT INTO b VALUES (1, 'duplicate')"},
	})
	if !errors.Is(err, libsql.ErrConstraint) {
		t.Fatalf("a failing batch: %v", err)
	}
	r.sync(t)
	if got := one[int](t, r.db, "SELECT count(*) FROM b WHERE id = 100"); got != 0 {
		t.Fatal("a failed batch's first statement is on the replica")
	}

	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO b VALUES (200, 'tx')"); err != nil {
		t.Fatal(err)
	}
	if _, err := libsql.Batch(ctx, c, []libsql.Statement{{SQL: "INSERT INTO b VALUES (201, 'tx batch')"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := one[int](t, r.db, "SELECT count(*) FROM b WHERE id >= 200"); got != 2 {
		t.Fatalf("after the transaction's commit: %d rows, want 2", got)
	}
}

// kindsTracer records the kind and SQL of every event that ends.
type kindsTracer struct {
	mu   sync.Mutex
	seen []string
}

func (k *kindsTracer) Start(ctx context.Context, _ *libsql.TraceEvent) context.Context { return ctx }
func (k *kindsTracer) End(_ context.Context, ev *libsql.TraceEvent) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ev.Kind == libsql.TraceStatement {
		k.seen = append(k.seen, ev.SQL)
	}
}

// TestPrimaryOptions: WithPrimaryOptions reaches the primary's Connector:
// its tracer sees the statements that went to the primary, and none of
// the local reads.
func TestPrimaryOptions(t *testing.T) {
	p := sqlds.Start(t)
	tr := &kindsTracer{}
	r := openReplica(t, "", p.URL(), embedded.WithPrimaryOptions(libsql.WithTracer(tr)))
	mustExec(t, r.db, "CREATE TABLE po (v INTEGER)")
	mustExec(t, r.db, "INSERT INTO po VALUES (1)")
	if got := one[int](t, r.db, "SELECT count(*) FROM po"); got != 1 {
		t.Fatalf("%d rows", got)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	want := []string{"CREATE TABLE po (v INTEGER)", "INSERT INTO po VALUES (1)"}
	if !slices.Equal(tr.seen, want) {
		t.Fatalf("the primary's tracer saw %q, want %q", tr.seen, want)
	}
}
