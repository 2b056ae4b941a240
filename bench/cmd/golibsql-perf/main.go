// Command golibsql-perf measures go-libsql's embedded replica (cgo, the
// Rust libsql crate), in the clear and with its WithEncryption, on the
// point SELECTs and the 20,000-row scan of embedded-perf, so that the two
// can be compared. It is a module of its own: go-libsql needs cgo and
// registers the driver name "libsql", as this repository's driver does, so
// it can only be measured in a process of its own.
//
//	cd bench && go run ./cmd/embedded-perf -url http://127.0.0.1:18089 -encryption-only  # fills perf_t
//	cd bench/cmd/golibsql-perf && go run . -url http://127.0.0.1:18089
//
// Its loops are the bench module's harness (bench/internal/harness),
// which imports no driver.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tursodatabase/go-libsql"

	"github.com/gohrana/libsql/bench/internal/harness"
)

func main() {
	base := harness.URLFlag("http://127.0.0.1:18089, with embedded-perf's perf_t")
	point := flag.Int("point", 20000, "point SELECTs per round")
	rounds := flag.Int("rounds", 5, "rounds (the median is reported)")
	harness.Main("golibsql-perf", base, func() error { return run(*base, *point, *rounds) })
}

func run(base string, point, rounds int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "golibsql-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const key = "golibsql-perf encryption key"
	dbs := make([]*sql.DB, 2) // plain, encrypted
	for i, opts := range [][]libsql.Option{nil, {libsql.WithEncryption(key)}} {
		c, err := libsql.NewEmbeddedReplicaConnector(filepath.Join(dir, fmt.Sprintf("replica%d.db", i)), base, opts...)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Sync(); err != nil {
			return err
		}
		dbs[i] = sql.OpenDB(c)
		defer dbs[i].Close()
		var n int
		if err := dbs[i].QueryRowContext(ctx, "SELECT count(*) FROM "+harness.PerfTable).Scan(&n); err != nil || n != harness.PerfRows {
			return fmt.Errorf("perf_t: %d rows, %v (run embedded-perf first)", n, err)
		}
	}
	var p50, p99, scan [2][]float64
	for range rounds {
		q, err := harness.PairedPointSelects(ctx, dbs, point)
		if err != nil {
			return err
		}
		for j := range dbs {
			p50[j] = append(p50[j], float64(q[j].P50))
			p99[j] = append(p99[j], float64(q[j].P99))
		}
		for range 3 {
			for j, db := range dbs {
				r, err := harness.ScanRate(ctx, db, harness.PerfTable, 5)
				if err != nil {
					return err
				}
				scan[j] = append(scan[j], r)
			}
		}
	}
	med := harness.Median[float64]
	us := func(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1e3) }
	fmt.Printf("go-libsql embedded replica against %s, median of %d rounds:\n\n", base, rounds)
	fmt.Println("| what | plain | encrypted | encrypted/plain |")
	fmt.Println("| --- | --- | --- | --- |")
	fmt.Printf("| point SELECT p50 | %s | %s | %.2fx |\n", us(med(p50[0])), us(med(p50[1])), med(p50[1])/med(p50[0]))
	fmt.Printf("| point SELECT p99 | %s | %s | %.2fx |\n", us(med(p99[0])), us(med(p99[1])), med(p99[1])/med(p99[0]))
	fmt.Printf("| 20k-row scan | %.0f rows/s | %.0f rows/s | %.2fx |\n", med(scan[0]), med(scan[1]), med(scan[1])/med(scan[0]))
	return nil
}
