package embedded_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// offlineCrashEnv names the replica file of the offline crash helper: the
// test binary started again with it opens a replica with offline writes,
// writes $EMBEDDED_OFFLINE_WRITES local transactions, then syncs,
// reporting each step on stdout, until killed.
const (
	offlineCrashEnv  = "EMBEDDED_OFFLINE_CRASH"
	offlineWritesEnv = "EMBEDDED_OFFLINE_WRITES"
)

func offlineCrashHelper(path, url string) int {
	c, err := embedded.NewConnector(path, url, embedded.WithOfflineWrites(), embedded.WithSyncInterval(0))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	writes, _ := strconv.Atoi(os.Getenv(offlineWritesEnv))
	sqlDB := sql.OpenDB(c)
	ctx := context.Background()
	for i := range writes {
		if _, err := sqlDB.ExecContext(ctx, "INSERT INTO log (v) VALUES (?)", fmt.Sprint("local ", i)); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	fmt.Println("syncing")
	if _, err := c.Sync(ctx); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("synced")
	sqlDB.Close()
	c.Close()
	return 0
}

// TestOfflineWritesCrash: a replica process SIGKILLed at several points
// of a push of 1,000 local transactions and of the long pull that follows
// leaves the primary with each transaction at most once; the last process
// pushes the rest, and the primary then has each exactly once and the
// local file equals it. Over each transport of the primary.
func TestOfflineWritesCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("processes killed at several points")
	}
	forEachTransport(t, offlineCrash)
}

func offlineCrash(t *testing.T, _ *sqldproc.Server, prim *sql.DB, url string) {
	mustExec(t, prim, "CREATE TABLE log (v TEXT)")
	path := t.TempDir() + "/replica.db"
	r, _ := openOffline(t, path, url)
	r.sync(t)
	r.close()
	// A long pull: frames the replica has not seen.
	fill(t, prim, "filler", 100000)

	const writes = 1000
	// Killed: before the sync, at delays into it (the push is one request
	// that takes a while), as soon as the push has committed (the pull and
	// the restore then run), once more at a delay, then left to finish.
	const (
		beforeSync = -1
		finish     = -2
		pushed     = -3
	)
	delays := []time.Duration{beforeSync, 0, 20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, pushed, 10 * time.Millisecond, finish}
	for run, delay := range delays {
		env := []string{offlineCrashEnv + "=" + path, crashURLEnv + "=" + url}
		if delay == beforeSync {
			env = append(env, offlineWritesEnv+"="+strconv.Itoa(writes))
		}
		h := startCrashHelper(t, run, "syncing", env...)
		switch {
		case delay == beforeSync:
			h.Kill()
		case delay == pushed:
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && one[int](t, prim, "SELECT count(*) FROM log") == 0 {
			}
			h.Kill()
		case delay >= 0:
			time.Sleep(delay)
			h.Kill()
		default:
			if !h.Out.Scan() || h.Out.Text() != "synced" {
				t.Fatalf("run %d: helper: %q", run, h.Out.Text())
			}
			h.Stop()
		}
		n := one[int](t, prim, "SELECT count(*) FROM log")
		if d := one[int](t, prim, "SELECT count(DISTINCT v) FROM log"); d != n {
			t.Fatalf("run %d: the primary has %d rows, %d distinct", run, n, d)
		}
		t.Logf("run %d (killed after %v): the primary has %d of the %d rows", run, delay, n, writes)
	}
	if n := one[int](t, prim, "SELECT count(*) FROM log"); n != writes {
		t.Fatalf("the primary has %d rows, want %d", n, writes)
	}
	r, conflicts := openOffline(t, path, url)
	if st := r.c.Stats(); st.Pending != 0 {
		t.Fatalf("%d transactions pending after the last run", st.Pending)
	}
	sameState(t, r, prim, "log")
	sameState(t, r, prim, "filler")
	if len(conflicts.all()) != 0 {
		t.Fatal("conflicts")
	}
}
