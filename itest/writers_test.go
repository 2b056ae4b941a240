package itest

// Concurrent autocommit writers on one *sql.DB against a sqld with its
// default WAL, with the machine's cores taken by busy loops: the scenario of
// issue 11, in which sqld 0.24.32 answers SQLITE_BUSY or stalls all writes
// for good. The repeated runs and the throughput per maxWriters setting,
// which measure rather than assert, are bench/e2e/cmd/writers.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// stressConfig is one run of the scenario.
type stressConfig struct {
	variant  testmatrix.Variant
	params   []string // extra DSN parameters
	workers  int
	perWork  int
	busy     int           // busy loops to start (0: a quiet machine)
	deadline time.Duration // a run still going then counts as hung
}

// stressResult is what one run did.
type stressResult struct {
	ok       int64            // inserts that succeeded
	errs     map[string]int64 // error class -> count
	rows     int64            // rows in the table afterwards (-1: unknown)
	hung     bool             // the run hit its deadline
	stalled  bool             // afterwards a write still hung: sqld's deadlock
	wall     time.Duration
	loadAvg  string
	rowsErrs string // why rows is unknown
}

func (r stressResult) String() string {
	var errs []string
	for k, v := range r.errs {
		errs = append(errs, fmt.Sprintf("%dx %s", v, k))
	}
	s := fmt.Sprintf("ok %d, rows %d, hung %t, stalled %t, %v, load %s", r.ok, r.rows, r.hung, r.stalled,
		r.wall.Round(10*time.Millisecond), r.loadAvg)
	if len(errs) > 0 {
		s += ", errors: " + strings.Join(errs, "; ")
	}
	if r.rowsErrs != "" {
		s += ", count: " + r.rowsErrs
	}
	return s
}

