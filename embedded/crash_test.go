package embedded_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/internal/helperproc"
)

// The crash helper: the test binary started again with these variables
// opens a replica and syncs it, reporting on stdout, until killed.
const (
	crashPathEnv = "EMBEDDED_CRASH_PATH"
	crashURLEnv  = "EMBEDDED_CRASH_URL"
	crashKeyEnv  = "EMBEDDED_CRASH_KEY" // WithEncryption's key, if set
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashPathEnv); path != "" {
		os.Exit(crashHelper(path, os.Getenv(crashURLEnv), os.Getenv(crashKeyEnv)))
	}
	if path := os.Getenv(offlineCrashEnv); path != "" {
		os.Exit(offlineCrashHelper(path, os.Getenv(crashURLEnv)))
	}
	os.Exit(m.Run())
}

func crashHelper(path, url, key string) int {
	opts := []embedded.Option{embedded.WithSyncInterval(0)}
	if key != "" {
		opts = append(opts, embedded.WithEncryption(key))
	}
	c, err := embedded.NewConnector(path, url, opts...)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("open")
	res, err := c.Sync(context.Background())
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("synced", res.FramesSynced, res.FrameNo)
	c.Close()
	return 0
}

// TestCrashDuringSync: a replica process SIGKILLed at several points of a
// large sync leaves a file that opens with integrity_check ok, holding a
// state the primary had (whole transactions only), and a new process
// resumes from there, without downloading again what was applied; in the
// clear and encrypted (the file then opens with the key).
func TestCrashDuringSync(t *testing.T) {
	if testing.Short() {
		t.Skip("a large sync")
	}
	for _, key := range []string{"", "crash-test-key"} {
		t.Run(map[bool]string{false: "plaintext", true: "encrypted"}[key != ""], func(t *testing.T) {
			testCrashDuringSync(t, key)
		})
	}
}

func testCrashDuringSync(t *testing.T, key string) {
	p, prim := startPrimary(t)
	const txRows, txs = 10000, 16
	mustExec(t, prim, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
	for i := range txs {
		mustExec(t, prim, `INSERT INTO t (id, v, n)
			WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < ?)
			SELECT ? + x, printf('%.*c', 80, 'v'), x FROM g`, txRows, i*txRows)
	}
	path := t.TempDir() + "/replica.db"
	lastCount, applied, frameNo := 0, 0, 0
	// Each run but the last is killed: the first before anything was
	// applied, the others once the file has moved past the last run's
	// rows (right after a local commit, during the next batch).
	for run := range 5 {
		h := startCrashHelper(t, run, "open", crashPathEnv+"="+path, crashURLEnv+"="+p.URL(), crashKeyEnv+"="+key)
		switch run {
		case 0:
			h.Kill()
		case 4:
			if !h.Out.Scan() || !strings.HasPrefix(h.Out.Text(), "synced ") {
				t.Fatalf("helper: %q", h.Out.Text())
			}
			fmt.Sscan(strings.TrimPrefix(h.Out.Text(), "synced "), &applied, &frameNo)
			h.Stop()
		default:
			waitRows(t, path, key, lastCount+1)
			h.Kill()
		}

		// The file as the crash left it.
		db := localFileKey(t, path, key)
		var count int
		if err := db.QueryRow("SELECT count(*) FROM t").Scan(&count); err != nil && !strings.Contains(err.Error(), "no such table") {
			t.Fatalf("run %d: %v", run, err)
		}
		if got := one[string](t, db, "PRAGMA integrity_check"); got != "ok" {
			t.Fatalf("run %d: integrity_check %q", run, got)
		}
		if count%txRows != 0 || count < lastCount {
			t.Fatalf("run %d: %d rows (after %d): not a state of the primary", run, count, lastCount)
		}
		db.Close()
		t.Logf("run %d ended with %d rows", run, count)
		lastCount = count
	}
	if lastCount != txRows*txs {
		t.Fatalf("caught up with %d rows, want %d", lastCount, txRows*txs)
	}
	// The killed runs' commits were not downloaded again.
	if applied >= frameNo {
		t.Errorf("the last run applied %d frames of the log's %d", applied, frameNo+1)
	}
	t.Logf("the last run applied %d frames of the log's %d", applied, frameNo+1)
}

// startCrashHelper starts the test binary again as a crash helper, with
// env added to its environment and killed if the test dies, and fails run
// unless the first line it prints is want; its Out reads what it prints next.
func startCrashHelper(t *testing.T, run int, want string, env ...string) *helperproc.Process {
	t.Helper()
	h := helperproc.Start(t, env, "-test.run=^$")
	if h.Line != want {
		h.Kill()
		t.Fatalf("run %d: helper: %q", run, h.Line)
	}
	return h
}

// waitRows waits until the replica file at path (encrypted under key, if
// not "") has at least n rows in t.
func waitRows(t *testing.T, path, key string, n int) {
	t.Helper()
	db := localFileKey(t, path, key)
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var count int
		if err := db.QueryRow("SELECT count(*) FROM t").Scan(&count); err == nil && count >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the replica never had %d rows", n)
}
