// Package worker is the main of the two helper programs, e2e-ours and
// e2e-peer, which differ only in the driver they link (both register the
// name "libsql", so they cannot share a process). It runs one named
// workload against -dsn and prints one JSON line, a workload.Result; on
// failure the line carries the error and the exit status is 1.
package worker

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
)

// Func runs a workload that is not a database/sql one (the ceiling).
type Func func(ctx context.Context, dsn string, o workload.Options) (workload.Result, error)

var dbWorkloads = map[string]func(context.Context, *sql.DB, workload.Options) (workload.Result, error){
	"scan20k":    workload.ScanFixture,
	"point":      workload.Point,
	"insert":     workload.InsertTx,
	"concurrent": workload.Concurrent,
	"scan1m":     workload.ScanBig,
}

// Program describes one helper program.
type Program struct {
	Name   string          // for messages
	Driver string          // database/sql driver name
	Extra  map[string]Func // workloads that are not database/sql ones
}

// Main parses the flags, runs the workload through p's driver (or one of
// p.Extra) and exits.
func Main(p Program) {
	program, extra := p.Name, p.Extra
	names := make([]string, 0, len(dbWorkloads)+len(extra))
	for n := range dbWorkloads {
		names = append(names, n)
	}
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)

	fs := flag.NewFlagSet(program, flag.ExitOnError)
	var (
		dsn  = fs.String("dsn", "", "data source name (for the ceiling: the server's base URL)")
		name = fs.String("workload", "", "workload to run: "+strings.Join(names, ", "))
		o    workload.Options
	)
	fs.IntVar(&o.Iters, "iters", 5, "measured iterations (scan20k, ceiling)")
	fs.IntVar(&o.N, "n", 0, "rows to expect (scans, ceiling), queries (point) or rows to insert (insert)")
	fs.IntVar(&o.Conc, "conc", 16, "goroutines (concurrent)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long (concurrent)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the point workloads' key sequence")
	fs.IntVar(&workload.ServerPID, "server-pid", 0, "the server's process `id`, whose CPU time is measured too (Linux)")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after this long")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this `file`")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the whole run to this `file`")
	_ = fs.Parse(os.Args[1:])
	if *dsn == "" || *name == "" || o.N <= 0 {
		fmt.Fprintf(os.Stderr, "%s: -dsn, -workload and -n are required\n", program)
		fs.Usage()
		os.Exit(2)
	}

	if *memProfile != "" {
		runtime.MemProfileRate = 4096
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: -cpuprofile: %v\n", program, err)
			os.Exit(2)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	res, err := run(ctx, p.Driver, *dsn, *name, o, extra)
	cancel()
	stop()
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		if f, err := os.Create(*memProfile); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	res.Workload = *name
	if err != nil {
		res.Error = oneLine(err.Error())
	}
	out, merr := json.Marshal(res)
	if merr != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, merr)
		os.Exit(1)
	}
	fmt.Println(string(out))
	if err != nil {
		os.Exit(1)
	}
}

func run(ctx context.Context, driverName, dsn, name string, o workload.Options, extra map[string]Func) (workload.Result, error) {
	if f, ok := extra[name]; ok {
		return f(ctx, dsn, o)
	}
	f, ok := dbWorkloads[name]
	if !ok {
		return workload.Result{}, fmt.Errorf("unknown workload %q", name)
	}
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return workload.Result{}, err
	}
	defer db.Close()
	return f(ctx, db, o)
}

// oneLine keeps an error message readable in a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
