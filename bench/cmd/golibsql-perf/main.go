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
	var dbs [2]*sql.DB // plain, encrypted
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
	var fig harness.PlainEncrypted
	for range rounds {
		if err := fig.Round(ctx, dbs, point); err != nil {
			return err
		}
	}
	fmt.Printf("go-libsql embedded replica against %s, median of %d rounds:\n\n", base, rounds)
	fmt.Println("| what | plain | encrypted | encrypted/plain |")
	fmt.Println("| --- | --- | --- | --- |")
	fmt.Print(fig.Rows(false))
	return nil
}
