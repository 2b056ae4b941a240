package itest

// A mixed load against one sqld: 64 goroutines (half on each codec) read,
// write, and run transactions for LIBSQL_LOAD_SECONDS (default 60) seconds,
// checking invariants as they go and exact counts at the end.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

const (
	loadWorkers        = 64
	defaultLoadSeconds = 60
	// loadStall is how long an independent write may hang before the
	// server counts as deadlocked. A lock held by a lost transaction is
	// gone after sqld's 5 s transaction timeout (or 10 s stream expiry),
	// so a longer stall is the server's own.
	loadStall = 20 * time.Second
)

// loadDuration is LIBSQL_LOAD_SECONDS, default 60 s (5 s with -short).
func loadDuration(t *testing.T) time.Duration {
	t.Helper()
	if v := os.Getenv("LIBSQL_LOAD_SECONDS"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err, "LIBSQL_LOAD_SECONDS")
		return time.Duration(n * float64(time.Second))
	}
	if testing.Short() {
		return 5 * time.Second
	}
	return defaultLoadSeconds * time.Second
}

// Operation kinds of the load.
const (
	opRead       = iota // SELECT count(*) of the worker's own rows: read-your-writes
	opScan              // SELECT 20 rows of another worker
	opSnapshot          // read-only transaction: counter == number of 'tx' rows
	opInsert            // autocommit INSERT through a shared prepared statement
	opTx                // transaction: counter += 1 and INSERT a 'tx' row, COMMIT
	opTxRollback        // the same, then ROLLBACK
	numOps
)

var opNames = [numOps]string{"read", "scan", "snapshot_tx", "insert", "write_tx", "rollback_tx"}

// loadStats are one worker's counts; summed at the end.
type loadStats struct {
	ops       [numOps]int64           // completed without error
	lat       [numOps][]time.Duration // latency of each completed op
	committed [numOps]int64           // writes that took effect (ops, plus failed ones found applied)
	own       int64                   // rows of this worker that took effect
	expected  map[string]int64        // "op: error" -> count: contention the server may cause
	casualty  map[string]int64        // "op: error" -> count: failures during a server deadlock/restart
	unknownOK int64                   // writes of unknown outcome that turned out applied
	unexpect  []error                 // failures that are the driver's whatever the server did
	failed    []loadFailure           // the driver's unless they overlapped a deadlock
}

func (s *loadStats) note(m *map[string]int64, op int, err error) {
	if *m == nil {
		*m = map[string]int64{}
	}
	msg := err.Error()
	if i := strings.Index(msg, "read tcp "); i >= 0 { // ports differ per connection
		msg = msg[:i] + "read tcp ..."
	}
	(*m)[opNames[op]+": "+msg]++
}

func (s *loadStats) add(o *loadStats) {
	for i := range s.ops {
		s.ops[i] += o.ops[i]
		s.committed[i] += o.committed[i]
		s.lat[i] = append(s.lat[i], o.lat[i]...)
	}
	s.own += o.own
	s.unknownOK += o.unknownOK
	for _, p := range []struct{ dst, src *map[string]int64 }{{&s.expected, &o.expected}, {&s.casualty, &o.casualty}} {
		for k, v := range *p.src {
			if *p.dst == nil {
				*p.dst = map[string]int64{}
			}
			(*p.dst)[k] += v
		}
	}
	s.unexpect = append(s.unexpect, o.unexpect...)
	s.failed = append(s.failed, o.failed...)
}

// serverWatch records the windows in which sqld was deadlocked or being
// restarted. A window opens when the last probe before a hung one ended
// (the deadlock began after that) and closes when the restarted server
// answers, so an operation that overlapped it is known only afterwards:
// failures are classified once the run is over.
type serverWatch struct {
	windows [][2]time.Time // written by the watchdog only, read after it ended
	stalls  []string
}

// overlaps reports whether [from, to] meets a deadlock window.
func (w *serverWatch) overlaps(from, to time.Time) bool {
	for _, win := range w.windows {
		if !to.Before(win[0]) && !from.After(win[1]) {
			return true
		}
	}
	return false
}

// loadFailure is a failed operation that is neither expected contention
// nor certainly the driver's fault until the deadlock windows are known.
type loadFailure struct {
	op        int
	err       error
	from, to  time.Time
	described error
}

