// Command embedded-perf measures an embedded replica against one running
// sqld, in one run: local point SELECTs against the same over ws:// and
// HTTP, a 20,000-row scan, the bootstrap of 1M rows (throughput, and the
// peak RSS of a process that does only that), the read-your-writes wait
// after a write, and the requests an idle replica sends per minute; and
// an encrypted replica (WithEncryption) against one in the clear on the
// same point SELECTs, scan and bootstrap, alternated, with their ratios.
//
//	sqld -d /tmp/perf --http-listen-addr 127.0.0.1:8089 --no-welcome &
//	cd bench && go run ./cmd/embedded-perf -url http://127.0.0.1:8089
//
// It creates tables perf_* on the server (a new server is best). docs/dev/PERF.md
// has the numbers of a run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	_ "github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/embedded"
)

func main() {
	base := harness.URLFlag("http://127.0.0.1:8089")
	rows := flag.Int("rows", 1_000_000, "rows of the bootstrap table")
	point := flag.Int("point", 20000, "local point SELECTs (a tenth of it over the network)")
	idle := flag.Duration("idle", 20*time.Second, "how long to count an idle replica's requests")
	bootstrapOnly := flag.String("bootstrap-only", "", "internal: bootstrap a replica at this path and exit")
	key := flag.String("key", "", "internal: with -bootstrap-only, WithEncryption's key")
	cpuProfile := flag.String("cpuprofile", "", "with -bootstrap-only, write a CPU profile of the bootstrap to this file")
	encOnly := flag.Bool("encryption-only", false, "only the comparison of an encrypted replica with one in the clear")
	rounds := flag.Int("rounds", 3, "rounds of the encryption comparison (the median is reported)")
	harness.Main("embedded-perf", base, func() error {
		if *bootstrapOnly != "" {
			if *cpuProfile != "" {
				f, err := os.Create(*cpuProfile)
				if err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			return bootstrap(*base, *bootstrapOnly, *key)
		}
		if !*encOnly {
			if err := run(*base, *rows, *point, *idle); err != nil {
				return err
			}
		}
		return runEncryption(*base, *rows, *point, *rounds)
	})
}

func run(base string, rows, point int, idle time.Duration) error {
	ctx := context.Background()
	w, err := harness.NewWorkspace(ctx, "embedded-perf", base)
	if err != nil {
		return err
	}
	defer w.Close()
	dir, prim := w.Dir, w.Primary
	fmt.Printf("embedded-perf against %s\n\n", base)

	// Point SELECTs and scans on a 20,000-row table.
	if err := harness.FillPerf(ctx, prim, harness.PerfTable, harness.PerfRows); err != nil {
		return err
	}
	c, err := embedded.NewConnector(filepath.Join(dir, "replica.db"), base, embedded.WithSyncInterval(0))
	if err != nil {
		return err
	}
	defer c.Close()
	local := sql.OpenDB(c)
	defer local.Close()
	if _, err := c.Sync(ctx); err != nil {
		return err
	}
	ws, err := sql.Open("libsql", "ws"+strings.TrimPrefix(base, "http"))
	if err != nil {
		return err
	}
	defer ws.Close()
	fmt.Println("| what | local | ws:// | HTTP |")
	fmt.Println("| --- | --- | --- | --- |")
	lp, err := harness.PointSelects(ctx, local, point)
	if err != nil {
		return err
	}
	wp, err := harness.PointSelects(ctx, ws, point/10)
	if err != nil {
		return err
	}
	hp, err := harness.PointSelects(ctx, prim, point/10)
	if err != nil {
		return err
	}
	fmt.Printf("| point SELECT p50 | %v | %v | %v |\n", lp.P50, wp.P50, hp.P50)
	fmt.Printf("| point SELECT p99 | %v | %v | %v |\n", lp.P99, wp.P99, hp.P99)
	fmt.Printf("| local / ws:// p50 | %.3fx | | |\n", float64(lp.P50)/float64(wp.P50))
	var scans [3]float64
	for i, db := range []*sql.DB{local, ws, prim} {
		if scans[i], err = harness.ScanRate(ctx, db, harness.PerfTable, 5); err != nil {
			return err
		}
	}
	fmt.Printf("| 20k-row scan | %.0f rows/s | %.0f rows/s | %.0f rows/s |\n\n", scans[0], scans[1], scans[2])

	// Read-your-writes: the wait of the first local read after a write.
	waits, err := catchUp(ctx, local, 200)
	if err != nil {
		return err
	}
	fmt.Printf("read-your-writes wait of the read after a write (200 rounds, no background sync): p50 %v, p99 %v\n\n", waits.P50, waits.P99)

	// Bootstrap of rows rows, in a process of its own for its peak RSS.
	if err := harness.FillPerf(ctx, prim, "perf_big", rows); err != nil {
		return err
	}
	path := filepath.Join(dir, "bootstrap.db")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	took, rss, err := bootstrapProcess(self, base, path, "")
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Printf("bootstrap of %d rows (a %.1f MB file, the process's whole life): %v, %.1f MB/s, peak RSS %.1f MB\n\n",
		rows, float64(st.Size())/1e6, took.Round(time.Millisecond), float64(st.Size())/1e6/took.Seconds(), rss)

	// The requests of an idle replica at the default interval, counted by
	// a proxy in front of the server.
	n, err := idleRequests(base, dir, idle)
	if err != nil {
		return err
	}
	fmt.Printf("idle replica at the default interval (%v): %.0f requests per minute (counted over %v)\n",
		embedded.DefaultSyncInterval, n/idle.Minutes(), idle)
	return nil
}

// catchUp returns the p50 and p99 of the first local read after a write.
func catchUp(ctx context.Context, db *sql.DB, rounds int) (harness.Latency, error) {
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS perf_rw (id INTEGER PRIMARY KEY, v INTEGER)"); err != nil {
		return harness.Latency{}, err
	}
	lat := make([]time.Duration, 0, rounds)
	for i := range rounds {
		if _, err := db.ExecContext(ctx, "INSERT OR REPLACE INTO perf_rw VALUES (?, ?)", i, i); err != nil {
			return harness.Latency{}, err
		}
		start := time.Now()
		var v int
		if err := db.QueryRowContext(ctx, "SELECT v FROM perf_rw WHERE id = ?", i).Scan(&v); err != nil {
			return harness.Latency{}, err
		}
		lat = append(lat, time.Since(start))
	}
	return harness.Quantiles(lat), nil
}

