package itest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
)

const (
	concWorkers   = 32
	concPerWorker = 100
	// concDeadline bounds one concurrent workload, so that a server that
	// stops answering fails the test with an explanation instead of
	// hanging the whole run.
	concDeadline = 3 * time.Minute
)

// TestConcurrency runs 32 goroutines x 100 operations through the pool of
// one *sql.DB and checks that the final state is exact.
//
// sqld 0.24.32 with its default WAL can deadlock for good under concurrent
// writers: a TRUNCATE checkpoint (sqld picks that mode for 10% of its
// checkpoints) waits for readers, while writers queued for sqld's write
// lock hold their read snapshots (see tursodatabase/libsql#1955). It is
// reproducible without this driver, with raw HTTP requests. Unless
// LIBSQL_ITEST_URL names a server, these tests therefore get a server of
// their own running libsql-wal (--use-custom-wal libsql-wal), which does
// not have the problem and is not shared with other tests.
func TestConcurrency(t *testing.T) {
	url := serverURL
	if os.Getenv("LIBSQL_ITEST_URL") == "" {
		url = startServer(t, "--use-custom-wal", "libsql-wal")
	}
	forEachVariantAt := func(t *testing.T, fn func(t *testing.T, db *sql.DB)) {
		for _, c := range variants {
			t.Run(c.Name, func(t *testing.T) { fn(t, openDB(t, url, c)) })
		}
	}
	t.Run("inserts", func(t *testing.T) { forEachVariantAt(t, concurrentInserts) })
	t.Run("tx_counter", func(t *testing.T) { forEachVariantAt(t, concurrentTxCounter) })
	t.Run("reads_and_writes", func(t *testing.T) { forEachVariantAt(t, concurrentReadsAndWrites) })
}

// concurrentInserts: every goroutine inserts 100 rows; every row arrives
// exactly once.
func concurrentInserts(t *testing.T, db *sql.DB) {
	table := freshTable(t, db, "conc_ins", "(id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, seq INTEGER NOT NULL)")
	runWorkload(t, func(ctx context.Context, busy *atomic.Int64, w int) error {
		for i := range concPerWorker {
			err := retryBusy(busy, func() error {
				res, err := db.ExecContext(ctx, "INSERT INTO "+table+" (worker, seq) VALUES (?, ?)", w, i)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					return fmt.Errorf("RowsAffected %d, %v", n, err)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("worker %d insert %d: %w", w, i, err)
			}
		}
		return nil
	})

	var n, distinct int64
	require.NoError(t, db.QueryRowContext(t.Context(),
		"SELECT count(*), count(DISTINCT worker * 1000 + seq) FROM "+table).Scan(&n, &distinct))
	require.EqualValues(t, concWorkers*concPerWorker, n, "total rows")
	require.EqualValues(t, n, distinct, "no row inserted twice")
	rows, err := db.QueryContext(t.Context(),
		"SELECT worker, count(*), min(seq), max(seq) FROM "+table+" GROUP BY worker ORDER BY worker")
	require.NoError(t, err)
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var w, cnt, lo, hi int64
		require.NoError(t, rows.Scan(&w, &cnt, &lo, &hi))
		require.EqualValues(t, seen, w, "workers in order")
		require.EqualValues(t, concPerWorker, cnt, "rows of worker %d", w)
		require.Zero(t, lo, "first seq of worker %d", w)
		require.EqualValues(t, concPerWorker-1, hi, "last seq of worker %d", w)
		seen++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, concWorkers, seen, "workers with rows")
}

