package embedded_test

import (
	"database/sql"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/embedded/internal/readloop"
)

const contentQuery = "SELECT (SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema ORDER BY name)) || '|' || (SELECT count(*) || '/' || coalesce(sum(n), 0) FROM t)"

// sameContent fails unless the replica and the primary have the same
// tables and rows of t, and the local file checks ok.
func sameContent(t *testing.T, step string, r *replica, prim *sql.DB) {
	t.Helper()
	sameContentKey(t, step, r, prim, "")
}

// sameContentKey is sameContent of a replica encrypted under key ("": in
// the clear).
func sameContentKey(t *testing.T, step string, r *replica, prim *sql.DB, key string) {
	t.Helper()
	if got, want := one[string](t, r.db, contentQuery), one[string](t, prim, contentQuery); got != want {
		t.Fatalf("%s: local %q, primary %q", step, got, want)
	}
	if got := one[string](t, localFileKey(t, r.path, key), "PRAGMA integrity_check"); got != "ok" {
		t.Fatalf("%s: integrity_check %q", step, got)
	}
}

// TestDeleteDropReuse: DELETE and DROP TABLE on the primary free pages
// that new tables then reuse (sqld refuses VACUUM, so the file does not
// shrink; localdb's tests take the shrinking path with crafted commits).
func TestDeleteDropReuse(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "t", 5000)
	fill(t, prim, "big", 5000)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	r.sync(t)
	sameContent(t, "start", r, prim)
	mustExec(t, prim, "DELETE FROM t WHERE id % 2 = 0")
	mustExec(t, prim, "DROP TABLE big")
	r.sync(t)
	sameContent(t, "delete and drop", r, prim)
	if free := one[int](t, localFile(t, r.path), "PRAGMA freelist_count"); free == 0 {
		t.Error("no free pages after DROP TABLE")
	}
	fill(t, prim, "reuse", 3000)
	r.sync(t)
	sameContent(t, "reuse", r, prim)
	if got := one[int](t, r.db, "SELECT count(*) FROM reuse"); got != 3000 {
		t.Errorf("reuse: %d rows", got)
	}
}

// TestCompaction: with --max-log-size 1 the primary compacts its log; a
// new replica and one left behind both take the NEED_SNAPSHOT path and end
// with the primary's content.
func TestCompaction(t *testing.T) {
	p, prim := startPrimary(t, "--max-log-size", "1")
	fill(t, prim, "t", 100)
	var behindLog logRecorder
	behind := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0), embedded.WithLogger(slog.New(&behindLog)))
	behind.sync(t)

	// About 4 MB of frames over a few pages: several compactions.
	for i := range 40 {
		mustExec(t, prim, "UPDATE t SET v = printf('%.*c', 3000, 'x'), n = n + ? WHERE id <= 10", i)
	}
	time.Sleep(500 * time.Millisecond) // compaction runs in the background
	var newLog logRecorder
	fresh := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0), embedded.WithLogger(slog.New(&newLog)))
	fresh.sync(t)
	sameContent(t, "new replica", fresh, prim)
	behind.sync(t)
	sameContent(t, "replica left behind", behind, prim)
	if newLog.count("snapshot applied") == 0 || behindLog.count("snapshot applied") == 0 {
		t.Errorf("snapshots applied: new %d, behind %d (want NEED_SNAPSHOT on both)", newLog.count("snapshot applied"), behindLog.count("snapshot applied"))
	}
	// And the log after the snapshot goes on.
	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (1000, 'after', 1)")
	fresh.sync(t)
	sameContent(t, "after the snapshot", fresh, prim)
}

