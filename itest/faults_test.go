package itest

// Network faults between the driver and a real sqld, injected with an
// in-process toxiproxy (faults_proxy_test.go): latency past the deadline,
// connections cut in the middle of a response (FIN or RST), tiny TCP
// segments, and servers that do not answer or do not exist.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// forEachVariantParallel runs fn as a parallel subtest per variant. Each
// subtest uses servers of its own, so that the variants' runs cannot
// disturb each other (write locks, stream limits) while they overlap in time.
func forEachVariantParallel(t *testing.T, fn func(t *testing.T, variant testmatrix.Variant)) {
	t.Helper()
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, c)
		})
	}
}

// requireLibsqlError asserts that err is a *libsql.Error and returns it.
func requireLibsqlError(t testing.TB, err error) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error, got %T: %v", err, err)
	return le
}

// requireDeadline asserts that err is a deadline, recognisable as such.
func requireDeadline(t testing.TB, err error) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "want context.DeadlineExceeded, got %v", err)
	var le *libsql.Error
	if errors.As(err, &le) {
		return le
	}
	return nil
}

// poolWorks runs 32 queries from 8 goroutines through db; all must succeed.
func poolWorks(t testing.TB, db *sql.DB, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := runWorkers(8, func(int) error {
		for range 4 {
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err, "the pool works again")
}

// TestFaultsLatency delays everything sqld sends by 30 s: statements fail
// with their context's deadline (or the DSN timeout), not after the latency;
// a write interrupted that way is never retried; a transaction interrupted
// that way is lost and applies nothing; once the latency is gone the same
// pool works.
func TestFaultsLatency(t *testing.T) {
	const latency = 30 * time.Second
	forEachVariantParallel(t, func(t *testing.T, variant testmatrix.Variant) {
		srv := sqlds.Start(t)
		fp := newFaultProxy(t, srv.URL())
		direct := openDB(t, srv.URL(), variant) // bypasses the proxy, for checks
		table := privateTable(t, direct, "lat", "(id INTEGER PRIMARY KEY, v TEXT)")
		db := openDB(t, fp.url, variant)
		require.NoError(t, db.PingContext(t.Context()), "through the proxy, before any fault")

		t.Run("context_deadline", func(t *testing.T) {
			fp.addLatency(t, "lat", latency)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			var n int64
			err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
			requireDeadline(t, err)
			took := time.Since(start)
			require.Less(t, took, latency/2, "the deadline ends the wait, not the latency")

			ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('late')")
			le := requireDeadline(t, err)
			require.NotNil(t, le, "a *libsql.Error")
			require.False(t, le.SafeToRetry(), "the INSERT reached the server: not safe to repeat")
			t.Logf("query gave up after %v: %v", took.Round(time.Millisecond), err)

			fp.remove(t, "lat")
			poolWorks(t, db, table)
			require.LessOrEqual(t, countWhere(t, direct, table, "v = 'late'"), int64(1), "never applied twice")
		})

		t.Run("dsn_timeout", func(t *testing.T) {
			db := openDB(t, fp.url, variant, "timeout=1s")
			require.NoError(t, db.PingContext(t.Context()))
			fp.addLatency(t, "lat", latency)
			start := time.Now()
			var one int64
			err := db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one)
			took := time.Since(start)
			requireDeadline(t, err)
			require.GreaterOrEqual(t, took, 900*time.Millisecond, "not before the timeout")
			require.Less(t, took, latency/2, "the DSN timeout bounds the request")
			t.Logf("timeout=1s: failed after %v: %v", took.Round(time.Millisecond), err)
			fp.remove(t, "lat")
			require.NoError(t, db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one))
			poolWorks(t, db, table)
		})

		t.Run("transaction", func(t *testing.T) {
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('tx-1')")
			require.NoError(t, err)
			fp.addLatency(t, "lat", latency)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('tx-2')")
			requireDeadline(t, err)
			require.ErrorIs(t, err, libsql.ErrTxLost, "an interrupted statement ends the transaction")
			fp.remove(t, "lat")
			_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('tx-3')")
			require.ErrorIs(t, err, libsql.ErrTxLost, "later statements say so too")
			require.ErrorIs(t, tx.Commit(), libsql.ErrTxLost, "and so does Commit")

			// The server still holds the abandoned stream, and its write
			// lock, until it steals the lock (5 s) or the stream expires
			// (10 s): the next write waits for that, then succeeds.
			ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('after')")
			require.NoError(t, err)
			t.Logf("the next write waited %v for the abandoned transaction's lock", time.Since(start).Round(time.Millisecond))
			require.Zero(t, countWhere(t, direct, table, "v LIKE 'tx-%'"), "nothing of the lost transaction was applied")
			require.EqualValues(t, 1, countWhere(t, direct, table, "v = 'after'"))
			poolWorks(t, db, table)
		})
	})
}

