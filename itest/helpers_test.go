package itest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	// codec=gojson runs only where its package is imported.
	_ "github.com/gohrana/libsql/codec/gojson"
)

// Helpers shared by the test cases (the harness is in harness_test.go).

var scratchSeq atomic.Int64

// scratchName returns a table name unique to this process, for tables a
// test creates itself (scripts, DDL), and drops the table when the test
// ends. Dropping a table drops its triggers and indexes too.
func scratchName(t testing.TB, db *sql.DB, base string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d_x%d", base, os.Getpid(), scratchSeq.Add(1))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
			t.Logf("drop table %s: %v", name, err)
		}
	})
	return name
}

// rowQueryer is what *sql.DB, *sql.Conn and *sql.Tx have in common for
// single-row queries.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// countRows returns SELECT count(*) FROM table.
func countRows(t testing.TB, q rowQueryer, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, q.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table).Scan(&n),
		"count rows of %s", table)
	return n
}

// mustExec runs a statement that must succeed.
func mustExec(t testing.TB, db *sql.DB, query string, args ...any) sql.Result {
	t.Helper()
	res, err := db.ExecContext(context.Background(), query, args...)
	require.NoError(t, err, "exec %q", query)
	return res
}

// runWorkers runs fn(0..n-1) in n goroutines, started together, and
// returns their errors joined. Test goroutines must not call t.FailNow, so
// workers report errors instead.
func runWorkers(n int, fn func(worker int) error) error {
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, n)
	)
	for w := range n {
		wg.Go(func() {
			<-start
			errs[w] = fn(w)
		})
	}
	close(start)
	wg.Wait()
	return errors.Join(errs...)
}
