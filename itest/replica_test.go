package itest

// A sqld primary and a read replica as child processes (loopback only):
// read-your-writes through the pool, a primary restart, and the reset of
// the primary's log that a SIGKILL causes.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// replicaPair is a primary and a replica that replicates from it.
type replicaPair struct {
	primary, replica *sqldproc.Server
}

// startReplicaPair starts a primary with a gRPC listener of its own and a
// replica of it, and waits until the replica serves.
func startReplicaPair(t *testing.T) *replicaPair {
	t.Helper()
	primary := sqlds.StartWith(t, sqldproc.Config{Listen: []string{sqldproc.GRPCFlag}})
	replica := sqlds.Start(t, "--primary-grpc-url", "http://"+primary.ListenAddr(sqldproc.GRPCFlag))
	return &replicaPair{primary: primary, replica: replica}
}

// missesThroughPool runs rounds write-then-read rounds through the pool of
// db (16 goroutines over 8 connections) and counts the reads that missed
// their own write.
func missesThroughPool(t *testing.T, db *sql.DB, table string, rounds int) int64 {
	t.Helper()
	db.SetMaxOpenConns(8)
	var next, misses atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := runWorkers(16, func(int) error {
		for {
			i := next.Add(1)
			if i > int64(rounds) {
				return nil
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id) VALUES (?)", i); err != nil {
				return err
			}
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE id = ?", i).Scan(&n); err != nil {
				return err
			}
			if n != 1 {
				misses.Add(1)
			}
		}
	})
	require.NoError(t, err)
	return misses.Load()
}

// Through a replica, every read sees the write before it, on any
// connection of the pool; with readYourWrites=0 most reads miss (the
// measurement the README quotes).
func TestReplicaReadYourWrites(t *testing.T) {
	pair := startReplicaPair(t)
	const rounds = 500
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			db := openDB(t, pair.replica.URL(), c)
			table := privateTable(t, db, "ryw_"+c.Name, "(id INTEGER PRIMARY KEY)")
			misses := missesThroughPool(t, db, table, rounds)
			t.Logf("%s: %d of %d reads missed their write with read-your-writes", c, misses, rounds)
			require.Zero(t, misses)
		})
	}
	t.Run("off", func(t *testing.T) {
		db := openDB(t, pair.replica.URL(), testmatrix.Named("direct"), "readYourWrites=0")
		table := privateTable(t, db, "ryw_off", "(id INTEGER PRIMARY KEY)")
		misses := missesThroughPool(t, db, table, rounds)
		t.Logf("readYourWrites=0: %d of %d reads missed their write", misses, rounds)
	})
}

// An index carried to another *sql.DB (another process) through
// WithReplicationIndex makes its first read see the write.
func TestReplicaIndexCarried(t *testing.T) {
	pair := startReplicaPair(t)
	ctx := context.Background()
	writer := openDB(t, pair.replica.URL(), testmatrix.Named("direct"))
	table := privateTable(t, writer, "carried", "(id INTEGER PRIMARY KEY)")
	for i := range 50 {
		mustExec(t, writer, "INSERT INTO "+table+" (id) VALUES (?)", i)
		idx, err := libsql.ReplicationIndex(ctx, writer)
		require.NoError(t, err)
		require.NotZero(t, idx)
		reader := openDB(t, pair.replica.URL(), testmatrix.Named("gojson"), "readYourWrites=0")
		var n int64
		require.NoError(t, reader.QueryRowContext(libsql.WithReplicationIndex(ctx, idx), "SELECT count(*) FROM "+table+" WHERE id = ?", i).Scan(&n))
		require.EqualValues(t, 1, n, "round %d", i)
		_ = reader.Close()
	}
}

