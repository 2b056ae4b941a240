// Command sync-bench runs Turso's sync benchmark
// (github.com/tursodatabase/turso-sync-benchmark) in Go against sqld
// processes of its own: its five workloads, each on an embedded replica
// that writes to the primary (the "embedded replicas" side of Turso's
// table) and on one with offline writes, which writes locally and pushes
// (the "@tursodatabase/sync" side), through a proxy that adds a round-trip
// time and counts connections, HTTP requests and bytes.
//
//	go run ./cmd/sync-bench                 # at 0 and 20 ms of round trip
//	go run ./cmd/sync-bench -rtt 20ms -rounds 3
//
// Each workload and side gets a new sqld. docs/dev/PERF.md has a run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/delayproxy"
	"github.com/gohrana/libsql/embedded"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// ddl is the benchmark's table, as Turso's has it.
const ddl = `CREATE TABLE IF NOT EXISTS bench (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  bio TEXT,
  score REAL
)`

const insertSQL = "INSERT INTO bench (name, email, bio, score) VALUES (?, ?, ?, ?)"

// genRow is Turso's row i.
func genRow(i int) []any {
	return []any{fmt.Sprintf("user_%d", i), fmt.Sprintf("user%d@bench.dev", i),
		fmt.Sprintf("Bio for user %d: %s [%x]", i, strings.Repeat("x", 120), rand.Uint64()), rand.Float64() * 10000}
}

// A workload is one of the benchmark's five.
type workload struct {
	name  string
	turso float64 // the published speedup of Turso's sync over its embedded replicas
	seed  int     // rows on the primary before the replica opens
	run   func(ctx context.Context, s *side) error
}

// side is one side's replica under measurement.
type side struct {
	offline bool
	c       *embedded.Connector
	db      *sql.DB
	lats    []time.Duration // each write's, where the workload times them
}

var workloads = []workload{
	{name: "sequential inserts (3,000)", turso: 8.9, run: func(ctx context.Context, s *side) error {
		for i := range 3000 {
			row := genRow(i)
			start := time.Now()
			if _, err := s.db.ExecContext(ctx, insertSQL, row...); err != nil {
				return err
			}
			s.lats = append(s.lats, time.Since(start))
		}
		return s.finish(ctx)
	}},
	{name: "batched inserts (3,000, push every 500)", turso: 1.2, run: func(ctx context.Context, s *side) error {
		for start := 0; start < 3000; start += 500 {
			if !s.offline {
				stmts := make([]libsql.Statement, 500)
				for i := range stmts {
					stmts[i] = libsql.Statement{SQL: insertSQL, Args: genRow(start + i)}
				}
				conn, err := s.db.Conn(ctx)
				if err != nil {
					return err
				}
				_, err = libsql.Batch(ctx, conn, stmts, libsql.WithBatchMode(libsql.BatchWrite))
				conn.Close()
				if err != nil {
					return err
				}
				continue
			}
			for i := start; i < start+500; i++ {
				if _, err := s.db.ExecContext(ctx, insertSQL, genRow(i)...); err != nil {
					return err
				}
			}
			if err := s.c.Push(ctx); err != nil {
				return err
			}
		}
		return nil
	}},
	{name: "read-your-writes (200)", turso: 312, run: func(ctx context.Context, s *side) error {
		for i := range 200 {
			row := genRow(i)
			if _, err := s.db.ExecContext(ctx, insertSQL, row...); err != nil {
				return err
			}
			var n int
			if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM bench WHERE name = ?", row[0]).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("read-your-writes failed at %d", i)
			}
		}
		if s.offline {
			return s.c.Push(ctx)
		}
		return nil
	}},
	{name: "pull remote (5,000)", turso: 2.1, seed: 5000, run: func(ctx context.Context, s *side) error {
		if _, err := s.c.Sync(ctx); err != nil {
			return err
		}
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM bench").Scan(&n); err != nil {
			return err
		}
		if n != 5000 {
			return fmt.Errorf("pulled %d rows", n)
		}
		return nil
	}},
	{name: "sequential updates (2,000)", turso: 10.5, seed: 2000, run: func(ctx context.Context, s *side) error {
		for i := 1; i <= 2000; i++ {
			args := []any{rand.Float64() * 99999, fmt.Sprintf("Updated bio %d: %s", i, strings.Repeat("y", 120)), i}
			if _, err := s.db.ExecContext(ctx, "UPDATE bench SET score = ?, bio = ? WHERE id = ?", args...); err != nil {
				return err
			}
		}
		return s.finish(ctx)
	}},
}

// finish ends a workload as Turso's does: the replica syncs, the offline
// side pushes.
func (s *side) finish(ctx context.Context) error {
	if s.offline {
		return s.c.Push(ctx)
	}
	_, err := s.c.Sync(ctx)
	return err
}

// result is one measured run of a workload on one side.
type result struct {
	elapsed time.Duration
	delayproxy.Counts
	p50 time.Duration // of the timed writes, if any
}