// concurrentTxCounter: every goroutine runs 100 transactions that
// increment one counter row and log the value they saw. The final value is
// exact, every increment has its log row, and no two transactions saw the
// same value (they serialised).
func concurrentTxCounter(t *testing.T, db *sql.DB) {
	counter := freshTable(t, db, "conc_ctr", "(id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
	log := freshTable(t, db, "conc_log", "(worker INTEGER NOT NULL, seq INTEGER NOT NULL, seen INTEGER NOT NULL)")
	mustExec(t, db, "INSERT INTO "+counter+" (id, v) VALUES (1, 0)")
	runWorkload(t, func(ctx context.Context, busy *atomic.Int64, w int) error {
		for i := range concPerWorker {
			err := retryBusy(busy, func() error {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return fmt.Errorf("begin: %w", err)
				}
				var v int64
				if err := tx.QueryRowContext(ctx,
					"UPDATE "+counter+" SET v = v + 1 WHERE id = 1 RETURNING v").Scan(&v); err != nil {
					_ = tx.Rollback()
					return fmt.Errorf("increment: %w", err)
				}
				if _, err := tx.ExecContext(ctx,
					"INSERT INTO "+log+" (worker, seq, seen) VALUES (?, ?, ?)", w, i, v); err != nil {
					_ = tx.Rollback()
					return fmt.Errorf("log: %w", err)
				}
				if err := tx.Commit(); err != nil {
					return fmt.Errorf("commit: %w", err)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("worker %d tx %d: %w", w, i, err)
			}
		}
		return nil
	})

	const total = concWorkers * concPerWorker
	var v int64
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT v FROM "+counter+" WHERE id = 1").Scan(&v))
	require.EqualValues(t, total, v, "final counter value")
	var n, distinctSeen, distinctOps, lo, hi int64
	require.NoError(t, db.QueryRowContext(t.Context(),
		"SELECT count(*), count(DISTINCT seen), count(DISTINCT worker * 1000 + seq), min(seen), max(seen) FROM "+log).
		Scan(&n, &distinctSeen, &distinctOps, &lo, &hi))
	require.EqualValues(t, total, n, "log rows (one per committed transaction)")
	require.EqualValues(t, total, distinctOps, "no transaction applied twice")
	require.EqualValues(t, total, distinctSeen, "each transaction saw its own counter value")
	require.EqualValues(t, 1, lo)
	require.EqualValues(t, total, hi)
}

// concurrentReadsAndWrites mixes readers and transferring writers: readers
// always see a consistent state (the balances always sum to 0).
func concurrentReadsAndWrites(t *testing.T, db *sql.DB) {
	const accounts = 8
	table := freshTable(t, db, "conc_bank", "(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)")
	for i := range accounts {
		mustExec(t, db, "INSERT INTO "+table+" (id, balance) VALUES (?, 0)", i)
	}
	var transfers atomic.Int64
	runWorkload(t, func(ctx context.Context, busy *atomic.Int64, w int) error {
		for i := range concPerWorker {
			if w%2 == 0 {
				// Reader.
				var sum, cnt int64
				if err := db.QueryRowContext(ctx, "SELECT sum(balance), count(*) FROM "+table).Scan(&sum, &cnt); err != nil {
					return fmt.Errorf("reader %d: %w", w, err)
				}
				if sum != 0 || cnt != accounts {
					return fmt.Errorf("reader %d saw an inconsistent state: sum %d over %d accounts", w, sum, cnt)
				}
				continue
			}
			if i%4 != 0 {
				continue // writers do a quarter as many operations, to keep the run short
			}
			from, to := (w+i)%accounts, (w+i+1)%accounts
			err := retryBusy(busy, func() error {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET balance = balance - 1 WHERE id = ?", from); err != nil {
					_ = tx.Rollback()
					return fmt.Errorf("debit: %w", err)
				}
				if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET balance = balance + 1 WHERE id = ?", to); err != nil {
					_ = tx.Rollback()
					return fmt.Errorf("credit: %w", err)
				}
				return tx.Commit()
			})
			if err != nil {
				return fmt.Errorf("writer %d: %w", w, err)
			}
			transfers.Add(1)
		}
		return nil
	})
	var sum int64
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT sum(balance) FROM "+table).Scan(&sum))
	require.Zero(t, sum, "money is neither created nor destroyed")
	require.EqualValues(t, concWorkers/2*concPerWorker/4, transfers.Load(), "transfers committed")
}

// runWorkload runs fn in concWorkers goroutines (runWorkers), all under
// one context of concDeadline, and fails the test if one failed,
// explaining a timeout; busy counts the operations fn retried after
// SQLITE_BUSY (retryBusy), which it logs.
func runWorkload(t *testing.T, fn func(ctx context.Context, busy *atomic.Int64, worker int) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), concDeadline)
	defer cancel()
	var busy atomic.Int64
	err := runWorkers(concWorkers, func(w int) error { return fn(ctx, &busy, w) })
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the workload did not finish within %v; if the server stopped answering writes "+
			"(its CPU busy, even a lone INSERT hanging), it is probably sqld's checkpoint deadlock "+
			"described at TestConcurrency: %v", concDeadline, err)
	}
	require.NoError(t, err)
	t.Logf("%d operations retried after SQLITE_BUSY", busy.Load())
}

// retryBusy runs op until it does not fail with libsql.ErrBusy, counting
// the retries. Under write contention sqld sometimes answers SQLITE_BUSY
// ("database is locked"); such a statement or transaction had no effect,
// so repeating it keeps the counts exact (the distinct-count checks would
// catch an operation applied twice).
func retryBusy(retries *atomic.Int64, op func() error) error {
	const maxAttempts = 100
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || !errors.Is(err, libsql.ErrBusy) || attempt == maxAttempts {
			return err
		}
		retries.Add(1)
	}
}