// TestLoadMixed runs the load on a sqld of its own. Each worker picks, at
// random: a count of its own rows, which must equal what it committed
// (read-your-writes); a scan of 20 rows; a read-only transaction in which
// the counter must equal the number of 'tx' rows (atomic, consistent
// snapshots); an autocommit INSERT through a prepared statement shared by
// all workers; or a transaction that increments the counter and inserts a
// 'tx' row, committed (or, one time in ten, rolled back).
//
// Every failed write is checked against the table (each row is identified
// by worker and sequence number): an error that says the write did not
// happen (ErrBusy, ErrTxLost, Safe) must be true, and a write of unknown
// outcome is counted if it did happen. SQLITE_BUSY and TRANSACTION_TIMEOUT
// are counted separately, as contention may legitimately produce them; any
// other error fails the test. At the end: counter == committed
// transactions == 'tx' rows, 'auto' rows == committed inserts, every
// worker's rows == what took effect.
//
// sqld 0.24.32 sometimes deadlocks all writes under this load (see
// docs/dev/reliability-faults.md): an independent probe write then hangs. After
// loadStall the test reports it, restarts the server (SIGKILL, same data)
// and carries on; failures of operations overlapping that window are counted
// as casualties, not driver errors. LIBSQL_LOAD_FAIL_ON_SERVER_STALL=1 makes
// such a deadlock fail the test instead.
func TestLoadMixed(t *testing.T) {
	dur := loadDuration(t)
	srv := sqlds.Start(t)
	ctx := context.Background()
	dbs := map[testmatrix.Variant]*sql.DB{}
	stmts := map[testmatrix.Variant]*sql.Stmt{}
	for _, c := range variants {
		db := openDB(t, srv.URL(), c)
		db.SetMaxIdleConns(loadWorkers)
		dbs[c] = db
	}
	admin := dbs[variants[0]]
	counter := privateTable(t, admin, "load_counter", "(id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
	rowsT := privateTable(t, admin, "load_rows",
		"(id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, UNIQUE (worker, seq))")
	privateTable(t, admin, "load_probe", "(id INTEGER PRIMARY KEY, at TEXT)")
	mustExec(t, admin, "INSERT INTO "+counter+" (id, n) VALUES (1, 0)")
	for c, db := range dbs {
		st, err := db.PrepareContext(ctx, "INSERT INTO "+rowsT+" (worker, seq, kind, payload) VALUES (?, ?, 'auto', ?)")
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stmts[c] = st
	}

	stats := make([]loadStats, loadWorkers)
	start := time.Now()
	deadline := start.Add(dur)
	t.Logf("%d workers for %v against sqld %s", loadWorkers, dur, srv.URL())

	// The watchdog: an independent write every second.
	watch := &serverWatch{}
	watchDone := make(chan struct{})
	stopWatch := make(chan struct{})
	probe := openDB(t, srv.URL(), testmatrix.Named("direct"))
	var restartErr error
	go func() {
		defer close(watchDone)
		lastOK := start
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(time.Second):
			}
			pctx, cancel := context.WithTimeout(ctx, loadStall)
			began := time.Now()
			_, err := probe.ExecContext(pctx, "INSERT INTO load_probe (at) VALUES (?)", began.Format(time.RFC3339Nano))
			cancel()
			if err == nil || !errors.Is(err, context.DeadlineExceeded) {
				lastOK = time.Now()
				continue
			}
			msg := fmt.Sprintf("at %v: a write hung for %v (%v); restarting sqld", began.Sub(start).Round(time.Second), loadStall, err)
			watch.stalls = append(watch.stalls, msg)
			t.Logf("SQLD WRITE DEADLOCK %s", msg)
			srv.Kill()
			restartErr = srv.Restart(ctx)
			watch.windows = append(watch.windows, [2]time.Time{lastOK, time.Now()})
			if restartErr != nil {
				return
			}
			lastOK = time.Now()
		}
	}()

	_ = runWorkers(loadWorkers, func(w int) error {
		st := &stats[w]
		variant := variants[w%len(variants)]
		db, ins := dbs[variant], stmts[variant]
		rng := rand.New(rand.NewPCG(uint64(w), 0x5eed))
		seq := 0
		for time.Now().Before(deadline) && len(st.unexpect) < 5 && len(st.failed) < 20 {
			var op int
			switch p := rng.IntN(100); {
			case p < 25:
				op = opRead
			case p < 35:
				op = opScan
			case p < 45:
				op = opSnapshot
			case p < 70:
				op = opInsert
			case p < 96:
				op = opTx
			default:
				op = opTxRollback
			}
			opCtx, cancel := context.WithTimeout(ctx, 2*loadStall)
			began := time.Now()
			var err error
			switch op {
			case opRead:
				var n int64
				err = db.QueryRowContext(opCtx, "SELECT count(*) FROM "+rowsT+" WHERE worker = ?", w).Scan(&n)
				if err == nil && n != st.own {
					err = fmt.Errorf("read-your-writes: worker %d has %d rows that took effect but counts %d", w, st.own, n)
				}
			case opScan:
				err = loadScan(opCtx, db, rowsT, rng.IntN(loadWorkers))
			case opSnapshot:
				err = loadSnapshot(opCtx, db, counter, rowsT)
			case opInsert:
				seq++
				_, err = ins.ExecContext(opCtx, w, seq, loadPayload(w, seq, rng, variant))
			case opTx, opTxRollback:
				seq++
				err = loadWriteTx(opCtx, db, counter, rowsT, w, seq, loadPayload(w, seq, rng, variant), op == opTxRollback)
			}
			cancel()
			if err == nil {
				st.ops[op]++
				st.lat[op] = append(st.lat[op], time.Since(began))
				if op == opInsert || op == opTx {
					st.committed[op]++
					st.own++
				}
				continue
			}
			var le *libsql.Error
			switch {
			case errors.Is(err, libsql.ErrBusy),
				errors.Is(err, libsql.ErrTxLost) && errors.As(err, &le) && le.Code == "TRANSACTION_TIMEOUT":
				st.note(&st.expected, op, err)
			default:
				st.failed = append(st.failed, loadFailure{op: op, err: err, from: began, to: time.Now(),
					described: fmt.Errorf("worker %d (%s), %s: %w", w, variant, opNames[op], err)})
			}
			if op == opInsert || op == opTx {
				// Did it take effect? The row says (a transaction's row and
				// counter change go together).
				applied, lerr := loadLookup(ctx, db, rowsT, w, seq)
				switch {
				case lerr != nil:
					st.unexpect = append(st.unexpect, fmt.Errorf("worker %d: look up seq %d: %w", w, seq, lerr))
				case applied && loadCertainlyNotApplied(err):
					st.unexpect = append(st.unexpect, fmt.Errorf("worker %d (%s), %s seq %d: the error says it did not happen, but it did: %w", w, variant, opNames[op], seq, err))
				case applied:
					st.committed[op]++
					st.own++
					st.unknownOK++
				}
			}
		}
		return nil
	})
	elapsed := time.Since(start)
	close(stopWatch)
	<-watchDone
	require.NoError(t, restartErr, "restart sqld after a deadlock")

	var total loadStats
	for i := range stats {
		total.add(&stats[i])
	}
	for _, f := range total.failed {
		if watch.overlaps(f.from, f.to) {
			total.note(&total.casualty, f.op, f.err)
		} else {
			total.unexpect = append(total.unexpect, f.described)
		}
	}
	var all int64
	for op := range numOps {
		all += total.ops[op]
	}
	t.Logf("%d operations in %v: %.0f ops/s; %d sqld write deadlock(s)", all, elapsed.Round(time.Millisecond), float64(all)/elapsed.Seconds(), len(watch.stalls))
	for op := range numOps {
		l := total.lat[op]
		slices.Sort(l)
		pct := func(p float64) time.Duration {
			if len(l) == 0 {
				return 0
			}
			return l[min(len(l)-1, int(p*float64(len(l))))].Round(100 * time.Microsecond)
		}
		t.Logf("  %-12s %7d  %6.0f/s  p50 %v  p99 %v  max %v", opNames[op], total.ops[op],
			float64(total.ops[op])/elapsed.Seconds(), pct(0.50), pct(0.99), pct(1))
	}
	for _, k := range slices.Sorted(maps.Keys(total.expected)) {
		t.Logf("  contention (expected): %dx %s", total.expected[k], k)
	}
	for _, k := range slices.Sorted(maps.Keys(total.casualty)) {
		t.Logf("  during a sqld deadlock/restart: %dx %s", total.casualty[k], k)
	}
	if total.unknownOK > 0 {
		t.Logf("  %d failed writes of unknown outcome had taken effect (counted as committed)", total.unknownOK)
	}
	for _, err := range total.unexpect[:min(len(total.unexpect), 20)] {
		t.Errorf("unexpected: %v", err)
	}
	require.Empty(t, total.unexpect, "unexpected errors")
	if len(watch.stalls) > 0 && os.Getenv("LIBSQL_LOAD_FAIL_ON_SERVER_STALL") != "" {
		t.Errorf("sqld deadlocked: %s", strings.Join(watch.stalls, "; "))
	}

	// Exact counts.
	committedTx, committedIns := total.committed[opTx], total.committed[opInsert]
	var n, txRows, autoRows int64
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT n FROM "+counter+" WHERE id = 1").Scan(&n))
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT count(*) FROM "+rowsT+" WHERE kind = 'tx'").Scan(&txRows))
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT count(*) FROM "+rowsT+" WHERE kind = 'auto'").Scan(&autoRows))
	t.Logf("counter %d, committed transactions %d, 'tx' rows %d; committed inserts %d, 'auto' rows %d",
		n, committedTx, txRows, committedIns, autoRows)
	require.Equal(t, committedTx, n, "counter == committed transactions")
	require.Equal(t, committedTx, txRows, "'tx' rows == committed transactions")
	require.Equal(t, committedIns, autoRows, "'auto' rows == committed inserts")
	perWorker := map[int]int64{}
	rows, err := admin.QueryContext(ctx, "SELECT worker, count(*) FROM "+rowsT+" GROUP BY worker")
	require.NoError(t, err)
	for rows.Next() {
		var w int
		var c int64
		require.NoError(t, rows.Scan(&w, &c))
		perWorker[w] = c
	}
	require.NoError(t, rows.Err())
	for w := range stats {
		require.Equal(t, stats[w].own, perWorker[w], "worker %d: rows == what took effect", w)
	}
	require.Positive(t, committedTx, "some transactions committed")
	require.Positive(t, total.ops[opSnapshot], "some snapshots checked")
}