func bootstrap(base, path, key string) error {
	opts := []embedded.Option{embedded.WithSyncInterval(0)}
	if key != "" {
		opts = append(opts, embedded.WithEncryption(key))
	}
	c, err := embedded.NewConnector(path, base, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err = c.Sync(context.Background()); err != nil {
		return err
	}
	// The peak RSS of this process since its exec, for the parent (whose
	// rusage of a child counts the parent's memory at the fork).
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Println(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")))
		}
	}
	return nil
}

func idleRequests(base, dir string, d time.Duration) (float64, error) {
	proxy, err := harness.NewCountingProxy(base)
	if err != nil {
		return 0, err
	}
	defer proxy.Close()
	c, err := embedded.NewConnector(filepath.Join(dir, "idle.db"), proxy.URL())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := c.Sync(context.Background()); err != nil {
		return 0, err
	}
	proxy.Reset()
	time.Sleep(d)
	return float64(proxy.Requests()), nil
}

// bootstrapProcess bootstraps a replica at path (encrypted under key if
// not "") in a process of its own, and returns how long the process took
// and its peak RSS in MB.
func bootstrapProcess(self, base, path, key string) (time.Duration, float64, error) {
	cmd := exec.Command(self, "-url", base, "-bootstrap-only", path, "-key", key)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("bootstrap: %w", err)
	}
	took := time.Since(start)
	var kb float64
	if _, err := fmt.Sscanf(string(out), "%f kB", &kb); err != nil {
		return 0, 0, fmt.Errorf("bootstrap: peak RSS %q: %w", out, err)
	}
	return took, kb / 1024, nil
}

// runEncryption compares a replica encrypted with WithEncryption to one
// in the clear, in rounds that alternate the two, and prints the medians
// and the ratios encrypted/plain. It fills perf_t and perf_big if they do
// not hold the rows already.
func runEncryption(base string, rows, point, rounds int) error {
	ctx := context.Background()
	w, err := harness.NewWorkspace(ctx, "embedded-perf-enc", base)
	if err != nil {
		return err
	}
	defer w.Close()
	dir, prim := w.Dir, w.Primary
	for name, n := range map[string]int{harness.PerfTable: harness.PerfRows, "perf_big": rows} {
		var have int
		if err := prim.QueryRowContext(ctx, "SELECT count(*) FROM "+name).Scan(&have); err != nil || have != n {
			if err := harness.FillPerf(ctx, prim, name, n); err != nil {
				return err
			}
		}
	}
	const key = "embedded-perf encryption key"
	var dbs [2]*sql.DB // plain, encrypted
	for i, opts := range [][]embedded.Option{nil, {embedded.WithEncryption(key)}} {
		c, err := embedded.NewConnector(filepath.Join(dir, fmt.Sprintf("replica%d.db", i)), base, append(opts, embedded.WithSyncInterval(0))...)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Sync(ctx); err != nil {
			return err
		}
		dbs[i] = sql.OpenDB(c)
		defer dbs[i].Close()
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var fig harness.PlainEncrypted
	var big, boot, rss [2][]float64
	for round := range rounds {
		// Point SELECTs and scans alternate between the two replicas
		// query by query, so that both see the same machine.
		if err := fig.Round(ctx, dbs, point); err != nil {
			return err
		}
		// A scan of perf_big (rows rows, past SQLite's page cache): every
		// page read from the file, and deciphered.
		for i, db := range dbs {
			r, err := harness.ScanRate(ctx, db, "perf_big", 1)
			if err != nil {
				return err
			}
			big[i] = append(big[i], r)
		}
		for i := range dbs {
			k := ""
			if i == 1 {
				k = key
			}
			took, mb, err := bootstrapProcess(self, base, filepath.Join(dir, fmt.Sprintf("boot%d-%d.db", i, round)), k)
			if err != nil {
				return err
			}
			boot[i], rss[i] = append(boot[i], took.Seconds()), append(rss[i], mb)
		}
	}
	med := harness.Median[float64]
	fmt.Printf("\nencrypted (WithEncryption) against plain, median of %d alternated rounds:\n\n", rounds)
	fmt.Println("| what | plain | encrypted | encrypted/plain | target |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	fmt.Print(fig.Rows(true))
	fmt.Printf("| %d-row scan (past the page cache) | %.0f rows/s | %.0f rows/s | %.2fx | |\n", rows, med(big[0]), med(big[1]), med(big[1])/med(big[0]))
	fmt.Printf("| bootstrap of %d rows | %.2f s | %.2f s | %.2fx | <= 1.3x |\n", rows, med(boot[0]), med(boot[1]), med(boot[1])/med(boot[0]))
	fmt.Printf("| bootstrap peak RSS | %.1f MB | %.1f MB | | <= 64 MB |\n", slices.Max(rss[0]), slices.Max(rss[1]))
	return nil
}
