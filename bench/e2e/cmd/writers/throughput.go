package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/delayproxy"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/writerstress"
)

// concurrencies are the numbers of writers the throughput is measured at.
var concurrencies = []int{1, 4, 16, 64}

// Durations of the throughput samples.
const (
	warmUp = 300 * time.Millisecond // before each sample, to fill the pools
	// hangAfter is how long one INSERT may take before its sample counts
	// as stalled (sqld's stall).
	hangAfter = 20 * time.Second
)

// sample is one measurement of one parameter set at one concurrency.
type sample struct {
	rate    float64 // inserts/s; 0 if stalled
	errs    int64
	stalled bool
}

// throughput measures every concurrency and parameter set cfg.rounds
// times and returns the samples as samples[concurrency][set][round].
func throughput(ctx context.Context, cfg *config, bin string, logf func(string, ...any)) ([][][]sample, error) {
	samples := make([][][]sample, len(concurrencies))
	for ci := range concurrencies {
		samples[ci] = make([][]sample, len(cfg.sets))
	}
	for round := range cfg.rounds {
		for ci, conc := range concurrencies {
			tgt, err := startTarget(ctx, bin, cfg.latency)
			if err != nil {
				return nil, err
			}
			for j := range cfg.sets {
				k := (j + round) % len(cfg.sets)
				s, err := measureSample(ctx, cfg, tgt.url, fmt.Sprintf("tp_%d_%d", ci, k), cfg.sets[k], conc)
				if err != nil {
					tgt.close()
					return nil, fmt.Errorf("round %d, %d writers [%s]: %w", round+1, conc, cfg.sets[k].name(), err)
				}
				samples[ci][k] = append(samples[ci][k], s)
				logf("round %d/%d, %2d writers, [%s]: %7.0f inserts/s, %d errors, stalled %t, load %s",
					round+1, cfg.rounds, conc, cfg.sets[k].name(), s.rate, s.errs, s.stalled, writerstress.LoadAverage())
				if s.stalled {
					// Later samples on this server would stall too.
					tgt.close()
					if tgt, err = startTarget(ctx, bin, cfg.latency); err != nil {
						return nil, err
					}
				}
			}
			tgt.close()
		}
	}
	return samples, nil
}

// target is a fresh sqld, perhaps behind a latency proxy.
type target struct {
	srv   *sqldproc.Server
	proxy *delayproxy.Proxy // nil without added latency
	url   string            // what the driver connects to
}

func startTarget(ctx context.Context, bin string, delay time.Duration) (*target, error) {
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin})
	if err != nil {
		return nil, err
	}
	t := &target{srv: srv, url: srv.URL()}
	if delay > 0 {
		// delay each way: a round trip of twice that.
		p, err := delayproxy.New(srv.Addr(), 2*delay)
		if err != nil {
			_ = srv.Close()
			return nil, err
		}
		t.proxy, t.url = p, p.URL()
	}
	return t, nil
}

func (t *target) close() {
	if t.proxy != nil {
		t.proxy.Close()
	}
	_ = t.srv.Close()
}

// measureSample creates table on the server at url and inserts into it
// from conc writers for cfg.sample, after a warm-up, through a *sql.DB of
// its own with the parameters of set.
func measureSample(ctx context.Context, cfg *config, url, table string, set paramSet, conc int) (sample, error) {
	db, err := sql.Open(libsql.DriverName, cfg.variant.DSN(url, set.params...))
	if err != nil {
		return sample{}, err
	}
	defer db.Close()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(sctx, "CREATE TABLE "+table+" (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)"); err != nil {
		return sample{}, err
	}
	ins, err := db.PrepareContext(sctx, "INSERT INTO "+table+" (v) VALUES (?)")
	if err != nil {
		return sample{}, err
	}
	defer ins.Close()
	insertFor(ctx, ins, conc, warmUp)
	n, errs, stalled := insertFor(ctx, ins, conc, cfg.sample)
	s := sample{rate: float64(n) / cfg.sample.Seconds(), errs: errs, stalled: stalled}
	if stalled {
		s.rate = 0
	}
	return s, ctx.Err()
}

// insertFor runs conc goroutines of autocommit INSERTs for d and returns
// how many succeeded and failed, and whether a write hung for hangAfter.
func insertFor(ctx context.Context, ins *sql.Stmt, conc int, d time.Duration) (n, errs int64, stalled bool) {
	var ok, bad atomic.Int64
	var hung atomic.Bool
	end := time.Now().Add(d)
	writerstress.Together(conc, func(w int) {
		for i := 0; time.Now().Before(end) && !hung.Load() && ctx.Err() == nil; i++ {
			ictx, cancel := context.WithTimeout(ctx, hangAfter)
			_, err := ins.ExecContext(ictx, w*1_000_000+i)
			cancel()
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, context.DeadlineExceeded):
				hung.Store(true)
				bad.Add(1)
			default:
				bad.Add(1)
			}
		}
	})
	return ok.Load(), bad.Load(), hung.Load()
}
