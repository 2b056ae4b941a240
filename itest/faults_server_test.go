package itest

// Faults that sqld itself produces: streams that expire after 10 s idle,
// and write locks taken away after the 5 s transaction timeout. Every
// scenario that holds a write lock has a sqld of its own, and the scenarios
// wait together (one sleep, one round of lock stealing), so that the test
// takes one expiry and one timeout, not one per scenario.

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// lockedTx is a transaction that wrote a row, on a server of its own.
type lockedTx struct {
	variant testmatrix.Variant
	commit  bool // finish with Commit (else: another statement first)
	db      *sql.DB
	table   string
	tx      *sql.Tx
}

// newLockedTx starts a sqld, creates a table and opens a transaction that
// inserts the row 'lost-1', which takes the write lock.
func newLockedTx(t *testing.T, variant testmatrix.Variant, commit bool) *lockedTx {
	t.Helper()
	srv := sqlds.Start(t)
	db := openDB(t, srv.URL(), variant)
	table := privateTable(t, db, "locked", "(id INTEGER PRIMARY KEY, v TEXT)")
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(context.Background(), "INSERT INTO "+table+" (v) VALUES ('lost-1')")
	require.NoError(t, err)
	return &lockedTx{variant: variant, commit: commit, db: db, table: table, tx: tx}
}

func (l *lockedTx) name() string {
	if l.commit {
		return l.variant.Name + "/commit"
	}
	return l.variant.Name + "/next_statement"
}

// expectLost checks that the transaction reports itself lost, on its next
// statement or on Commit, and that none of it was applied. wantCode is the
// Hrana code expected on the first failure ("" for any).
func (l *lockedTx) expectLost(t *testing.T, wantCode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if l.commit {
		err = l.tx.Commit()
	} else {
		_, err = l.tx.ExecContext(ctx, "INSERT INTO "+l.table+" (v) VALUES ('lost-2')")
	}
	t.Logf("%s: %v", l.name(), err)
	require.Error(t, err)
	// Not fatal: the checks below still run if these fail.
	assert.True(t, errors.Is(err, libsql.ErrTxLost), "want an error matching libsql.ErrTxLost, got %v", err)
	le := requireLibsqlError(t, err)
	assert.ErrorIs(t, le, libsql.ErrTxLost)
	if wantCode != "" {
		assert.Equal(t, wantCode, le.Code)
	}
	if !l.commit {
		_, err = l.tx.ExecContext(ctx, "INSERT INTO "+l.table+" (v) VALUES ('lost-3')")
		require.ErrorIs(t, err, libsql.ErrTxLost, "every later statement says so")
		require.ErrorIs(t, l.tx.Commit(), libsql.ErrTxLost, "and so does Commit")
	}
	require.ErrorIs(t, l.tx.Rollback(), sql.ErrTxDone)
	require.Zero(t, countWhere(t, l.db, l.table, "v LIKE 'lost-%'"), "nothing of the lost transaction was applied")
	_, err = l.db.ExecContext(ctx, "INSERT INTO "+l.table+" (v) VALUES ('next')")
	require.NoError(t, err, "the next write works")
}

