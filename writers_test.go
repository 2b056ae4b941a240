package libsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// inFlight is an http.RoundTripper that counts the pipeline requests
// waiting for their answer and remembers the most at once.
type inFlight struct {
	rt       http.RoundTripper
	now, max atomic.Int64
}

func (c *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/v3/pipeline" {
		return c.rt.RoundTrip(r)
	}
	n := c.now.Add(1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
	defer c.now.Add(-1)
	return c.rt.RoundTrip(r)
}

// openCounted opens a database on srv with Config.MaxWriters = maxWriters,
// whose requests go through the returned counter.
func openCounted(t *testing.T, srv *fs.Server, maxWriters int) (*sql.DB, *inFlight) {
	t.Helper()
	cfg := fakeConfig()
	cfg.MaxWriters = maxWriters
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	cnt := &inFlight{rt: tr}
	return connectorDB(t, srv.URL, cfg, libsql.WithRoundTripper(cnt)), cnt
}

// holdSlot sends ins on db from a goroutine of its own, to hold the one
// write slot while the server answers it slowly (the script's last
// exchange), and returns once the server has it; the channel gets the
// write's error.
func holdSlot(t *testing.T, db *sql.DB, srv *fs.Server, ins string) <-chan error {
	t.Helper()
	held := make(chan error, 1)
	go func() {
		_, err := db.Exec(ins)
		held <- err
	}()
	if !srv.Await(5 * time.Second) {
		t.Fatal("the slot holder's write never arrived")
	}
	return held
}