func main() {
	rtts := flag.String("rtt", "0,20ms", "round-trip times to add, comma-separated")
	rounds := flag.Int("rounds", 1, "runs of each workload and side (the medians are reported)")
	only := flag.String("only", "", "run only the workloads whose name contains this")
	flag.Parse()
	bin, err := sqldproc.Find(context.Background(), "LIBSQL_SQLD")
	if err != nil {
		log.Fatal("sync-bench: ", err)
	}
	fmt.Printf("sqld: %s; %d round(s); medians\n\n", sqldproc.Version(context.Background(), bin), *rounds)
	for _, f := range strings.Split(*rtts, ",") {
		rtt, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			log.Fatal("sync-bench: -rtt: ", err)
		}
		fmt.Printf("### round trip %v\n\n", rtt)
		var notes []string
		fmt.Println("| workload | writes to the primary: time, requests, connections, bytes | offline writes: time, requests, connections, bytes | speedup | Turso's |")
		fmt.Println("|---|---|---|---|---|")
		for _, w := range workloads {
			if *only != "" && !strings.Contains(w.name, *only) {
				continue
			}
			var plain, offline []result
			for range *rounds {
				for _, off := range []bool{false, true} {
					r, err := measure(bin, rtt, w, off)
					if err != nil {
						log.Fatalf("sync-bench: %s (offline %v): %v", w.name, off, err)
					}
					if off {
						offline = append(offline, r)
					} else {
						plain = append(plain, r)
					}
				}
			}
			p, o := median(plain), median(offline)
			fmt.Printf("| %s | %s | %s | %.1fx | %.1fx |\n", w.name, p, o, float64(p.elapsed)/float64(o.elapsed), w.turso)
			if p.p50 > 0 {
				notes = append(notes, fmt.Sprintf("%s: a write's p50 %v to the primary, %v offline (%.3fx)",
					w.name, p.p50.Round(time.Microsecond), o.p50.Round(time.Microsecond), float64(o.p50)/float64(p.p50)))
			}
		}
		fmt.Println()
		for _, n := range notes {
			fmt.Println("- " + n)
		}
		fmt.Println()
	}
}

func (r result) String() string {
	return fmt.Sprintf("%v, %d, %d, %.2f MB", r.elapsed.Round(time.Millisecond), r.Requests, r.Conns, float64(r.Bytes)/1e6)
}

func median(rs []result) result {
	slices.SortFunc(rs, func(a, b result) int { return int(a.elapsed - b.elapsed) })
	return rs[len(rs)/2]
}

// measure runs w once on a new sqld, behind a proxy with rtt.
func measure(bin string, rtt time.Duration, w workload, offline bool) (result, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sync-bench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin, Dir: dir})
	if err != nil {
		return result{}, err
	}
	defer srv.Close()
	prim, err := sql.Open(libsql.DriverName, srv.URL())
	if err != nil {
		return result{}, err
	}
	defer prim.Close()
	if _, err := prim.ExecContext(ctx, ddl); err != nil {
		return result{}, err
	}
	if err := seed(ctx, prim, w.seed); err != nil {
		return result{}, err
	}
	proxy, err := delayproxy.New(srv.Addr(), rtt)
	if err != nil {
		return result{}, err
	}
	defer proxy.Close()
	opts := []embedded.Option{embedded.WithSyncInterval(0)}
	switch {
	case offline:
		opts = append(opts, embedded.WithOfflineWrites())
	case !strings.HasPrefix(w.name, "read-your-writes"):
		opts = append(opts, embedded.WithReadYourWrites(false)) // as Turso's side has it
	}
	c, err := embedded.NewConnector(filepath.Join(dir, "replica.db"), proxy.URL(), opts...)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	db := sql.OpenDB(c)
	defer db.Close()
	if w.seed == 0 || !strings.HasPrefix(w.name, "pull") {
		if _, err := c.Sync(ctx); err != nil {
			return result{}, err
		}
	}
	before := proxy.Counts()
	start := time.Now()
	s := &side{offline: offline, c: c, db: db}
	err = w.run(ctx, s)
	r := result{elapsed: time.Since(start), Counts: proxy.Counts().Minus(before)}
	if len(s.lats) > 0 {
		slices.Sort(s.lats)
		r.p50 = s.lats[len(s.lats)/2]
	}
	return r, err
}

// seed inserts n of Turso's rows on the primary, 500 per batch.
func seed(ctx context.Context, prim *sql.DB, n int) error {
	conn, err := prim.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for s := 0; s < n; s += 500 {
		var stmts []libsql.Statement
		for i := s; i < min(s+500, n); i++ {
			stmts = append(stmts, libsql.Statement{SQL: insertSQL, Args: genRow(i)})
		}
		if _, err := libsql.Batch(ctx, conn, stmts, libsql.WithBatchMode(libsql.BatchWrite)); err != nil {
			return err
		}
	}
	return nil
}