// TestFaultsStreamExpiry leaves everything idle for 12 s, past sqld's 10 s
// stream expiry: pooled connections, a pinned *sql.Conn, a prepared
// statement and a transaction that has not sent anything yet work as if
// nothing happened; a transaction that read, or wrote, is lost: its next
// statement, or its Commit, fails with ErrTxLost (STREAM_EXPIRED), and
// nothing of it was applied; its Rollback succeeds.
func TestFaultsStreamExpiry(t *testing.T) {
	t.Parallel() // waits 12 s, on servers of its own
	if testing.Short() {
		t.Skip("waits 12 s")
	}
	const idle = 12 * time.Second
	ctx := context.Background()
	shared := sqlds.Start(t) // for what holds no write lock
	type idleSet struct {
		variant  testmatrix.Variant
		db       *sql.DB
		table    string
		conn     *sql.Conn
		stmt     *sql.Stmt
		pending  *sql.Tx // BeginTx, nothing sent
		reader   *sql.Tx // one SELECT sent
		rollback *sql.Tx // one SELECT sent; Rollback is the first call after the idle time
	}
	var sets []*idleSet
	var writers []*lockedTx
	// Over WebSocket streams do not expire: a transaction idle as long
	// lives on. It only reads: one holding the write lock for more than 5 s
	// loses it to the next writer (sqld's transaction timeout).
	type wsIdle struct {
		variant testmatrix.Variant
		table   string
		db      *sql.DB
		tx      *sql.Tx
	}
	var survivors []wsIdle
	for _, c := range variants {
		if c.WS() {
			w := wsIdle{variant: c, db: openDB(t, shared.URL(), c)}
			w.table = privateTable(t, w.db, "idle_"+c.Name, "(id INTEGER PRIMARY KEY, v TEXT)")
			var err error
			w.tx, err = w.db.BeginTx(ctx, nil)
			require.NoError(t, err)
			mustExec(t, w.db, "INSERT INTO "+w.table+" (v) VALUES ('before')")
			var n int64
			require.NoError(t, w.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+w.table).Scan(&n))
			survivors = append(survivors, w)
		}
	}
	for _, c := range httpVariants {
		s := &idleSet{variant: c, db: openDB(t, shared.URL(), c)}
		s.table = privateTable(t, s.db, "idle_"+c.Name, "(id INTEGER PRIMARY KEY, v TEXT)")
		mustExec(t, s.db, "INSERT INTO "+s.table+" (v) VALUES ('before')")
		poolWorks(t, s.db, s.table)
		var err error
		s.conn, err = s.db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.conn.Close() })
		require.NoError(t, s.conn.PingContext(ctx))
		s.stmt, err = s.db.PrepareContext(ctx, "SELECT count(*) FROM "+s.table)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.stmt.Close() })
		s.pending, err = s.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		s.reader, err = s.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		var n int64
		require.NoError(t, s.reader.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table).Scan(&n))
		require.EqualValues(t, 1, n)
		s.rollback, err = s.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, s.rollback.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table).Scan(&n))
		sets = append(sets, s)
		for _, commit := range []bool{false, true} {
			writers = append(writers, newLockedTx(t, c, commit))
		}
	}

	t.Logf("idling %v", idle)
	time.Sleep(idle)

	for _, w := range survivors {
		t.Run(w.variant.Name+"/transaction_lives_on", func(t *testing.T) {
			var n int64
			require.NoError(t, w.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+w.table).Scan(&n), "the idle transaction's next statement")
			require.EqualValues(t, 1, n)
			require.NoError(t, w.tx.Commit())
		})
	}

	for _, s := range sets {
		t.Run(s.variant.Name+"/pool", func(t *testing.T) {
			_, err := s.db.ExecContext(ctx, "INSERT INTO "+s.table+" (v) VALUES ('after')")
			require.NoError(t, err, "a pooled connection")
			var n int64
			require.NoError(t, s.conn.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table).Scan(&n), "a pinned *sql.Conn")
			require.EqualValues(t, 2, n)
			require.NoError(t, s.stmt.QueryRowContext(ctx).Scan(&n), "a prepared statement")
			require.EqualValues(t, 2, n)
			poolWorks(t, s.db, s.table)
		})
		t.Run(s.variant.Name+"/pending_transaction", func(t *testing.T) {
			_, err := s.pending.ExecContext(ctx, "INSERT INTO "+s.table+" (v) VALUES ('pending')")
			require.NoError(t, err, "BEGIN travels with the first statement, after the idle time")
			require.NoError(t, s.pending.Commit())
			require.EqualValues(t, 1, countWhere(t, s.db, s.table, "v = 'pending'"))
		})
		t.Run(s.variant.Name+"/read_transaction", func(t *testing.T) {
			var n int64
			err := s.reader.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table).Scan(&n)
			t.Logf("%v", err)
			require.ErrorIs(t, err, libsql.ErrTxLost)
			require.Equal(t, "STREAM_EXPIRED", requireLibsqlError(t, err).Code)
			require.NoError(t, s.reader.Rollback(), "rolling back a lost transaction succeeds")
		})
		t.Run(s.variant.Name+"/rollback_first", func(t *testing.T) {
			// The server already rolled the transaction back with its
			// stream; docs/GUIDE.md says rolling back a lost transaction
			// succeeds.
			err := s.rollback.Rollback()
			t.Logf("%v", err)
			require.NoError(t, err, "Rollback of a transaction whose stream expired")
		})
	}
	for _, w := range writers {
		t.Run(w.name(), func(t *testing.T) {
			w.expectLost(t, "STREAM_EXPIRED")
		})
	}
}

// TestFaultsTxTimeoutLockSteal holds a write lock in transaction A while an
// autocommit INSERT B waits for it: after sqld's 5 s transaction timeout
// the server rolls A back and B goes through. A learns it on its next
// statement, or on Commit: an error matching ErrTxLost (TRANSACTION_TIMEOUT),
// and none of A's writes are there.
func TestFaultsTxTimeoutLockSteal(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 5 s transaction timeout")
	}
	var victims []*lockedTx
	for _, c := range variants {
		for _, commit := range []bool{false, true} {
			victims = append(victims, newLockedTx(t, c, commit))
		}
	}
	type result struct {
		err  error
		took time.Duration
	}
	results := make([]result, len(victims))
	var wg sync.WaitGroup
	for i, v := range victims {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			_, err := v.db.ExecContext(ctx, "INSERT INTO "+v.table+" (v) VALUES ('stealer')")
			results[i] = result{err, time.Since(start)}
		})
	}
	wg.Wait()
	for i, v := range victims {
		t.Run(v.name(), func(t *testing.T) {
			require.NoError(t, results[i].err, "the waiting writer gets the lock")
			t.Logf("the waiting writer waited %v", results[i].took.Round(time.Millisecond))
			v.expectLost(t, "TRANSACTION_TIMEOUT")
			require.EqualValues(t, 1, countWhere(t, v.db, v.table, "v = 'stealer'"))
		})
	}
}
