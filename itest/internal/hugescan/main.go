// Command hugescan is the child process of itest's TestHugeScan: it scans
// the table HUGE_TABLE through database/sql with the DSN HUGE_DSN, checks
// every row, and prints the row count and the peak of
// runtime.MemStats.Sys, the memory the Go runtime took from the OS.
//
// The test builds it without the race detector: the bound it checks is on
// the memory a user's program takes, which the detector's shadow memory
// and its 5-10x slowdown of a million-row loop would not show. The cursor
// code's concurrency is raced by the tests that run in the test binary.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	_ "github.com/gohrana/libsql"
	_ "github.com/gohrana/libsql/codec/gojson"
)

func main() {
	if err := run(os.Getenv("HUGE_DSN"), os.Getenv("HUGE_TABLE")); err != nil {
		fmt.Fprintln(os.Stderr, "hugescan:", err)
		os.Exit(1)
	}
}

func run(dsn, table string) error {
	if dsn == "" || table == "" {
		return fmt.Errorf("HUGE_DSN and HUGE_TABLE are needed")
	}
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT id, name, score FROM "+table+" ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		n     int64
		id    int64
		name  string
		score float64
		peak  uint64
		ms    runtime.MemStats
	)
	for rows.Next() {
		if err := rows.Scan(&id, &name, &score); err != nil {
			return fmt.Errorf("row %d: %w", n+1, err)
		}
		n++
		if id != n || score != float64(n)*0.5 || name != "name-"+strconv.FormatInt(n, 10) {
			return fmt.Errorf("row %d: got (%d, %q, %v)", n, id, name, score)
		}
		if n%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.Sys)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("after %d rows: %w", n, err)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.Sys)
	fmt.Printf("HUGE rows=%d sys=%d\n", n, peak)
	return nil
}
