package itest

// _txlock against a sqld of the test's own: read-then-write transactions
// under contention, and BEGIN IMMEDIATE waiting for a writer's lock.
//
// The contention runs 6 transactions at a time, not autocommit writers:
// sqld's write stall under many concurrent writers (docs/dev/RELIABILITY.md)
// needs many more, and each run is bounded by its context.

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestTxLockContention: 6 clients on two *sql.DB run read-then-write
// transactions (SELECT v; UPDATE v = read + 1) on 2 rows. With
// _txlock=immediate every one commits and the rows' sum is the number of
// transactions; with the default (deferred) some fail with SQLITE_BUSY at
// their UPDATE (SQLite's rule for a transaction whose read is older than
// another writer's commit), and the sum is still the number that
// committed: nothing lost, nothing applied twice.
func TestTxLockContention(t *testing.T) {
	t.Parallel()
	for _, v := range []testmatrix.Variant{testmatrix.Named("direct"), testmatrix.Named("ws_direct")} {
		for _, mode := range []string{libsql.TxLockImmediate, libsql.TxLockDeferred} {
			t.Run(v.Name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				srv := sqlds.Start(t)
				dbs := []*sql.DB{openDB(t, srv.URL(), v, "_txlock="+mode), openDB(t, srv.URL(), v, "_txlock="+mode)}
				table := privateTable(t, dbs[0], "txlock", "(id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_, err := dbs[0].ExecContext(ctx, "INSERT INTO "+table+" VALUES (1, 0), (2, 0)")
				require.NoError(t, err)

				const clients, each = 6, 20
				var mu sync.Mutex
				committed, busy := 0, 0
				var others []error
				var wg sync.WaitGroup
				for c := range clients {
					wg.Go(func() {
						for i := range each {
							err := incrementTx(ctx, dbs[c%2], table, 1+(c+i)%2)
							mu.Lock()
							switch {
							case err == nil:
								committed++
							case errors.Is(err, libsql.ErrBusy):
								busy++
							default:
								others = append(others, err)
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				require.Empty(t, others, "transactions that failed otherwise than with SQLITE_BUSY")
				var sum int
				require.NoError(t, dbs[0].QueryRowContext(ctx, "SELECT sum(v) FROM "+table).Scan(&sum))
				require.Equal(t, committed, sum, "the rows' sum against the transactions that committed")
				t.Logf("_txlock=%s: %d of %d committed, %d failed with SQLITE_BUSY", mode, committed, clients*each, busy)
				if mode == libsql.TxLockImmediate {
					require.Zero(t, busy, "transactions that failed with SQLITE_BUSY under _txlock=immediate")
					require.Equal(t, clients*each, committed)
				}
			})
		}
	}
}

// incrementTx reads row id and writes it back incremented, in one
// transaction.
func incrementTx(ctx context.Context, db *sql.DB, table string, id int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, "SELECT v FROM "+table+" WHERE id = ?", id).Scan(&v); err != nil {
		_ = tx.Rollback()
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET v = ? WHERE id = ?", v+1, id); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// TestTxLockImmediateWaits: while one transaction holds the write lock, a
// transaction of _txlock=immediate whose first statement only reads waits
// at its BEGIN IMMEDIATE, then reads what the first one committed: its
// read happened under the lock. With the default it reads at once, the
// value from before.
func TestTxLockImmediateWaits(t *testing.T) {
	t.Parallel()
	for _, v := range []testmatrix.Variant{testmatrix.Named("direct"), testmatrix.Named("ws_direct")} {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			srv := sqlds.Start(t)
			holder := openDB(t, srv.URL(), v, "_txlock=immediate")
			table := privateTable(t, holder, "txwait", "(id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := holder.ExecContext(ctx, "INSERT INTO "+table+" VALUES (1, 0)")
			require.NoError(t, err)

			tx, err := holder.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET v = 1 WHERE id = 1")
			require.NoError(t, err)

			read := func(db *sql.DB) (int, time.Duration, error) {
				start := time.Now()
				wtx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return 0, 0, err
				}
				defer func() { _ = wtx.Rollback() }()
				var got int
				err = wtx.QueryRowContext(ctx, "SELECT v FROM "+table+" WHERE id = 1").Scan(&got)
				return got, time.Since(start), err
			}
			got, _, err := read(openDB(t, srv.URL(), v))
			require.NoError(t, err)
			require.Equal(t, 0, got, "a deferred transaction reads at once, before the holder's commit")

			const hold = 500 * time.Millisecond
			type answer struct {
				v    int
				took time.Duration
				err  error
			}
			done := make(chan answer, 1)
			go func() {
				v, took, err := read(openDB(t, srv.URL(), v, "_txlock=immediate"))
				done <- answer{v, took, err}
			}()
			time.Sleep(hold)
			require.NoError(t, tx.Commit())
			a := <-done
			require.NoError(t, a.err)
			require.Equal(t, 1, a.v, "the immediate transaction's read after the holder's commit")
			require.GreaterOrEqual(t, a.took, hold/2, "the immediate transaction's BEGIN waited for the lock")
		})
	}
}