func loadPayload(w, seq int, rng *rand.Rand, variant testmatrix.Variant) string {
	return fmt.Sprintf("w%d-s%d %s é€😀 \"%s\"", w, seq, strings.Repeat("x", rng.IntN(200)), variant)
}

// loadCertainlyNotApplied reports whether err says that the write did not
// take effect.
func loadCertainlyNotApplied(err error) bool {
	var le *libsql.Error
	return errors.Is(err, libsql.ErrTxLost) || errors.Is(err, libsql.ErrBusy) || (errors.As(err, &le) && le.SafeToRetry())
}

// loadLookup reports whether the row (worker, seq) exists, retrying while
// the server is unreachable or restarting.
func loadLookup(ctx context.Context, db *sql.DB, table string, worker, seq int) (bool, error) {
	deadline := time.Now().Add(3 * loadStall)
	for {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var n int64
		err := db.QueryRowContext(lctx, "SELECT count(*) FROM "+table+" WHERE worker = ? AND seq = ?", worker, seq).Scan(&n)
		cancel()
		if err == nil {
			return n == 1, nil
		}
		if time.Now().After(deadline) {
			return false, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// loadScan reads up to 20 rows of a worker and checks their shape.
func loadScan(ctx context.Context, db *sql.DB, table string, worker int) error {
	rows, err := db.QueryContext(ctx, "SELECT id, worker, seq, kind, payload FROM "+table+" WHERE worker = ? ORDER BY seq DESC LIMIT 20", worker)
	if err != nil {
		return err
	}
	defer rows.Close()
	lastSeq := int64(-1)
	for rows.Next() {
		var id, w, seq int64
		var kind, payload string
		if err := rows.Scan(&id, &w, &seq, &kind, &payload); err != nil {
			return err
		}
		prefix := fmt.Sprintf("w%d-s%d ", w, seq)
		if w != int64(worker) || (lastSeq >= 0 && seq >= lastSeq) || !strings.HasPrefix(payload, prefix) || (kind != "auto" && kind != "tx") {
			return fmt.Errorf("scan: bad row id=%d worker=%d seq=%d kind=%q payload=%.40q", id, w, seq, kind, payload)
		}
		lastSeq = seq
	}
	return rows.Err()
}

// loadSnapshot checks, in a read-only transaction, that the counter equals
// the number of 'tx' rows: both change in the same transactions.
func loadSnapshot(ctx context.Context, db *sql.DB, counter, table string) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit: ErrTxDone
	var n, c int64
	if err := tx.QueryRowContext(ctx, "SELECT n FROM "+counter+" WHERE id = 1").Scan(&n); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE kind = 'tx'").Scan(&c); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if n != c {
		return fmt.Errorf("snapshot: counter %d but %d 'tx' rows", n, c)
	}
	return nil
}

// loadWriteTx increments the counter and inserts a 'tx' row in one
// transaction, then commits it (or rolls it back).
func loadWriteTx(ctx context.Context, db *sql.DB, counter, table string, worker, seq int, payload string, rollback bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+counter+" SET n = n + 1 WHERE id = 1"); err != nil {
		return fail(fmt.Errorf("BEGIN+UPDATE: %w", err))
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (worker, seq, kind, payload) VALUES (?, ?, 'tx', ?)", worker, seq, payload); err != nil {
		return fail(fmt.Errorf("INSERT: %w", err))
	}
	if rollback {
		if err := tx.Rollback(); err != nil {
			return fmt.Errorf("ROLLBACK: %w", err)
		}
		return nil
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT: %w", err)
	}
	return nil
}
