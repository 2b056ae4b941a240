package writerstress

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql"
)

func TestResultClean(t *testing.T) {
	ok := Result{OK: 10, Rows: 10, Errs: map[string]int64{}}
	if !ok.Clean(10) {
		t.Error("a run with every insert done once is not clean")
	}
	for name, r := range map[string]Result{
		"hung":         {OK: 10, Rows: 10, Hung: true, Errs: map[string]int64{}},
		"errors":       {OK: 10, Rows: 10, Errs: map[string]int64{"SQLITE_BUSY": 1}},
		"short":        {OK: 9, Rows: 9, Errs: map[string]int64{}},
		"extra rows":   {OK: 10, Rows: 11, Errs: map[string]int64{}},
		"rows unknown": {OK: 10, Rows: -1, Errs: map[string]int64{}},
	} {
		if r.Clean(10) {
			t.Errorf("%s: clean", name)
		}
	}
	s := Result{OK: 7, Rows: 9, Hung: true, Stalled: true, Wall: 60004 * time.Millisecond, LoadAvg: "20.3",
		Errs: map[string]int64{"deadline": 3, "SQLITE_BUSY": 1}, RowsErr: "gone"}.String()
	if want := "ok 7, rows 9, hung true, stalled true, 1m0s, load 20.3, errors: 1x SQLITE_BUSY; 3x deadline, count: gone"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
}

func TestErrClass(t *testing.T) {
	long := strings.Repeat("x", 100)
	for err, want := range map[error]string{
		fmt.Errorf("exec: %w", context.DeadlineExceeded): "deadline",
		&libsql.Error{Code: "SQLITE_BUSY"}:               "SQLITE_BUSY",
		&libsql.Error{Code: "SQLITE_LOCKED"}:             "SQLITE_BUSY",
		&libsql.Error{Code: "SQLITE_CONSTRAINT"}:         "SQLITE_CONSTRAINT",
		errors.New("connection refused"):                 "connection refused",
		errors.New(long):                                 long[:80],
	} {
		if got := ErrClass(err); got != want {
			t.Errorf("ErrClass(%v) = %q, want %q", err, got, want)
		}
	}
}

// Together runs its n workers at the same time: each sees all n started.
func TestTogether(t *testing.T) {
	const n = 8
	var started, sawAll atomic.Int64
	release := make(chan struct{})
	go func() {
		for started.Load() < n {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	Together(n, func(int) {
		started.Add(1)
		<-release
		if started.Load() == n {
			sawAll.Add(1)
		}
	})
	if sawAll.Load() != n {
		t.Errorf("%d of %d workers saw all started", sawAll.Load(), n)
	}
}

func TestBusyLoops(t *testing.T) {
	stop, err := BusyLoops(2)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // a second call is harmless
	if LoadAverage() == "" {
		t.Error("no load average")
	}
}
