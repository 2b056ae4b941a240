package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// stressResult is what one stall run did.
type stressResult struct {
	ok      int64            // inserts that succeeded
	errs    map[string]int64 // error class -> count
	rows    int64            // rows in the table afterwards (-1: unknown)
	hung    bool             // the run hit its deadline
	stalled bool             // afterwards a write still hung: sqld's stall
	wall    time.Duration
	loadAvg string
	rowsErr string // why rows is unknown
}

// clean reports whether every insert succeeded exactly once, in time.
func (r stressResult) clean(want int64) bool {
	return !r.hung && len(r.errs) == 0 && r.ok == want && r.rows == want
}

func (r stressResult) String() string {
	s := fmt.Sprintf("ok %d, rows %d, hung %t, stalled %t, %v, load %s", r.ok, r.rows, r.hung, r.stalled,
		r.wall.Round(10*time.Millisecond), r.loadAvg)
	if len(r.errs) > 0 {
		s += ", errors: " + errorCounts(r.errs)
	}
	if r.rowsErr != "" {
		s += ", count: " + r.rowsErr
	}
	return s
}

// errorCounts lists error classes and their counts, by class.
func errorCounts(errs map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		out = append(out, fmt.Sprintf("%dx %s", errs[k], k))
	}
	return strings.Join(out, "; ")
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

// stressRuns makes cfg.runs runs of every parameter set, the sets
// interleaved run by run, and returns the results per set.
func stressRuns(ctx context.Context, cfg *config, bin string, logf func(string, ...any)) ([][]stressResult, error) {
	want := int64(cfg.workers * cfg.per)
	results := make([][]stressResult, len(cfg.sets))
	for run := 1; run <= cfg.runs; run++ {
		for i, set := range cfg.sets {
			r, err := stressRun(ctx, cfg, bin, set)
			if err != nil {
				return nil, fmt.Errorf("run %d [%s]: %w", run, set.name(), err)
			}
			results[i] = append(results[i], r)
			logf("run %d/%d [%s] clean %t: %v", run, cfg.runs, set.name(), r.clean(want), r)
		}
	}
	return results, nil
}

// stressRun runs cfg.workers goroutines of cfg.per autocommit INSERTs each
// on one *sql.DB (default pool settings) with the DSN parameters of set,
// against a sqld of its own with the default WAL, while cfg.busy busy
// loops spin. A run that has not finished by cfg.deadline is ended there
// and counted as hung; then an independent write with a 5 s deadline
// tells whether sqld itself stalled (reads keep working, so the rows can
// still be counted). The server is killed at the end.
func stressRun(ctx context.Context, cfg *config, bin string, set paramSet) (stressResult, error) {
	res := stressResult{errs: map[string]int64{}, rows: -1}
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin})
	if err != nil {
		return res, err
	}
	db, err := sql.Open(libsql.DriverName, cfg.variant.DSN(srv.URL(), set.params...))
	if err != nil {
		_ = srv.Close()
		return res, err
	}
	defer func() {
		_ = srv.Close() // first: closing the pool then waits for nothing from a stalled server
		db.Close()
	}()
	const table = "stress"
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(sctx, "CREATE TABLE "+table+" (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, seq INTEGER NOT NULL, UNIQUE (worker, seq))"); err != nil {
		return res, err
	}
	ins, err := db.PrepareContext(sctx, "INSERT INTO "+table+" (worker, seq) VALUES (?, ?)")
	if err != nil {
		return res, err
	}
	defer ins.Close()

	stop, err := busyLoops(cfg.busy)
	if err != nil {
		return res, err
	}
	defer stop()
	var mu sync.Mutex
	var ok atomic.Int64
	wctx, wcancel := context.WithTimeout(ctx, cfg.deadline)
	defer wcancel()
	start := time.Now()
	together(cfg.workers, func(w int) {
		for i := range cfg.per {
			if wctx.Err() != nil {
				return
			}
			if _, err := ins.ExecContext(wctx, w, i); err != nil {
				mu.Lock()
				res.errs[errClass(err)]++
				mu.Unlock()
				continue
			}
			ok.Add(1)
		}
	})
	res.wall = time.Since(start)
	if ctx.Err() != nil {
		return res, ctx.Err() // interrupted
	}
	res.hung = wctx.Err() != nil
	res.ok = ok.Load()
	res.loadAvg = loadAverage()

	if res.hung {
		// Is it sqld's stall? An independent write says.
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.ExecContext(pctx, "CREATE TABLE probe_"+strconv.Itoa(os.Getpid())+" (x)")
		pcancel()
		res.stalled = errors.Is(err, context.DeadlineExceeded)
	}
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if err := db.QueryRowContext(cctx, "SELECT count(*) FROM "+table).Scan(&res.rows); err != nil {
		res.rows = -1
		res.rowsErr = err.Error()
	}
	return res, ctx.Err()
}

// together runs fn(0..n-1) in n goroutines, released at once, and waits
// for them.
func together(n int, fn func(worker int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range n {
		wg.Go(func() {
			<-start
			fn(w)
		})
	}
	close(start)
	wg.Wait()
}