// A SIGKILLed primary starts a new log, so its frame numbers drop: reads
// through the replica keep working while it is down and after it is back
// (bounded by replicationWait, never the caller's context), writes fail
// with a clear error while it is down and work afterwards, and the kept
// index follows the reset.
func TestReplicaPrimaryKilled(t *testing.T) {
	pair := startReplicaPair(t)
	ctx := context.Background()
	connector, err := libsql.NewConnector(&libsql.Config{URL: pair.replica.URL(), Codec: "direct", ReplicationWait: 2 * time.Second})
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	table := privateTable(t, db, "killed", "(id INTEGER PRIMARY KEY)")
	// Many frames, so that the new log's numbers are well below them.
	for i := range 200 {
		mustExec(t, db, "INSERT INTO "+table+" (id) VALUES (?)", i)
	}
	before := connector.ReplicationIndex()
	require.NotZero(t, before)

	pair.primary.Kill()
	// Reads go on on the replica. If the primary died before the replica
	// had the last write's frame, the first read cannot see that write and
	// says so after replicationWait (ErrReplicationWait); the index is then
	// dropped and the next read is served.
	var n int64
	start := time.Now()
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	if errors.Is(err, libsql.ErrReplicationWait) {
		t.Logf("first read with the primary down, after %v: %v", time.Since(start), err)
		err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	}
	require.NoError(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
	require.GreaterOrEqual(t, n, int64(190))
	// A write, forwarded to the missing primary, retries inside sqld until
	// the caller's deadline, or, on the connection's kept stream whose
	// earlier writes went to the primary, fails at once: a clear error
	// either way, and nothing retried.
	wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	start = time.Now()
	_, err = db.ExecContext(wctx, "INSERT INTO "+table+" (id) VALUES (1000)")
	cancel()
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Connection with primary broken"), "%v", err)
	require.Less(t, time.Since(start), 5*time.Second)
	t.Logf("write with the primary down: %v", err)

	require.NoError(t, pair.primary.Restart(t.Context()))
	// Writes work again once the replica has reconnected; the first ones
	// may still fail (bounded by their context) while it does.
	deadline := time.Now().Add(30 * time.Second)
	var wrote bool
	for !wrote && time.Now().Before(deadline) {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = db.ExecContext(wctx, "INSERT INTO "+table+" (id) VALUES (2000)")
		cancel()
		wrote = err == nil
		if !wrote {
			time.Sleep(200 * time.Millisecond)
		}
	}
	require.True(t, wrote, "no write within 30 s of the primary's return: %v", err)
	after := connector.ReplicationIndex()
	t.Logf("replication index %d before the SIGKILL, %d after the first write since", before, after)
	// Reads work and see the new write, without waiting for the old index
	// until a deadline (the caller's context here has none). Until the
	// replica has reset for the primary's new log it answers from its old
	// copy, at once.
	deadline = time.Now().Add(30 * time.Second)
	for {
		start := time.Now()
		err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE id = 2000").Scan(&n)
		took := time.Since(start)
		require.Less(t, took, 5*time.Second, "a read waited %v", took)
		if err == nil && n == 1 {
			break
		}
		// While the replica throws away its copy for the primary's new log
		// ("trying to replicate incompatible logs, reseting replica" in its
		// log), sqld 0.24.32 fails reads with a 500 "disk I/O error", or
		// "unable to open database file" while its file is replaced (seen
		// once in CI, under load), for a moment: the server's own error,
		// passed on, and gone once the replica has caught up.
		resetting := err != nil && (strings.Contains(err.Error(), "disk I/O error") ||
			strings.Contains(err.Error(), "unable to open database file"))
		require.True(t, err == nil || errors.Is(err, libsql.ErrReplicationWait) || resetting, "%v", err)
		if resetting {
			t.Logf("a read while the replica resets: %v", err)
		}
		if !time.Now().Before(deadline) {
			// sqld 0.24.32's replica, on a loaded machine, sometimes begins
			// its reset and never finishes it (its log ends at "received
			// reset signal"): it serves its old copy and passes writes on,
			// with or without this connection's streams open (closing them
			// did not help, 1 failure in 6 under two CPU hogs). No client can
			// read the write then; what the driver does is checked above.
			if err == nil && strings.Contains(pair.replica.Log(), "received reset signal") {
				t.Skip("sqld's replica began its reset for the primary's new log and did not finish it in 30 s; it still serves its old copy (sqld's fault: docs/dev/RELIABILITY.md)")
			}
			require.Fail(t, "reads never saw the write after the restart", "%v, n=%d", err, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// And the pool keeps its own writes visible after the reset.
	misses := missesThroughPool(t, db, privateTable(t, db, "killed_after", "(id INTEGER PRIMARY KEY)"), 100)
	require.Zero(t, misses, fmt.Sprintf("index before %d, after %d", before, connector.ReplicationIndex()))
}
