package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/writerstress"
)

// stressRuns makes cfg.runs runs of every parameter set, the sets
// interleaved run by run, and returns the results per set.
func stressRuns(ctx context.Context, cfg *config, bin string, logf func(string, ...any)) ([][]writerstress.Result, error) {
	want := int64(cfg.workers * cfg.per)
	results := make([][]writerstress.Result, len(cfg.sets))
	for run := 1; run <= cfg.runs; run++ {
		for i, set := range cfg.sets {
			r, err := stressRun(ctx, cfg, bin, set)
			if err != nil {
				return nil, fmt.Errorf("run %d [%s]: %w", run, set.name(), err)
			}
			results[i] = append(results[i], r)
			logf("run %d/%d [%s] clean %t: %v", run, cfg.runs, set.name(), r.Clean(want), r)
		}
	}
	return results, nil
}

// stressRun runs the scenario of issue 11 (writerstress.Run) once with
// the DSN parameters of set, against a sqld of its own with the default
// WAL, while cfg.busy busy loops spin. The server is killed at the end.
func stressRun(ctx context.Context, cfg *config, bin string, set paramSet) (writerstress.Result, error) {
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin})
	if err != nil {
		return writerstress.Result{}, err
	}
	db, err := sql.Open(libsql.DriverName, cfg.variant.DSN(srv.URL(), set.params...))
	if err != nil {
		_ = srv.Close()
		return writerstress.Result{}, err
	}
	defer func() {
		_ = srv.Close() // first: closing the pool then waits for nothing from a stalled server
		db.Close()
	}()
	return writerstress.Run(ctx, db, writerstress.Config{
		Workers: cfg.workers, PerWorker: cfg.per, Busy: cfg.busy, Deadline: cfg.deadline,
	})
}
