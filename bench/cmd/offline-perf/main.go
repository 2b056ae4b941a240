// Command offline-perf measures the offline writes of an embedded replica
// (embedded.WithOfflineWrites) against one running sqld, in one run: a
// local INSERT of one row (synchronous NORMAL and FULL) against the same
// INSERT sent to the primary through a replica without offline writes,
// over HTTP; a local transaction of 10 INSERTs; a Sync that pushes 1,000
// pending transactions (wall time and HTTP requests, counted by a proxy);
// and the cost of a Sync with pending writes on a database of 10,000 and
// of 1,000,000 rows.
//
//	sqld -d /tmp/perf --http-listen-addr 127.0.0.1:8089 --no-welcome &
//	cd bench && go run ./cmd/offline-perf -url http://127.0.0.1:8089
//
// It creates tables offperf_* on the server (a new server is best).
// docs/dev/PERF.md has the numbers of a run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	_ "github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/embedded"
)

func main() {
	base := harness.URLFlag("http://127.0.0.1:8089")
	writes := flag.Int("writes", 5000, "local writes timed per setting (a tenth of it to the primary)")
	big := flag.Int("rows", 1_000_000, "rows of the large database")
	harness.Main("offline-perf", base, func() error { return run(*base, *writes, *big) })
}

type replica struct {
	c  *embedded.Connector
	db *sql.DB
}

func open(path, url string, opts ...embedded.Option) (*replica, error) {
	c, err := embedded.NewConnector(path, url, append([]embedded.Option{embedded.WithSyncInterval(0)}, opts...)...)
	if err != nil {
		return nil, err
	}
	r := &replica{c: c, db: sql.OpenDB(c)}
	if _, err := c.Sync(context.Background()); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *replica) close() { r.db.Close(); r.c.Close() }

func run(base string, writes, big int) error {
	ctx := context.Background()
	w, err := harness.NewWorkspace(ctx, "offline-perf", base)
	if err != nil {
		return err
	}
	defer w.Close()
	dir, prim := w.Dir, w.Primary
	for _, q := range []string{
		"DROP TABLE IF EXISTS offperf_w", "CREATE TABLE offperf_w (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)",
	} {
		if _, err := prim.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	const insert = "INSERT INTO offperf_w (v, n) VALUES (?, ?)"

	// 1. One INSERT: to the primary through a replica without offline
	// writes, then locally with NORMAL and FULL.
	online, err := open(filepath.Join(dir, "online.db"), base, embedded.WithReadYourWrites(false))
	if err != nil {
		return err
	}
	lat, err := harness.TimeEach(writes/10, func(i int) error {
		_, err := online.db.ExecContext(ctx, insert, "online", i)
		return err
	})
	online.close()
	if err != nil {
		return err
	}
	fmt.Printf("INSERT of one row to the primary over HTTP (no offline writes): p50 %v p99 %v (%d)\n", lat.P50, lat.P99, writes/10)
	onlineP50 := lat.P50
	for _, full := range []bool{false, true} {
		opts := []embedded.Option{embedded.WithOfflineWrites()}
		name := "NORMAL"
		if full {
			opts, name = append(opts, embedded.WithSynchronousFull()), "FULL"
		}
		r, err := open(filepath.Join(dir, "local-"+name+".db"), base, opts...)
		if err != nil {
			return err
		}
		n := writes
		if full {
			n = writes / 5
		}
		lat, err := harness.TimeEach(n, func(i int) error {
			_, err := r.db.ExecContext(ctx, insert, "local", i)
			return err
		})
		if err != nil {
			r.close()
			return err
		}
		fmt.Printf("INSERT of one row, offline writes, synchronous %s: p50 %v p99 %v (%d); p50 %.3fx the primary's\n",
			name, lat.P50, lat.P99, n, float64(lat.P50)/float64(onlineP50))
		if !full {
			// 2. A transaction of 10 INSERTs.
			lat, err = harness.TimeEach(writes/10, func(i int) error {
				tx, err := r.db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				for j := range 10 {
					if _, err := tx.ExecContext(ctx, insert, "tx", i*10+j); err != nil {
						tx.Rollback()
						return err
					}
				}
				return tx.Commit()
			})
			if err != nil {
				r.close()
				return err
			}
			fmt.Printf("transaction of 10 INSERTs, offline writes, NORMAL: p50 %v p99 %v (%d)\n", lat.P50, lat.P99, writes/10)
		}
		start := time.Now()
		_, err = r.c.Sync(ctx)
		fmt.Printf("  (its Sync of %d pending transactions: %v)\n", r.c.Stats().Pushed, time.Since(start))
		r.close()
		if err != nil {
			return err
		}
	}

	// 3. A Sync that pushes 1,000 pending transactions, through a proxy
	// that counts the requests.
	cnt, err := harness.NewCountingProxy(base)
	if err != nil {
		return err
	}
	defer cnt.Close()
	r, err := open(filepath.Join(dir, "push.db"), cnt.URL(), embedded.WithOfflineWrites())
	if err != nil {
		return err
	}
	for i := range 1000 {
		if _, err := r.db.ExecContext(ctx, insert, "push", i); err != nil {
			return err
		}
	}
	cnt.Reset()
	start := time.Now()
	if _, err := r.c.Sync(ctx); err != nil {
		return err
	}
	st := r.c.Stats()
	fmt.Printf("Sync pushing 1,000 pending transactions and pulling the result: %v (the pull %v, %d frames), %d HTTP requests (pushed %d)\n",
		time.Since(start), st.LastSyncDuration, st.BehindFrames, cnt.Requests(), st.Pushed)
	r.close()

	// 4. A Sync with 10 pending transactions on 10k and on 1M rows.
	for _, rows := range []int{10_000, big} {
		table := fmt.Sprintf("offperf_%d", rows)
		for _, q := range []string{
			"DROP TABLE IF EXISTS " + table,
			"CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, v TEXT, n INTEGER)",
			fmt.Sprintf(`INSERT INTO %s (id, v, n) WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < %d)
				SELECT x, printf('row-%%08d', x), x * 3 FROM g`, table, rows),
		} {
			if _, err := prim.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		r, err := open(filepath.Join(dir, table+".db"), cnt.URL(), embedded.WithOfflineWrites())
		if err != nil {
			return err
		}
		var total time.Duration
		var reqs int64
		const rounds = 20
		d := make([]time.Duration, rounds)
		for round := range rounds {
			for i := range 10 {
				if _, err := r.db.ExecContext(ctx, "UPDATE "+table+" SET n = n + 1 WHERE id = ?", (round*7919+i*104729)%rows+1); err != nil {
					return err
				}
			}
			cnt.Reset()
			start := time.Now()
			if _, err := r.c.Sync(ctx); err != nil {
				return err
			}
			d[round] = time.Since(start)
			total += d[round]
			reqs += cnt.Requests()
		}
		slices.Sort(d)
		fmt.Printf("Sync with 10 pending UPDATEs on %d rows: p50 %v, mean %v, %.1f requests each\n",
			rows, d[rounds/2], total/rounds, float64(reqs)/rounds)
		r.close()
	}
	return nil
}
