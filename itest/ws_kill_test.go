package itest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestFaultsSocketKilledUnderLoad: 16 goroutines insert rows through one
// *sql.DB over WebSocket, with autocommit INSERTs, while the sockets under
// them are reset (a toxiproxy reset_peer for a moment, which also resets
// the dials made meanwhile). Afterwards the table holds exactly: every row
// whose INSERT succeeded, none whose INSERT failed as never sent (Safe),
// at most one copy of any row (nothing was sent twice), and of the INSERTs
// whose outcome is unknown, any subset. The pool then works again.
func TestFaultsSocketKilledUnderLoad(t *testing.T) {
	const workers, perWorker = 16, 120
	for _, c := range variants {
		if !c.WS() {
			continue // sockets are WebSocket's
		}
		t.Run(c.Name, func(t *testing.T) {
			srv := sqlds.Start(t)
			direct := openDB(t, srv.URL(), testmatrix.Named("direct"))
			table := privateTable(t, direct, "kill", "(v TEXT NOT NULL)")
			fp := newFaultProxy(t, srv.URL())
			db := openDB(t, fp.url, c)
			db.SetMaxOpenConns(workers)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			var (
				mu               sync.Mutex
				ok, unsent, lost []string
				done             atomic.Int64
			)
			record := func(list *[]string, v string) {
				mu.Lock()
				*list = append(*list, v)
				mu.Unlock()
			}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range perWorker {
						v := fmt.Sprintf("w%d-%d", w, i)
						_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", v)
						done.Add(1)
						var le *libsql.Error
						switch {
						case err == nil:
							record(&ok, v)
						case errors.As(err, &le) && le.SafeToRetry():
							record(&unsent, v)
						default:
							record(&lost, v)
						}
					}
				})
			}
			// Kill the sockets a third of the way in, for a moment.
			for done.Load() < workers*perWorker/3 {
				time.Sleep(time.Millisecond)
			}
			fp.add(t, toxic{Name: "kill", Type: "reset_peer", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})
			time.Sleep(300 * time.Millisecond)
			fp.remove(t, "kill")
			wg.Wait()
			t.Logf("%d ok, %d never sent, %d of unknown outcome", len(ok), len(unsent), len(lost))
			require.Equal(t, workers*perWorker, len(ok)+len(unsent)+len(lost))
			require.NotEmpty(t, append(unsent, lost...), "the reset failed some INSERTs")
			require.NotEmpty(t, ok, "and others went through")

			var dups int64
			require.NoError(t, direct.QueryRow("SELECT count(*) FROM (SELECT v FROM "+table+" GROUP BY v HAVING count(*) > 1)").Scan(&dups))
			require.Zero(t, dups, "no row was inserted twice")
			present := func(vs []string) int64 {
				var n int64
				for _, v := range vs {
					n += countWhere(t, direct, table, "v = '"+v+"'")
				}
				return n
			}
			require.EqualValues(t, len(ok), present(ok), "every INSERT that succeeded is there")
			require.Zero(t, present(unsent), "no INSERT that was never sent is there")
			applied := present(lost)
			require.EqualValues(t, int64(len(ok))+applied, countRows(t, direct, table), "nothing else is there")
			t.Logf("%d of the %d of unknown outcome had been applied", applied, len(lost))

			// The pool works again.
			for i := range workers {
				_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", fmt.Sprintf("after-%d", i))
				require.NoError(t, err, "after the fault")
			}
		})
	}
}