// errClass names an error briefly, for counting.
func errClass(err error) string {
	var le *libsql.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, libsql.ErrBusy):
		return "SQLITE_BUSY"
	case errors.As(err, &le):
		return le.Code
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// busyLoops starts n processes that spin on a core each, until stop.
func busyLoops(t testing.TB, n int) (stop func()) {
	t.Helper()
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		// Should the test binary die without stopping them, they go too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			for _, c := range cmds {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// loadAverage returns the first field of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// stressRun runs cfg.workers goroutines of cfg.perWork autocommit INSERTs
// each on one *sql.DB (default pool settings) against a sqld of its own with
// the default WAL. A run that has not finished by cfg.deadline is ended
// there and counted as hung; then an independent write with a 5 s deadline
// tells whether sqld itself stalled (reads keep working, so the rows can
// still be counted). The server is killed at the end.
func stressRun(t *testing.T, cfg stressConfig) stressResult {
	t.Helper()
	srv := startSqld(t)
	defer srv.Kill()
	db := openDB(t, srv.URL(), cfg.variant, cfg.params...)
	table := privateTable(t, db, "stress", "(id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, seq INTEGER NOT NULL, UNIQUE (worker, seq))")
	ins, err := db.Prepare("INSERT INTO " + table + " (worker, seq) VALUES (?, ?)")
	require.NoError(t, err)
	defer ins.Close()

	if cfg.busy > 0 {
		defer busyLoops(t, cfg.busy)()
	}
	res := stressResult{errs: map[string]int64{}, rows: -1}
	var mu sync.Mutex
	var ok atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline)
	defer cancel()
	start := time.Now()
	_ = runWorkers(cfg.workers, func(w int) error {
		for i := range cfg.perWork {
			if ctx.Err() != nil {
				return nil
			}
			if _, err := ins.ExecContext(ctx, w, i); err != nil {
				mu.Lock()
				res.errs[errClass(err)]++
				mu.Unlock()
				continue
			}
			ok.Add(1)
		}
		return nil
	})
	res.wall = time.Since(start)
	res.hung = ctx.Err() != nil
	res.ok = ok.Load()
	res.loadAvg = loadAverage()

	if res.hung {
		// Is it sqld's stall? An independent write says.
		pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := db.ExecContext(pctx, "CREATE TABLE probe_"+strconv.Itoa(os.Getpid())+" (x)")
		pcancel()
		res.stalled = errors.Is(err, context.DeadlineExceeded)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := db.QueryRowContext(cctx, "SELECT count(*) FROM "+table).Scan(&res.rows); err != nil {
		res.rows = -1
		res.rowsErrs = err.Error()
	}
	return res
}

// TestWritersStress is the scenario of issue 11 at full size, per codec,
// with the driver's and database/sql's defaults on a sqld of its own
// (default WAL, on 127.0.0.1, so maxWriters=auto bounds writes to
// LoopbackMaxWriters): one busy loop per CPU, 32 goroutines x 50
// autocommit INSERTs on one *sql.DB. Every insert must succeed, exactly
// once, within 60 s. Unbounded, sqld 0.24.32 stalled all writes in 4 of
// 25 such runs (docs/RELIABILITY.md); a stall here fails the test at the
// deadline, saying so, rather than hanging it. Then, without busy
// loops, a connector whose requests are counted shows that no more than
// LoopbackMaxWriters writes were ever in flight against the real server.
func TestWritersStress(t *testing.T) {
	const workers, perWorker = 32, 50
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			r := stressRun(t, stressConfig{variant: c, workers: workers, perWork: perWorker,
				busy: runtime.NumCPU(), deadline: 60 * time.Second})
			t.Logf("%d x %d inserts, %d busy loops: %v", workers, perWorker, runtime.NumCPU(), r)
			require.False(t, r.stalled, "sqld stalled all writes (an independent write hung 5 s after the deadline): %v", r)
			require.False(t, r.hung, "the inserts did not finish within the deadline: %v", r)
			require.Empty(t, r.errs, "errors: %v", r)
			require.EqualValues(t, workers*perWorker, r.ok, "inserts that succeeded")
			require.EqualValues(t, workers*perWorker, r.rows, "rows")
		})
		if c.WS() {
			continue // the bound is counted on the HTTP wire (the bound itself is the same code)
		}
		t.Run(c.Name+"_bound", func(t *testing.T) {
			srv := startSqld(t)
			cfg, err := libsql.ParseDSN(srv.URL() + "?codec=" + c.Codec)
			require.NoError(t, err)
			tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: workers}
			t.Cleanup(tr.CloseIdleConnections)
			cnt := &inFlight{rt: tr, path: pipelinePath(c)}
			conn, err := libsql.NewConnector(cfg, libsql.WithRoundTripper(cnt))
			require.NoError(t, err)
			db := sql.OpenDB(conn)
			t.Cleanup(func() { _ = db.Close() })
			table := privateTable(t, db, "bound", "(id INTEGER PRIMARY KEY, worker INTEGER NOT NULL)")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err = runWorkers(workers, func(w int) error {
				for range 10 {
					if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (worker) VALUES (?)", w); err != nil {
						return err
					}
					var n int64 // reads are not bounded, and do not count
					if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(t, err)
			require.EqualValues(t, workers*10, countRows(t, db, table))
			require.EqualValues(t, libsql.LoopbackMaxWriters, cnt.maxWrites.Load(), "most writes in flight at once")
			require.Greater(t, cnt.maxAll.Load(), int64(libsql.LoopbackMaxWriters), "most requests in flight at once: reads are not bounded")
		})
	}
}

// inFlight is an http.RoundTripper that counts pipeline requests waiting
// for their answer, all and those whose body holds an INSERT, and
// remembers the most at once.
type inFlight struct {
	rt                http.RoundTripper
	path              string // the codec's pipeline path
	all, writes       atomic.Int64
	maxAll, maxWrites atomic.Int64
}

func (c *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != c.path || r.GetBody == nil {
		return c.rt.RoundTrip(r)
	}
	body, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	track := func(now, peak *atomic.Int64) func() {
		n := now.Add(1)
		for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
		}
		return func() { now.Add(-1) }
	}
	defer track(&c.all, &c.maxAll)()
	if bytes.Contains(b, []byte("INSERT")) {
		defer track(&c.writes, &c.maxWrites)()
	}
	return c.rt.RoundTrip(r)
}