// With maxWriters=N, no more than N autocommit writes are ever in flight
// at once, and N are: 12 goroutines send 24 INSERTs, each answered after
// 20 ms. Without the bound the same load has more than N in flight (so the
// counter would see a broken bound).
func TestFakeMaxWritersBound(t *testing.T) {
	t.Parallel()
	const ins, workers, each = "INSERT INTO t VALUES (1)", 12, 2
	for _, tt := range []struct{ maxWriters, wantMax int }{{2, 2}, {1, 1}, {0, -1}} {
		t.Run("maxWriters="+strconv.Itoa(tt.maxWriters), func(t *testing.T) {
			t.Parallel()
			script := []fs.Exchange{auto(fs.SQL(ins), fs.Inserted(1, 1))}
			for range workers * each {
				script = append(script, slowAuto(fs.SQL(ins), fs.Inserted(1, 1), 20*time.Millisecond))
			}
			srv := fs.New(t, script...)
			db, cnt := openCounted(t, srv, tt.maxWriters)
			mustExec(t, db, ins) // a first write, alone
			err := runConcurrently(workers, func() error {
				for range each {
					if _, err := db.Exec(ins); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got := int(cnt.max.Load())
			switch {
			case tt.wantMax > 0 && got != tt.wantMax:
				t.Errorf("at most %d writes in flight at once, want %d", got, tt.wantMax)
			case tt.wantMax < 0 && got <= 2:
				t.Errorf("unbounded: at most %d writes in flight at once, want more than 2", got)
			}
		})
	}
}

// Statements that only read take no slot, and scripts take one: with
// maxWriters=1 and the slot held by a slow write, four concurrent SELECTs
// (then four WITH ... SELECTs, and so on) are all in flight at once; then a
// script waits for a slow write to finish.
func TestFakeMaxWritersReadsUnbounded(t *testing.T) {
	t.Parallel()
	const (
		ins     = "INSERT INTO t VALUES (1)"
		script  = "INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)"
		d       = 200 * time.Millisecond
		readers = 4
	)
	one := fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))
	srv := fs.New(t, auto(fs.SQL(ins), fs.Inserted(1, 1)))
	db, cnt := openCounted(t, srv, 1)
	mustExec(t, db, ins)
	var held <-chan error
	hold := func(id int64) {
		t.Helper()
		srv.Add(slowAuto(fs.SQL(ins), fs.Inserted(1, id), d))
		held = holdSlot(t, db, srv, ins)
	}
	for i, q := range []string{"SELECT 1", "  -- a comment\n with x AS (SELECT 1) SELECT * FROM x", "/* c */ select 1", "VALUES (1)", "EXPLAIN INSERT INTO t VALUES (1)"} {
		hold(int64(i + 2))
		cnt.max.Store(0)
		for range readers {
			srv.Add(slowAuto(fs.SQL(q).WantRows(true), one, d))
		}
		err := runConcurrently(readers, func() error {
			var n int
			return db.QueryRow(q).Scan(&n)
		})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if got := cnt.max.Load(); got < readers {
			t.Errorf("%q: at most %d requests in flight at once, want the %d reads", q, got, readers)
		}
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}

	hold(10)
	srv.Add(
		fs.Pipeline("", fs.Execute(fs.SQL(script)), fs.Close()).Respond("", fs.Fail("SQL_MANY_STATEMENTS", "many"), fs.CloseOK()),
		fs.Pipeline("", fs.Sequence(script), fs.Close()).Respond("", fs.SequenceOK(), fs.CloseOK()),
	)
	cnt.max.Store(0)
	mustExec(t, db, script)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got := cnt.max.Load(); got != 1 {
		t.Errorf("at most %d writes in flight at once, want 1: the script did not wait", got)
	}
}

// A write waiting for a slot gives up when its context ends, with an error
// that matches the context's, says what it waited for and is safe to
// retry; it sent nothing. The slot holder's statement is unaffected, and
// the slot is free again afterwards.
func TestFakeMaxWritersWaitRespectsContext(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	srv := fs.New(t, auto(fs.SQL(ins), fs.Inserted(1, 1)),
		slowAuto(fs.SQL(ins), fs.Inserted(1, 2), time.Second))
	db, _ := openCounted(t, srv, 1)
	mustExec(t, db, ins)
	held := holdSlot(t, db, srv, ins)
	for _, cause := range []string{"deadline", "cancel"} {
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		want := context.DeadlineExceeded
		if cause == "cancel" {
			// No deadline to race the cancel on a loaded machine.
			cancel()
			ctx, cancel = context.WithCancel(bg)
			time.AfterFunc(50*time.Millisecond, cancel)
			want = context.Canceled
		}
		start := time.Now()
		_, err := db.ExecContext(ctx, ins)
		el := time.Since(start)
		cancel()
		wantErr(t, err, errs(want), errs(libsql.ErrBusy, driver.ErrBadConn), "write slots (maxWriters)")
		if !asError(t, err).SafeToRetry() {
			t.Errorf("%s: error %q is not safe to retry", cause, err)
		}
		if el > 500*time.Millisecond {
			t.Errorf("%s: the write gave up after %v", cause, el)
		}
	}
	if n := srv.Count(); n != 2 {
		t.Errorf("the server received %d requests, want 2: the waiting writes must send nothing", n)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	srv.Add(auto(fs.SQL(ins), fs.Inserted(1, 3)))
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, ins); err != nil {
		t.Fatalf("the slot is not free again: %v", err)
	}
}

// Transactions take no slot: with maxWriters=1 and the slot held by a slow
// autocommit write, a transaction's BEGIN+INSERT and COMMIT go out at once.
// (A transaction that held a slot while the slot holders waited for its
// write lock would deadlock them.)
func TestFakeMaxWritersTransactionsUnbounded(t *testing.T) {
	t.Parallel()
	const ins = "INSERT INTO t VALUES (1)"
	b1 := fs.Baton(1)
	srv := fs.New(t, auto(fs.SQL(ins), fs.Inserted(1, 1)),
		slowAuto(fs.SQL(ins), fs.Inserted(1, 2), 2*time.Second))
	db, _ := openCounted(t, srv, 1)
	mustExec(t, db, ins)
	held := holdSlot(t, db, srv, ins)
	srv.Add(begin(b1, fs.SQL(ins), fs.Inserted(1, 3)), finish(b1, "COMMIT"))
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, ins); err != nil {
		t.Fatalf("a transaction waited for the write slot: %v", err)
	}
	mustCommit(t, tx)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
