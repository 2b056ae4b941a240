// Command golibsql-perf measures go-libsql's embedded replica (cgo, the
// Rust libsql crate), in the clear and with its WithEncryption, on the
// point SELECTs and the 20,000-row scan of embedded-perf, so that the two
// can be compared. It is a module of its own: go-libsql needs cgo and
// registers the driver name "libsql", as this repository's driver does, so
// it can only be measured in a process of its own.
//
//	cd embedded && go run ./cmd/embedded-perf -url http://127.0.0.1:18089 -encryption-only  # fills perf_t
//	cd embedded/cmd/golibsql-perf && go run . -url http://127.0.0.1:18089
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tursodatabase/go-libsql"
)

func main() {
	base := flag.String("url", "", "base URL of a running sqld (http://127.0.0.1:18089) with embedded-perf's perf_t")
	point := flag.Int("point", 20000, "point SELECTs per round")
	rounds := flag.Int("rounds", 5, "rounds (the median is reported)")
	flag.Parse()
	if *base == "" {
		log.Fatal("golibsql-perf: give -url")
	}
	if err := run(*base, *point, *rounds); err != nil {
		log.Fatal("golibsql-perf: ", err)
	}
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
		if err := dbs[i].QueryRowContext(ctx, "SELECT count(*) FROM perf_t").Scan(&n); err != nil || n != 20000 {
			return fmt.Errorf("perf_t: %d rows, %v (run embedded-perf first)", n, err)
		}
	}
	var p50, p99, scan [2][]float64
	for range rounds {
		lat := [2][]time.Duration{}
		var name string
		for i := range point {
			for j, db := range dbs {
				start := time.Now()
				if err := db.QueryRowContext(ctx, "SELECT name FROM perf_t WHERE id = ?", i%20000+1).Scan(&name); err != nil {
					return err
				}
				lat[j] = append(lat[j], time.Since(start))
			}
		}
		for j := range dbs {
			slices.Sort(lat[j])
			p50[j] = append(p50[j], float64(lat[j][len(lat[j])/2]))
			p99[j] = append(p99[j], float64(lat[j][len(lat[j])*99/100]))
		}
		for range 3 {
			for j, db := range dbs {
				r, err := scanRate(ctx, db)
				if err != nil {
					return err
				}
				scan[j] = append(scan[j], r)
			}
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	us := func(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1e3) }
	fmt.Printf("go-libsql embedded replica against %s, median of %d rounds:\n\n", base, rounds)
	fmt.Println("| what | plain | encrypted | encrypted/plain |")
	fmt.Println("| --- | --- | --- | --- |")
	fmt.Printf("| point SELECT p50 | %s | %s | %.2fx |\n", us(med(p50[0])), us(med(p50[1])), med(p50[1])/med(p50[0]))
	fmt.Printf("| point SELECT p99 | %s | %s | %.2fx |\n", us(med(p99[0])), us(med(p99[1])), med(p99[1])/med(p99[0]))
	fmt.Printf("| 20k-row scan | %.0f rows/s | %.0f rows/s | %.2fx |\n", med(scan[0]), med(scan[1]), med(scan[1])/med(scan[0]))
	return nil
}

// scanRate reads the whole table five times and returns rows per second,
// as embedded-perf's scanRate does.
func scanRate(ctx context.Context, db *sql.DB) (float64, error) {
	start := time.Now()
	total := 0
	for range 5 {
		rows, err := db.QueryContext(ctx, "SELECT id, name, email, n, score, note FROM perf_t")
		if err != nil {
			return 0, err
		}
		var (
			id, n             int64
			name, email, note string
			score             float64
		)
		for rows.Next() {
			if err := rows.Scan(&id, &name, &email, &n, &score, &note); err != nil {
				rows.Close()
				return 0, err
			}
			total++
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
	}
	return float64(total) / time.Since(start).Seconds(), nil
}
