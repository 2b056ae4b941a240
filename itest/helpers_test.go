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

	"github.com/gohrana/libsql"
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
	dropAtEnd(t, db, name)
	return name
}

// dropAtEnd drops the table when the test ends; a failed DROP is logged,
// not a failure (the table's name is unique to this process).
func dropAtEnd(t testing.TB, db *sql.DB, table string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table); err != nil {
			t.Logf("drop table %s: %v", table, err)
		}
	})
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

// countWhere returns SELECT count(*) FROM table WHERE cond.
func countWhere(t testing.TB, q rowQueryer, table, cond string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int64
	require.NoError(t, q.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+cond, args...).Scan(&n))
	return n
}

// queryer is what *sql.DB, *sql.Conn and *sql.Tx have in common for
// queries.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryColumn runs a query whose rows have one column and returns its
// values in row order (an empty slice, not nil, for no rows).
func queryColumn[T any](t testing.TB, q queryer, query string, args ...any) []T {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	require.NoError(t, err, "query %q", query)
	defer rows.Close()
	values := []T{}
	for rows.Next() {
		var v T
		require.NoError(t, rows.Scan(&v))
		values = append(values, v)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	return values
}

// requireNumberedRows reads rows of (id, v) to the end and requires that
// they are the n rows with ids 1 to n in order, each v as text says for
// its id (the results of the tests' recursive CTEs).
func requireNumberedRows(t testing.TB, rows *sql.Rows, n int, text func(id int) string) {
	t.Helper()
	defer rows.Close()
	i := 0
	for rows.Next() {
		var id int
		var v string
		require.NoError(t, rows.Scan(&id, &v))
		i++
		require.Equal(t, i, id)
		require.Equal(t, text(i), v, "v of row %d", i)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, n, i, "rows")
}

// execer is what *sql.DB, *sql.Conn and *sql.Tx have in common for
// statements.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// mustExec runs a statement that must succeed, on a database, a pinned
// connection or a transaction.
func mustExec(t testing.TB, db execer, query string, args ...any) sql.Result {
	t.Helper()
	res, err := db.ExecContext(context.Background(), query, args...)
	require.NoError(t, err, "exec %q", query)
	return res
}

// openConnector opens a *sql.DB on a connector made from cfg with opts,
// for the tests that set what a DSN cannot say (a TLS config, a
// RoundTripper, a token provider); it is closed when the test ends.
func openConnector(t testing.TB, cfg *libsql.Config, opts ...libsql.ConnectorOption) *sql.DB {
	t.Helper()
	c, err := libsql.NewConnector(cfg, opts...)
	require.NoError(t, err)
	db := sql.OpenDB(c)
	t.Cleanup(func() { _ = db.Close() })
	return db
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
