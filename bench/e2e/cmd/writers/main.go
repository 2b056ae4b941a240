// Command writers measures concurrent autocommit writers on one *sql.DB
// against sqld with its default WAL, per set of DSN parameters (typically
// maxWriters=...), the scenario of issue 11 in which sqld 0.24.32 answers
// SQLITE_BUSY, halves its insert rate or stalls all writes for good. Each
// sample gets a sqld of its own (from -sqld, $SQLD or scripts/sqld.sh, on
// a 127.0.0.1 port from internal/loopback), killed afterwards. Two
// measurements, one per run of the command:
//
// Stall runs (-runs N): N runs per parameter set, interleaved, each of
// -workers goroutines x -per INSERTs with -busy busy loops taking the
// cores. A run not done by -deadline is ended and counts as hung; an
// independent write that then hangs 5 s more says sqld itself stalled.
// It prints, per parameter set, how many runs were clean and how many
// stalled sqld.
//
// Throughput (-rounds N): inserts/s at 1, 4, 16 and 64 writers on a quiet
// machine, -seconds per sample, in N rounds; each round and concurrency
// gets a fresh sqld, on which every parameter set runs in turn, in an order
// rotated from round to round; optionally behind a proxy that adds
// -latency to each direction. It prints a table of the median inserts/s
// per cell and the median per-round ratio to the first parameter set.
//
// From the bench/e2e module (or `make bench-writers WRITERS_FLAGS=...` at
// the repository root):
//
//	go run ./cmd/writers -runs 8 -params ';maxWriters=0'
//	go run ./cmd/writers -rounds 7 -seconds 2 -params 'maxWriters=0;maxWriters=1;maxWriters=2;maxWriters=4'
//	go run ./cmd/writers -rounds 3 -latency 10ms -params 'maxWriters=0;maxWriters=1;maxWriters=4;maxWriters=8'
//
// Progress goes to stderr, the report (Markdown) to stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	_ "github.com/gohrana/libsql"              // registers the driver
	_ "github.com/gohrana/libsql/codec/gojson" // registers codec=gojson (direct and protobuf come with the driver)
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/writerstress"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "writers: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "writers: %v\n", err)
		return 1
	}
	return 0
}

// measure runs what cfg asks for and writes the report to stdout.
func measure(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	bin := cfg.sqld
	if bin == "" {
		var err error
		if bin, err = sqldproc.Find(ctx, "SQLD"); err != nil {
			return fmt.Errorf("%w (or pass -sqld)", err)
		}
	}
	env := environment{server: sqldproc.Version(ctx, bin), goos: runtime.GOOS, goarch: runtime.GOARCH,
		cpus: runtime.NumCPU(), goVersion: runtime.Version(), loadBefore: writerstress.LoadAverage()}
	if cfg.runs > 0 {
		results, err := stressRuns(ctx, cfg, bin, logf)
		if err != nil {
			return err
		}
		env.loadAfter = writerstress.LoadAverage()
		writeStressReport(stdout, env, cfg, results)
		return nil
	}
	samples, err := throughput(ctx, cfg, bin, logf)
	if err != nil {
		return err
	}
	env.loadAfter = writerstress.LoadAverage()
	writeThroughputReport(stdout, env, cfg, samples)
	return nil
}