// TestPrimaryNewLog: a primary killed and started again recovers its
// dirty log into a new one (a new log_id); the replica builds a new file
// from it and swaps it in, and reads go on through the swap.
func TestPrimaryNewLog(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "t", 2000)
	var log logRecorder
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0), embedded.WithLogger(slog.New(&log)))
	r.sync(t)
	sameContent(t, "before", r, prim)

	p.Kill()
	restartSqld(t, p)
	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (5000, 'new log', 7)")

	stop := readloop.Start(t, 1, func() (bool, error) {
		var n int
		if err := r.db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || (n != 2000 && n != 2001) {
			return false, fmt.Errorf("read during the swap: %d rows, %v", n, err)
		}
		return true, nil
	})
	r.sync(t)
	reads, _ := stop()
	if log.count("log was reset") == 0 || log.count("swapped in the new file") == 0 {
		t.Fatalf("no reset and swap logged: %q", log.msgs)
	}
	sameContent(t, "after the swap", r, prim)
	t.Logf("%d reads during the rebootstrap", reads)
	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (5001, 'later', 1)")
	r.sync(t)
	sameContent(t, "after the swap, increments", r, prim)
}

// TestNoTornReads: balances that only move between rows keep their total
// in every local read while the primary commits transfers and the replica
// syncs every 10 ms.
func TestNoTornReads(t *testing.T) {
	p, prim := startPrimary(t)
	b := newBank(t, prim)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(10*time.Millisecond))
	r.sync(t)

	stop := b.watch(t, r.db, 3)
	ctx := testCtx(t)
	deadline := time.Now().Add(2 * time.Second)
	transfers := 0
	for ; time.Now().Before(deadline); transfers++ {
		if err := b.transfer(ctx, prim, transfers); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	reads, torn := stop()
	t.Logf("%d local reads during %d transfers", reads, transfers)
	if torn != 0 {
		t.Errorf("%d torn reads of %d", torn, reads)
	}
	if reads == 0 || transfers == 0 {
		t.Error("nothing measured")
	}
	b.checkSynced(t, r, prim)
}

// TestReopenDownloadsOnlyNew: a replica closed and opened again resumes at
// its position and applies only the frames written meanwhile.
func TestReopenDownloadsOnlyNew(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "t", 20000)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0))
	first := r.sync(t)
	path := r.path
	r.close()

	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (30000, 'while closed', 1)")
	again := openReplica(t, path, p.URL(), embedded.WithSyncInterval(0))
	res := again.sync(t)
	if res.FramesSynced == 0 || res.FramesSynced > 10 || res.FrameNo <= first.FrameNo {
		t.Errorf("reopened: %+v after %+v (want only the new frames)", res, first)
	}
	sameContent(t, "reopened", again, prim)
}

// TestSyncKeepsConnection: the replication calls reuse their connection
// (an answer is read to its end, trailers included), and a sync that
// reaches the end of the log in its first answer asks no more: 200
// read-your-writes cycles (a write on the primary, then a local read that
// waits for a sync) open at most 2 replication connections, and each
// cycle's sync makes one call.
func TestSyncKeepsConnection(t *testing.T) {
	p := sqlds.Start(t)
	proxy := newCutProxy(t, p.Addr(), "never sent")
	r := openReplica(t, "", proxy.URL(), embedded.WithSyncInterval(0))
	mustExec(t, r.db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	r.sync(t)
	before := r.c.Stats().Syncs
	calls := proxy.replCalls()
	const cycles = 200
	for i := range cycles {
		mustExec(t, r.db, "INSERT INTO t (id, v) VALUES (?, ?)", i, "v")
		if n := one[int](t, r.db, "SELECT count(*) FROM t"); n != i+1 {
			t.Fatalf("cycle %d: read %d rows", i, n)
		}
	}
	// A read returns once its frames are applied, which is before the sync
	// that applied them is counted: the last one may still be counting.
	syncs := r.c.Stats().Syncs - before
	for deadline := time.Now().Add(5 * time.Second); syncs < cycles && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		syncs = r.c.Stats().Syncs - before
	}
	if syncs < cycles {
		t.Fatalf("%d syncs for %d cycles", syncs, cycles)
	}
	if got := proxy.replConns.Load(); got > 2 {
		t.Errorf("%d replication connections for %d cycles, want at most 2", got, cycles)
	}
	if got := proxy.replCalls() - calls; got != syncs {
		t.Errorf("%d replication calls for %d syncs, want one each", got, syncs)
	}
}
