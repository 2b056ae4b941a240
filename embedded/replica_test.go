package embedded_test

import (
	"testing"

	"github.com/gohrana/libsql/embedded"
)

// TestBootstrapAndIncrements: a new replica of 20,000 rows, then new rows,
// updates and a schema change, each seen locally after a Sync with the
// primary's content and integrity_check ok.
func TestBootstrapAndIncrements(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "t", 20000)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))

	res := r.sync(t)
	if res.FramesSynced == 0 || res.FrameNo == 0 {
		t.Fatalf("first sync: %+v", res)
	}
	check := func(step string) {
		t.Helper()
		const q = "SELECT count(*) || '/' || sum(n) || '/' || max(v) FROM t"
		if got, want := one[string](t, r.db, q), one[string](t, prim, q); got != want {
			t.Fatalf("%s: local %s, primary %s", step, got, want)
		}
		if got := one[string](t, localFile(t, r.path), "PRAGMA integrity_check"); got != "ok" {
			t.Fatalf("%s: integrity_check %q", step, got)
		}
	}
	check("bootstrap")

	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (20001, 'new', 1)")
	mustExec(t, prim, "UPDATE t SET n = n + 1 WHERE id % 100 = 0")
	again := r.sync(t)
	if again.FrameNo <= res.FrameNo || again.FramesSynced == 0 {
		t.Fatalf("increment: %+v after %+v", again, res)
	}
	check("increments")

	mustExec(t, prim, "ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x'")
	mustExec(t, prim, "CREATE INDEX t_n ON t (n)")
	r.sync(t)
	check("schema change")
	if got := one[string](t, r.db, "SELECT extra FROM t WHERE id = 5"); got != "x" {
		t.Errorf("new column: %q", got)
	}
	before := r.sync(t)
	if got := r.sync(t); got.FramesSynced != 0 || got.FrameNo != before.FrameNo {
		t.Errorf("a sync with nothing new: %+v after %+v", got, before)
	}
}
