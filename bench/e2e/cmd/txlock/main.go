// Command txlock measures read-then-write transactions under contention,
// per _txlock mode, against sqld: the workload of issue 26. Clients share
// two *sql.DB of each mode (-clients in all, -rows rows); each mixes
// reads, autocommit increments, compare-and-set UPDATEs and transactions
// BeginTx; SELECT v; UPDATE v = read+1; Commit. Each round gets a fresh
// sqld per mode (from -sqld, $SQLD or scripts/sqld.sh, on a 127.0.0.1
// port of internal/loopback), the modes in an order rotated from round to
// round, for -seconds each.
//
// It reports, per mode and transport: transactions committed per second,
// those that failed with SQLITE_BUSY and with other errors, the other
// operations done, and whether the rows' sum equals the increments that
// succeeded (nothing lost, nothing applied twice).
//
//	go run ./cmd/txlock -rounds 3 -seconds 10
//
// Progress goes to stderr, the report (Markdown) to stdout.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/internal/sqldproc"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	bin        string
	rounds     int
	seconds    float64
	clients    int
	rows       int
	modes      []string
	transports []string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("txlock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	var modes, transports string
	fs.StringVar(&cfg.bin, "sqld", "", "the sqld binary (default: $SQLD, else scripts/sqld.sh)")
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds")
	fs.Float64Var(&cfg.seconds, "seconds", 10, "seconds per sample")
	fs.IntVar(&cfg.clients, "clients", 8, "clients, over two *sql.DB")
	fs.IntVar(&cfg.rows, "rows", 8, "rows the clients contend on")
	fs.StringVar(&modes, "modes", "deferred,immediate", "_txlock modes, comma-separated")
	fs.StringVar(&transports, "transports", "http,ws", "transports, comma-separated")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg.modes = strings.Split(modes, ",")
	cfg.transports = strings.Split(transports, ",")
	if cfg.bin == "" {
		bin, err := sqldproc.Find(context.Background(), "SQLD")
		if err != nil {
			fmt.Fprintf(stderr, "txlock: %v\n", err)
			return 1
		}
		cfg.bin = bin
	}
	results := map[string][]sample{}
	for round := 0; round < cfg.rounds; round++ {
		for _, tr := range cfg.transports {
			for i := range cfg.modes {
				mode := cfg.modes[(i+round)%len(cfg.modes)]
				s, err := measure(cfg, tr, mode)
				if err != nil {
					fmt.Fprintf(stderr, "txlock: round %d %s %s: %v\n", round+1, tr, mode, err)
					return 1
				}
				key := tr + " " + mode
				results[key] = append(results[key], s)
				fmt.Fprintf(stderr, "round %d/%d %s: %+v\n", round+1, cfg.rounds, key, s)
			}
		}
	}
	report(stdout, cfg, results)
	return 0
}

// sample is one run of the workload.
type sample struct {
	Committed, TxBusy, TxOther int64 // transactions
	Ops, OpErrors              int64 // reads, increments and CAS UPDATEs
	// Unknown counts the writes whose error says they may have run
	// (an answer lost, a deadline): each may or may not have incremented.
	Unknown    int64
	Seconds    float64
	Consistent bool // sum(v) is the increments that succeeded, plus at most Unknown
}

func (s sample) committedPerSec() float64 { return float64(s.Committed) / s.Seconds }

