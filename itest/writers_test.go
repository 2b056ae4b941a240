package itest

// Concurrent autocommit writers on one *sql.DB against a sqld with its
// default WAL, with the machine's cores taken by busy loops: the scenario of
// issue 11, in which sqld 0.24.32 answers SQLITE_BUSY or stalls all writes
// for good. The repeated runs and the throughput per maxWriters setting,
// which measure rather than assert, are bench/e2e/cmd/writers.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
	"github.com/gohrana/libsql/internal/writerstress"
)

// stressRun runs the scenario of issue 11 (writerstress.Run) once
// through variant, on one *sql.DB with default pool settings, against a
// sqld of its own with the default WAL, which is killed at the end.
func stressRun(t *testing.T, variant testmatrix.Variant, cfg writerstress.Config) writerstress.Result {
	t.Helper()
	srv := sqlds.Start(t)
	defer srv.Kill()
	db := openDB(t, srv.URL(), variant)
	r, err := writerstress.Run(t.Context(), db, cfg)
	require.NoError(t, err)
	return r
}

// TestWritersStress is the scenario of issue 11 at full size, per codec,
// with the driver's and database/sql's defaults on a sqld of its own
// (default WAL, on 127.0.0.1, so maxWriters=auto bounds writes to
// LoopbackMaxWriters): one busy loop per CPU, 32 goroutines x 50
// autocommit INSERTs on one *sql.DB. Every insert must succeed, exactly
// once, within 60 s. Unbounded, sqld 0.24.32 stalled all writes in 4 of
// 25 such runs (docs/dev/RELIABILITY.md); a stall here fails the test at the
// deadline, saying so, rather than hanging it. Then, without busy
// loops, a connector whose requests are counted shows that no more than
// LoopbackMaxWriters writes were ever in flight against the real server.
func TestWritersStress(t *testing.T) {
	const workers, perWorker = 32, 50
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			r := stressRun(t, c, writerstress.Config{Workers: workers, PerWorker: perWorker,
				Busy: runtime.NumCPU(), Deadline: 60 * time.Second})
			t.Logf("%d x %d inserts, %d busy loops: %v", workers, perWorker, runtime.NumCPU(), r)
			require.False(t, r.Stalled, "sqld stalled all writes (an independent write hung 5 s after the deadline): %v", r)
			require.False(t, r.Hung, "the inserts did not finish within the deadline: %v", r)
			require.Empty(t, r.Errs, "errors: %v", r)
			require.EqualValues(t, workers*perWorker, r.OK, "inserts that succeeded")
			require.EqualValues(t, workers*perWorker, r.Rows, "rows")
		})
		if c.WS() {
			continue // the bound is counted on the HTTP wire (the bound itself is the same code)
		}
		t.Run(c.Name+"_bound", func(t *testing.T) {
			srv := sqlds.Start(t)
			cfg, err := libsql.ParseDSN(srv.URL() + "?codec=" + c.Codec)
			require.NoError(t, err)
			tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: workers}
			t.Cleanup(tr.CloseIdleConnections)
			cnt := &inFlight{rt: tr, path: pipelinePath(c)}
			db := openConnector(t, cfg, libsql.WithRoundTripper(cnt))
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
