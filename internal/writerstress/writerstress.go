// Package writerstress is the scenario of issue 11: concurrent autocommit
// writers on one *sql.DB against a sqld with its default WAL, the cores
// taken by busy loops, in which sqld 0.24.32 answers SQLITE_BUSY or stalls
// all writes for good. itest's TestWritersStress asserts on one run;
// bench/e2e/cmd/writers repeats runs and measures. Both run it from here:
//
//	srv := ... // a sqld of the run's own (internal/sqldproc)
//	db, _ := sql.Open("libsql", srv.URL())
//	res, err := writerstress.Run(ctx, db, writerstress.Config{
//		Workers: 32, PerWorker: 50, Busy: runtime.NumCPU(), Deadline: time.Minute,
//	})
//	if !res.Clean(32 * 50) { ... res.String() ... }
package writerstress

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/child"
)

// Config is one run.
type Config struct {
	Workers   int           // goroutines writing
	PerWorker int           // INSERTs per goroutine
	Busy      int           // busy loops to start (0: a quiet machine)
	Deadline  time.Duration // a run still going then counts as hung
}

// Result is what one run did.
type Result struct {
	OK      int64            // inserts that succeeded
	Errs    map[string]int64 // ErrClass -> count
	Rows    int64            // rows in the table afterwards (-1: unknown)
	Hung    bool             // the run hit its deadline
	Stalled bool             // afterwards a write still hung: sqld's stall
	Wall    time.Duration
	LoadAvg string // LoadAverage when the writers were done
	RowsErr string // why Rows is unknown
}

// Clean reports whether every one of want inserts succeeded exactly once,
// in time.
func (r Result) Clean(want int64) bool {
	return !r.Hung && len(r.Errs) == 0 && r.OK == want && r.Rows == want
}

func (r Result) String() string {
	s := fmt.Sprintf("ok %d, rows %d, hung %t, stalled %t, %v, load %s", r.OK, r.Rows, r.Hung, r.Stalled,
		r.Wall.Round(10*time.Millisecond), r.LoadAvg)
	if len(r.Errs) > 0 {
		s += ", errors: " + ErrorCounts(r.Errs)
	}
	if r.RowsErr != "" {
		s += ", count: " + r.RowsErr
	}
	return s
}

// ErrorCounts lists error classes and their counts, by class.
func ErrorCounts(errs map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		out = append(out, fmt.Sprintf("%dx %s", errs[k], k))
	}
	return strings.Join(out, "; ")
}

// ErrClass names an error briefly, for counting: "deadline",
// "SQLITE_BUSY" (libsql.ErrBusy), a libsql.Error's code, else the first 80
// bytes of the message.
func ErrClass(err error) string {
	var le *libsql.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, libsql.ErrBusy):
		return "SQLITE_BUSY"
	case errors.As(err, &le):
		return le.Code
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// Table is the table Run creates and fills.
const Table = "stress"

// Run creates Table on db's empty database and runs cfg.Workers
// goroutines of cfg.PerWorker autocommit INSERTs each, released at once,
// while cfg.Busy busy loops spin. A run that has not finished by
// cfg.Deadline is ended there and counted as hung; then an independent
// write with a 5 s deadline tells whether sqld itself stalled (reads keep
// working, so the rows can still be counted). The error is a failed set-up
// or ctx's.
func Run(ctx context.Context, db *sql.DB, cfg Config) (Result, error) {
	res := Result{Errs: map[string]int64{}, Rows: -1}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(sctx, "CREATE TABLE "+Table+" (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, seq INTEGER NOT NULL, UNIQUE (worker, seq))"); err != nil {
		return res, err
	}
	ins, err := db.PrepareContext(sctx, "INSERT INTO "+Table+" (worker, seq) VALUES (?, ?)")
	if err != nil {
		return res, err
	}
	defer ins.Close()

	stop, err := BusyLoops(cfg.Busy)
	if err != nil {
		return res, err
	}
	defer stop()
	var mu sync.Mutex
	var ok atomic.Int64
	wctx, wcancel := context.WithTimeout(ctx, cfg.Deadline)
	defer wcancel()
	start := time.Now()
	Together(cfg.Workers, func(w int) {
		for i := range cfg.PerWorker {
			if wctx.Err() != nil {
				return
			}
			if _, err := ins.ExecContext(wctx, w, i); err != nil {
				mu.Lock()
				res.Errs[ErrClass(err)]++
				mu.Unlock()
				continue
			}
			ok.Add(1)
		}
	})
	res.Wall = time.Since(start)
	if ctx.Err() != nil {
		return res, ctx.Err() // interrupted
	}
	res.Hung = wctx.Err() != nil
	res.OK = ok.Load()
	res.LoadAvg = LoadAverage()

	if res.Hung {
		// Is it sqld's stall? An independent write says.
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := db.ExecContext(pctx, "CREATE TABLE probe_"+strconv.Itoa(os.Getpid())+" (x)")
		pcancel()
		res.Stalled = errors.Is(err, context.DeadlineExceeded)
	}
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if err := db.QueryRowContext(cctx, "SELECT count(*) FROM "+Table).Scan(&res.Rows); err != nil {
		res.Rows = -1
		res.RowsErr = err.Error()
	}
	return res, ctx.Err()
}

// Together runs fn(0..n-1) in n goroutines, released at once, and waits
// for them.
func Together(n int, fn func(worker int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range n {
		wg.Add(1) // not wg.Go: the root module builds with Go 1.24
		go func() {
			defer wg.Done()
			<-start
			fn(w)
		}()
	}
	close(start)
	wg.Wait()
}

// BusyLoops starts n processes that spin on a core each. stop kills them
// and may be called more than once; on Linux they also die with this
// process.
func BusyLoops(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		cmds = nil
	}
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = child.Attr()
		if err := cmd.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, cmd)
	}
	return stop, nil
}

// LoadAverage returns the first field of /proc/loadavg, or "?".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