// scanIDs reads (id, v) rows; it returns how many were read, whether ids
// were 1, 2, 3, ... in order, and the first error (Query's or rows.Err()).
func scanIDs(rows *sql.Rows, qerr error) (n int, inOrder bool, err error) {
	if qerr != nil {
		return 0, true, qerr
	}
	defer rows.Close()
	inOrder = true
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return n, inOrder, err
		}
		n++
		if id != n || len(v) != 128 {
			inOrder = false
		}
	}
	return n, inOrder, rows.Err()
}

// cutEnv is a sqld of its own holding cutTotal rows of (id, v) with v 128
// hex characters, a scratch table, and a proxy to it.
type cutEnv struct {
	srv            *sqldproc.Server
	direct         *sql.DB // bypasses the proxy, for checks
	table, scratch string
	fp             *faultProxy
}

const (
	cutTotal    = 3000 // rows; ~600 KB of JSON, over the 256KB limit: a cursor
	cutSmall    = 800  // rows; ~160 KB: one pipeline response
	cutAfter    = 16 << 10
	cutSmallSQL = "SELECT id, v FROM %s WHERE id <= 800 ORDER BY id"
	cutAllSQL   = "SELECT id, v FROM %s ORDER BY id"
)

func newCutEnv(t *testing.T, variant testmatrix.Variant) *cutEnv {
	t.Helper()
	e := &cutEnv{srv: sqlds.Start(t, "--max-response-size", "256KB")}
	e.direct = openDB(t, e.srv.URL(), variant)
	e.table = privateTable(t, e.direct, "cut", "(id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, e.direct, fmt.Sprintf(`INSERT INTO %s (id, v)
		WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
		SELECT i, hex(randomblob(64)) FROM c`, e.table, cutTotal))
	e.scratch = privateTable(t, e.direct, "cutw", "(id INTEGER PRIMARY KEY, v TEXT)")
	e.fp = newFaultProxy(t, e.srv.URL())
	return e
}

// TestFaultsCutMidResponse closes the TCP connection after 16 KB of a
// response, with a FIN (toxiproxy limit_data) or a reset (limit_data with
// SO_LINGER 0):
//
//   - reads: a result that was cut is an error, through the pipeline path
//     (Query fails) and through the cursor path (rows.Err() after a correct
//     prefix), never fewer rows presented as the whole result; once the
//     fault is gone the same pool reads complete results;
//   - transaction_pipeline: a transaction whose response is cut is lost
//     (ErrTxLost) and applies nothing;
//   - transaction_cursor: a cursor cut inside a transaction fails its rows;
//     whatever the transaction does next, it applies all or nothing.
//
// reset_before_response resets the connection as the answer arrives: an
// autocommit INSERT is applied once and never retried; a COMMIT whose
// answer is lost is reported as of unknown outcome (not as ErrTxLost: it
// did commit).
//
// Every scenario that may leave a lost transaction behind has a sqld of its
// own: the server keeps such a stream, and its write lock, until it steals
// the lock (5 s) or the stream expires (10 s).
func TestFaultsCutMidResponse(t *testing.T) {
	forEachVariantParallel(t, func(t *testing.T, variant testmatrix.Variant) {
		for _, mode := range []string{"fin", "rst"} {
			t.Run(mode, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cutDB := func(t *testing.T, e *cutEnv) *sql.DB {
					e.fp.addCut(t, "cut", cutAfter, mode == "rst")
					return openDB(t, e.fp.url, variant) // new connections: the cut counts from 0
				}
				// cutTx begins a transaction on a cutDB of a cutEnv of its
				// own and writes v to the scratch table in it.
				cutTx := func(t *testing.T, v string) (*cutEnv, *sql.Tx) {
					e := newCutEnv(t, variant)
					tx, err := cutDB(t, e).BeginTx(ctx, nil)
					require.NoError(t, err)
					_, err = tx.ExecContext(ctx, "INSERT INTO "+e.scratch+" (v) VALUES ('"+v+"')")
					require.NoError(t, err)
					return e, tx
				}

				t.Run("reads", func(t *testing.T) {
					e := newCutEnv(t, variant)
					db := cutDB(t, e)
					rows, err := db.QueryContext(ctx, fmt.Sprintf(cutSmallSQL, e.table))
					n, _, err := scanIDs(rows, err)
					require.Error(t, err, "pipeline: a cut result must not look complete (%d rows)", n)
					require.Zero(t, n, "pipeline: a result is decoded whole or not at all")
					le := requireLibsqlError(t, err)
					require.False(t, le.SafeToRetry(), "the statement ran")
					t.Logf("pipeline: %v", err)

					rows, err = db.QueryContext(ctx, fmt.Sprintf(cutAllSQL, e.table))
					n, inOrder, err := scanIDs(rows, err)
					require.Error(t, err, "cursor: a cut result must not look complete (%d of %d rows)", n, cutTotal)
					require.Less(t, n, cutTotal)
					require.True(t, inOrder, "cursor: the rows before the cut are correct")
					requireLibsqlError(t, err)
					t.Logf("cursor: after %d rows: %v", n, err)

					e.fp.remove(t, "cut")
					if mode == "rst" {
						e.fp.remove(t, "cut_rst")
					}
					for _, q := range []struct {
						sql  string
						want int
					}{{cutSmallSQL, cutSmall}, {cutAllSQL, cutTotal}, {cutSmallSQL, cutSmall}} {
						rows, err := db.QueryContext(ctx, fmt.Sprintf(q.sql, e.table))
						n, inOrder, err := scanIDs(rows, err)
						require.NoError(t, err, "after the fault")
						require.Equal(t, q.want, n)
						require.True(t, inOrder)
					}
				})

				t.Run("transaction_pipeline", func(t *testing.T) {
					e, tx := cutTx(t, "tx")
					rows, err := tx.QueryContext(ctx, fmt.Sprintf(cutSmallSQL, e.table))
					_, _, err = scanIDs(rows, err)
					require.ErrorIs(t, err, libsql.ErrTxLost, "a cut response ends the transaction")
					t.Logf("%v", err)
					_, err = tx.ExecContext(ctx, "INSERT INTO "+e.scratch+" (v) VALUES ('tx')")
					require.ErrorIs(t, err, libsql.ErrTxLost)
					require.ErrorIs(t, tx.Commit(), libsql.ErrTxLost)
					require.Zero(t, countRows(t, e.direct, e.scratch), "nothing of the lost transaction")
				})

				t.Run("transaction_cursor", func(t *testing.T) {
					e, tx := cutTx(t, "tx-1")
					rows, err := tx.QueryContext(ctx, fmt.Sprintf(cutAllSQL, e.table))
					n, inOrder, err := scanIDs(rows, err)
					require.Error(t, err, "a cut cursor must not look complete (%d of %d rows)", n, cutTotal)
					require.True(t, inOrder)
					t.Logf("cursor in a transaction: after %d rows: %v", n, err)
					// The cursor's stream was handed back before the cut (its
					// first line carries the next baton), so the transaction
					// may go on; either way it must apply all or nothing.
					_, err2 := tx.ExecContext(ctx, "INSERT INTO "+e.scratch+" (v) VALUES ('tx-2')")
					err3 := tx.Commit()
					t.Logf("next statement: %v; commit: %v", err2, err3)
					got := countRows(t, e.direct, e.scratch)
					if err2 == nil && err3 == nil {
						require.EqualValues(t, 2, got, "committed: all of it")
					} else {
						require.Zero(t, got, "failed: none of it")
						require.True(t, errors.Is(err2, libsql.ErrTxLost) || errors.Is(err3, libsql.ErrTxLost), "a failed transaction says it was lost")
					}
				})
			})
		}

		t.Run("reset_before_response", func(t *testing.T) {
			// reset_peer: the server's answer is thrown away and the
			// connection reset (toxics apply to open connections too).
			e := newCutEnv(t, variant)
			db := openDB(t, e.fp.url, variant)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "INSERT INTO "+e.scratch+" (v) VALUES ('committed')")
			require.NoError(t, err)
			e.fp.add(t, toxic{Name: "reset", Type: "reset_peer", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})

			err = tx.Commit()
			le := requireLibsqlError(t, err)
			t.Logf("commit: %v", err)
			require.False(t, le.SafeToRetry(), "COMMIT reached the server")
			require.False(t, errors.Is(err, libsql.ErrTxLost), "the outcome is unknown; it must not be reported as rolled back")
			require.Contains(t, err.Error(), "unknown")

			_, err = db.ExecContext(ctx, "INSERT INTO "+e.scratch+" (v) VALUES ('once')")
			le = requireLibsqlError(t, err)
			t.Logf("insert: %v", err)
			require.EqualValues(t, 1, countWhere(t, e.direct, e.scratch, "v = 'committed'"), "the COMMIT did commit")
			if variant.WS() {
				// The socket died with the COMMIT; the new one's handshake
				// is reset as it is answered, so the INSERT never left.
				require.True(t, le.SafeToRetry(), "the INSERT never left: %v", err)
				require.Zero(t, countWhere(t, e.direct, e.scratch, "v = 'once'"), "not applied")
				return
			}
			require.False(t, le.SafeToRetry(), "the INSERT reached the server")
			require.EqualValues(t, 1, countWhere(t, e.direct, e.scratch, "v = 'once'"), "applied exactly once: not retried")
		})
	})
}

// slicedRow is one row of TestFaultsSlicedSegments, with values that
// stress the decoders: escapes, multi-byte UTF-8 split anywhere, integers
// past 2^53, blobs, NULLs.
type slicedRow struct {
	id int64
	i  sql.NullInt64
	s  sql.NullString
	f  sql.NullFloat64
	b  []byte
}

func makeSlicedRow(i int) slicedRow {
	r := slicedRow{id: int64(i)}
	if i%11 != 0 {
		r.i = sql.NullInt64{Int64: int64(i) * 1_000_000_000_007 * (1 - 2*int64(i%2)), Valid: true}
	}
	if i%13 != 0 {
		r.s = sql.NullString{String: fmt.Sprintf("row %d: \"quoted\" \\ back\\slash\n\ttab é€😀 %s", i, strings.Repeat("ü", i%37)), Valid: true}
	}
	if i%7 != 0 {
		r.f = sql.NullFloat64{Float64: float64(i)*0.125 - 3.5e-7, Valid: true}
	}
	if i%5 != 0 {
		r.b = make([]byte, i%61)
		for j := range r.b {
			r.b[j] = byte(i*31 + j*7)
		}
	}
	return r
}

// TestFaultsSlicedSegments passes every byte both ways through toxiproxy's
// slicer (segments of 8 to 40 bytes): requests with many arguments, a
// pipeline result and a cursor result must come through exactly.
func TestFaultsSlicedSegments(t *testing.T) {
	const n = 1500 // ~250 KB of JSON: over the 64KB limit, so a cursor
	forEachVariantParallel(t, func(t *testing.T, variant testmatrix.Variant) {
		srv := sqlds.Start(t, "--max-response-size", "64KB")
		fp := newFaultProxy(t, srv.URL())
		for _, dir := range []string{"downstream", "upstream"} {
			fp.add(t, toxic{Name: "slice_" + dir, Type: "slicer", Stream: dir, Toxicity: 1,
				Attributes: map[string]any{"average_size": 24, "size_variation": 16, "delay": 0}})
		}
		db := openDB(t, fp.url, variant)
		table := privateTable(t, db, "sliced", "(id INTEGER PRIMARY KEY, i INTEGER, s TEXT, f REAL, b BLOB)")
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()

		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		const per = 50
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", per), ", ")
		for start := 1; start <= n; start += per {
			args := make([]any, 0, 5*per)
			for i := start; i < start+per; i++ {
				r := makeSlicedRow(i)
				var b any // NULL, unless there is a blob (empty included)
				if r.b != nil {
					b = r.b
				}
				args = append(args, r.id, r.i, r.s, r.f, b)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (id, i, s, f, b) VALUES "+values, args...)
			require.NoError(t, err)
		}
		require.NoError(t, tx.Commit())

		check := func(limit int) {
			t.Helper()
			rows, err := db.QueryContext(ctx, "SELECT id, i, s, f, b FROM "+table+" WHERE id <= ? ORDER BY id", limit)
			require.NoError(t, err)
			defer rows.Close()
			got := 0
			for rows.Next() {
				var r slicedRow
				require.NoError(t, rows.Scan(&r.id, &r.i, &r.s, &r.f, &r.b))
				got++
				// Strict: an empty blob is []byte{}, NULL is nil.
				require.Equal(t, makeSlicedRow(got), r, "row %d", got)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, limit, got)
		}
		check(150) // ~25 KB: pipeline
		check(n)   // cursor

		// One value of 300 KB: a cursor line longer than the driver's
		// 64 KB read buffer, arriving in segments of 8 to 40 bytes.
		big := strings.Repeat("ab€😀\\\"\n", 400<<10/16)
		_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (id, s) VALUES (?, ?)", n+1, big)
		require.NoError(t, err)
		var got string
		require.NoError(t, db.QueryRowContext(ctx, "SELECT s FROM "+table+" WHERE id = ?", n+1).Scan(&got))
		require.True(t, got == big, "300 KB value differs (len %d, want %d)", len(got), len(big))
	})
}

// TestFaultsNilBytesArgument: []byte(nil) as an argument is NULL in
// database/sql drivers (mattn/go-sqlite3, lib/pq, pgx, go-sql-driver/mysql
// all bind it so), while []byte{} is an empty blob. Found while writing
// TestFaultsSlicedSegments (libsql sent an empty blob for nil until
// commit 2b45b0d).
func TestFaultsNilBytesArgument(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		var typNil, typEmpty string
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT typeof(?), typeof(?)", []byte(nil), []byte{}).Scan(&typNil, &typEmpty))
		require.Equal(t, "blob", typEmpty, "[]byte{} is an empty blob")
		require.Equal(t, "null", typNil, "[]byte(nil) is NULL")
	})
}

// TestFaultsUnreachable checks servers that cannot be reached: one that
// accepts connections but never answers (toxiproxy "timeout" on the
// requests) and one whose SYNs are dropped fail with a deadline within the
// DSN timeout (2 s); a closed port fails at once with "connection
// refused", which is safe to retry.
func TestFaultsUnreachable(t *testing.T) {
	const timeout = 2 * time.Second
	// expectTimeout runs op and checks that it failed by the DSN timeout.
	expectTimeout := func(t *testing.T, name string, op func() error) *libsql.Error {
		t.Helper()
		start := time.Now()
		err := op()
		took := time.Since(start)
		le := requireDeadline(t, err)
		require.NotNil(t, le, "%s: a *libsql.Error", name)
		require.GreaterOrEqual(t, took, timeout-100*time.Millisecond, "%s: not before the timeout", name)
		require.Less(t, took, timeout+10*time.Second, "%s: within the timeout (generous bound)", name)
		t.Logf("%s: %v after %v (Safe=%v)", name, err, took.Round(time.Millisecond), le.SafeToRetry())
		return le
	}
	forEachVariantParallel(t, func(t *testing.T, variant testmatrix.Variant) {
		t.Run("no_answer", func(t *testing.T) {
			srv := sqlds.Start(t)
			fp := newFaultProxy(t, srv.URL())
			warm := openDB(t, fp.url, variant, "timeout="+timeout.String())
			require.NoError(t, warm.PingContext(t.Context()))
			// Requests are swallowed: connections open, nothing comes back.
			fp.add(t, toxic{Name: "hang", Type: "timeout", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})
			cold := openDB(t, fp.url, variant, "timeout="+timeout.String())
			expectTimeout(t, "first contact (version probe)", func() error { return cold.PingContext(context.Background()) })
			le := expectTimeout(t, "exec", func() error {
				_, err := warm.ExecContext(context.Background(), "CREATE TABLE never_created (x)")
				return err
			})
			require.False(t, le.SafeToRetry(), "the request was sent")
			fp.remove(t, "hang")
			require.NoError(t, cold.PingContext(t.Context()), "answers once the fault is gone")
			require.NoError(t, warm.PingContext(t.Context()))
			_, err := openDB(t, srv.URL(), variant).Exec("SELECT * FROM never_created")
			require.Error(t, err, "the swallowed CREATE TABLE never reached the server")
		})
		t.Run("syn_dropped", func(t *testing.T) {
			addr, ok := blackholeListener(t)
			if !ok {
				t.Skip("the kernel did not drop SYNs to a full accept queue")
			}
			db := openDB(t, "http://"+addr, variant, "timeout="+timeout.String())
			le := expectTimeout(t, "ping", func() error { return db.PingContext(context.Background()) })
			if !le.SafeToRetry() {
				t.Logf("note: a connection that was never established is reported as possibly sent (Safe=false)")
			}
		})
		t.Run("closed_port", func(t *testing.T) {
			addr := closedAddr(t)
			db := openDB(t, "http://"+addr, variant, "timeout=10s")
			for _, op := range []string{"ping", "exec"} {
				start := time.Now()
				var err error
				if op == "ping" {
					err = db.PingContext(context.Background())
				} else {
					_, err = db.ExecContext(context.Background(), "CREATE TABLE never_created (x)")
				}
				took := time.Since(start)
				le := requireLibsqlError(t, err)
				require.True(t, errors.Is(err, syscall.ECONNREFUSED), "%s: want ECONNREFUSED, got %v", op, err)
				require.Contains(t, err.Error(), "connection refused", "%s: the message says so", op)
				require.Contains(t, err.Error(), addr, "%s: and where", op)
				require.False(t, errors.Is(err, context.DeadlineExceeded), "%s: not a timeout", op)
				require.True(t, le.SafeToRetry(), "%s: nothing was sent", op)
				require.Less(t, took, 5*time.Second, "%s: fails at once, not after the 10 s timeout", op)
				t.Logf("%s: %v after %v", op, err, took.Round(time.Millisecond))
			}
		})
	})
}