func measure(cfg config, transport, mode string) (sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: cfg.bin})
	if err != nil {
		return sample{}, err
	}
	defer srv.Close()
	base := srv.URL()
	if transport == "ws" {
		base = srv.WS()
	}
	dsn := base + "?_txlock=" + mode
	setup, err := sql.Open(libsql.DriverName, dsn)
	if err != nil {
		return sample{}, err
	}
	defer setup.Close()
	if _, err := setup.ExecContext(ctx, "CREATE TABLE kv (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)"); err != nil {
		return sample{}, err
	}
	if _, err := setup.ExecContext(ctx, `INSERT INTO kv WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < ?) SELECT x, 0 FROM g`, cfg.rows); err != nil {
		return sample{}, err
	}
	dbs := make([]*sql.DB, 2)
	for i := range dbs {
		if dbs[i], err = sql.Open(libsql.DriverName, dsn); err != nil {
			return sample{}, err
		}
		defer dbs[i].Close()
	}

	var s sample
	var increments atomic.Int64
	var wg sync.WaitGroup
	dur := time.Duration(cfg.seconds * float64(time.Second))
	start := time.Now()
	end := start.Add(dur)
	for c := 0; c < cfg.clients; c++ {
		db := dbs[c%2]
		rng := rand.New(rand.NewPCG(uint64(c), 42))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				id := 1 + rng.IntN(cfg.rows)
				octx, ocancel := context.WithTimeout(context.Background(), 30*time.Second)
				switch rng.IntN(4) {
				case 0: // read
					var v int64
					if err := db.QueryRowContext(octx, "SELECT v FROM kv WHERE id = ?", id).Scan(&v); err != nil {
						atomic.AddInt64(&s.OpErrors, 1)
					}
					atomic.AddInt64(&s.Ops, 1)
				case 1: // increment
					if _, err := db.ExecContext(octx, "UPDATE kv SET v = v + 1 WHERE id = ?", id); err != nil {
						atomic.AddInt64(&s.OpErrors, 1)
						unknown(&s, err)
					} else {
						increments.Add(1)
					}
					atomic.AddInt64(&s.Ops, 1)
				case 2: // compare-and-set
					var v int64
					if err := db.QueryRowContext(octx, "SELECT v FROM kv WHERE id = ?", id).Scan(&v); err != nil {
						atomic.AddInt64(&s.OpErrors, 1)
						break
					}
					res, err := db.ExecContext(octx, "UPDATE kv SET v = ? WHERE id = ? AND v = ?", v+1, id, v)
					if err != nil {
						atomic.AddInt64(&s.OpErrors, 1)
						unknown(&s, err)
					} else if n, _ := res.RowsAffected(); n == 1 {
						increments.Add(1)
					}
					atomic.AddInt64(&s.Ops, 1)
				case 3: // read-then-write transaction
					err := readThenWrite(octx, db, id)
					switch {
					case err == nil:
						atomic.AddInt64(&s.Committed, 1)
						increments.Add(1)
					case errors.Is(err, libsql.ErrBusy):
						atomic.AddInt64(&s.TxBusy, 1)
					default:
						atomic.AddInt64(&s.TxOther, 1)
						unknown(&s, err)
					}
				}
				ocancel()
			}
		}()
	}
	wg.Wait()
	s.Seconds = time.Since(start).Seconds()
	var sum int64
	if err := setup.QueryRowContext(ctx, "SELECT sum(v) FROM kv").Scan(&sum); err != nil {
		return sample{}, err
	}
	s.Consistent = sum >= increments.Load() && sum <= increments.Load()+s.Unknown
	return s, nil
}

// unknown counts a write's error that does not show the write did not
// run.
func unknown(s *sample, err error) {
	var le *libsql.Error
	if !errors.As(err, &le) || !le.SafeToRetry() {
		atomic.AddInt64(&s.Unknown, 1)
	}
}

// readThenWrite is the transaction of the workload: read a row, write it
// back incremented.
func readThenWrite(ctx context.Context, db *sql.DB, id int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var v int64
	if err := tx.QueryRowContext(ctx, "SELECT v FROM kv WHERE id = ?", id).Scan(&v); err != nil {
		_ = tx.Rollback()
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE kv SET v = ? WHERE id = ?", v+1, id); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func report(w io.Writer, cfg config, results map[string][]sample) {
	fmt.Fprintf(w, "%d clients on 2 *sql.DB, %d rows, %d round(s) of %.0f s per cell; medians of the rounds\n\n", cfg.clients, cfg.rows, cfg.rounds, cfg.seconds)
	fmt.Fprintln(w, "| transport | _txlock | tx committed/s | tx failed SQLITE_BUSY | tx failed otherwise | other ops/s | op errors | committed/s vs deferred | sum consistent | slowest sample |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, k := range slices.Sorted(maps.Keys(results)) {
		ss := results[k]
		tr, mode, _ := strings.Cut(k, " ")
		base := results[tr+" deferred"]
		ratio := "-"
		if len(base) == len(ss) {
			var rs []float64
			for i := range ss {
				if b := base[i].committedPerSec(); b > 0 {
					rs = append(rs, ss[i].committedPerSec()/b)
				}
			}
			if len(rs) > 0 {
				ratio = fmt.Sprintf("%.2fx", harness.Median(rs))
			}
		}
		consistent := true
		slowest := 0.0
		var busy, other, errs []float64
		var rates, ops []float64
		for _, s := range ss {
			consistent = consistent && s.Consistent
			slowest = max(slowest, s.Seconds)
			rates = append(rates, s.committedPerSec())
			ops = append(ops, float64(s.Ops)/s.Seconds)
			busy = append(busy, float64(s.TxBusy))
			other = append(other, float64(s.TxOther))
			errs = append(errs, float64(s.OpErrors))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %t | %.1f s |\n", tr, mode, harness.Median(rates), harness.Median(busy), harness.Median(other), harness.Median(ops), harness.Median(errs), ratio, consistent, slowest)
	}
}
