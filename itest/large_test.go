package itest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// hugeRows is the size of the result that cannot travel in one pipeline
// response (sqld's default --max-response-size is 10 MB).
const hugeRows = 1_000_000

// maxSys is the bound on the memory the Go runtime takes from the OS while
// scanning the huge result.
const maxSys = 64 << 20

var hugeOnce sync.Once

// hugeTable creates (once per test binary) a table of hugeRows rows
// (id INTEGER, name TEXT, score REAL) on the shared server.
func hugeTable(t *testing.T) string {
	const table = "huge_scan"
	hugeOnce.Do(func() {
		db, err := sql.Open("libsql", dsn(testmatrix.Named("direct")))
		require.NoError(t, err)
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_, err = db.ExecContext(ctx, `
			DROP TABLE IF EXISTS `+table+`;
			CREATE TABLE `+table+` (id INTEGER PRIMARY KEY, name TEXT, score REAL);
			INSERT INTO `+table+` (id, name, score)
				WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < `+strconv.Itoa(hugeRows)+`)
				SELECT i, 'name-' || i, i * 0.5 FROM c;`)
		require.NoError(t, err)
	})
	return table
}

// TestHugeScan scans 1,000,000 rows through database/sql with each
// variant, in a child process (internal/hugescan, built without the race
// detector) so that runtime.MemStats.Sys measures this scan alone, as a
// user's program would take it.
func TestHugeScan(t *testing.T) {
	t.Parallel() // child processes; its own table
	if testing.Short() {
		t.Skip("huge scan skipped in -short mode")
	}
	table := hugeTable(t)
	child := filepath.Join(t.TempDir(), "hugescan")
	build := exec.Command("go", "build", "-o", child, "./internal/hugescan")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./internal/hugescan:\n%s", out)
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			// One child at a time: the bound is on a program that scans,
			// not on six starving each other of CPU. Starved, a child's
			// collector falls behind its allocations (gojson makes 30 a
			// row) and the heap overshoots: 70 MB once in CI with six at
			// once beside the race-detected suite, against 21 MB alone.
			cmd := exec.Command(child)
			cmd.Env = append(os.Environ(), "HUGE_DSN="+dsn(c), "HUGE_TABLE="+table)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child:\n%s", out)
			var rowsSeen, sys int64
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "HUGE ") {
					_, err := fmt.Sscanf(strings.TrimSpace(line), "HUGE rows=%d sys=%d", &rowsSeen, &sys)
					require.NoError(t, err, line)
				}
			}
			require.EqualValues(t, hugeRows, rowsSeen, "child output:\n%s", out)
			t.Logf("%s: %d rows, runtime.MemStats.Sys = %.1f MB", c, rowsSeen, float64(sys)/(1<<20))
			require.LessOrEqual(t, sys, int64(maxSys), "memory from the OS while scanning")
		})
	}
}

// countingTransport counts POST requests (pipeline and cursor), not the
// one-time version probe.
type countingTransport struct {
	posts atomic.Int64
	paths sync.Map // path -> *atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		c.posts.Add(1)
		v, _ := c.paths.LoadOrStore(r.URL.Path, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// requireRequests runs fn and requires that it sent want POST requests
// (msgAndArgs say what fn does; "HTTP requests" if none).
func (c *countingTransport) requireRequests(t testing.TB, want int64, fn func(), msgAndArgs ...any) {
	t.Helper()
	if len(msgAndArgs) == 0 {
		msgAndArgs = []any{"HTTP requests"}
	}
	before := c.posts.Load()
	fn()
	require.Equal(t, want, c.posts.Load()-before, msgAndArgs...)
}

// countingDB opens a database whose HTTP requests are counted.
// params are extra "key=value" DSN parameters.
func countingDB(t testing.TB, url string, variant testmatrix.Variant, params ...string) (*sql.DB, *countingTransport) {
	cfg, err := libsql.ParseDSN(url + "?" + strings.Join(append([]string{"codec=" + variant.Codec}, params...), "&"))
	require.NoError(t, err)
	ct := &countingTransport{}
	db := openConnector(t, cfg, libsql.WithRoundTripper(ct))
	require.NoError(t, db.Ping())
	return db, ct
}

// forEachCountedVariant runs fn as a subtest per HTTP variant, with a
// database on the shared server (with the extra DSN params) whose requests
// ct counts.
func forEachCountedVariant(t *testing.T, fn func(t *testing.T, db *sql.DB, ct *countingTransport), params ...string) {
	t.Helper()
	for _, c := range httpVariants {
		t.Run(c.Name, func(t *testing.T) {
			db, ct := countingDB(t, serverURL, c, params...)
			fn(t, db, ct)
		})
	}
}

// TestRoundTrips counts HTTP requests: 1 per autocommit statement, k+1 per
// transaction of k statements, nothing extra for prepared statements.
func TestRoundTrips(t *testing.T) {
	forEachCountedVariant(t, func(t *testing.T, db *sql.DB, ct *countingTransport) {
		table := freshTable(t, db, "trips", "(id INTEGER PRIMARY KEY, v TEXT)")
		ctx := context.Background()

		measure := func(name string, want int64, fn func()) {
			t.Helper()
			ct.requireRequests(t, want, fn, name)
		}
		measure("autocommit Exec", 1, func() {
			_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", "a")
			require.NoError(t, err)
		})
		measure("autocommit Query", 1, func() {
			var n int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		})
		stmt, err := db.PrepareContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)")
		require.NoError(t, err)
		defer stmt.Close()
		measure("prepared statement x3", 3, func() {
			for i := 0; i < 3; i++ {
				_, err := stmt.ExecContext(ctx, "p")
				require.NoError(t, err)
			}
		})
		for _, k := range []int{1, 2, 5} {
			measure(fmt.Sprintf("transaction of %d statements", k), int64(k+1), func() {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				txStmt := tx.StmtContext(ctx, stmt)
				for i := 0; i < k; i++ {
					_, err := txStmt.ExecContext(ctx, "t")
					require.NoError(t, err)
				}
				require.NoError(t, tx.Commit())
			})
		}
		measure("empty transaction", 0, func() {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			require.NoError(t, tx.Rollback())
		})
		var n int
		require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		require.Equal(t, 1+3+1+2+5, n)
	})
}

// cursorServer starts a sqld whose response limit is small, so that modest
// results take the cursor path.
func cursorServer(t *testing.T, extra ...string) string {
	return startServer(t, append([]string{"--max-response-size", "64KB"}, extra...)...)
}

func fillRows(t *testing.T, db *sql.DB, table string, n int) {
	_, err := db.Exec(`INSERT INTO ` + table + ` (id, v)
		WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ` + strconv.Itoa(n) + `)
		SELECT i, printf('%080d', i) FROM c`)
	require.NoError(t, err)
}

// TestCursorPath checks the fallback to a cursor: results over the response
// limit stream completely, inside and outside transactions; Close in the
// middle leaks no server stream; cancelling the context aborts promptly;
// a write whose result is too large is not run twice.
func TestCursorPath(t *testing.T) {
	url := cursorServer(t, "--max-concurrent-connections", "4")
	for _, c := range httpVariants {
		t.Run(c.Name, func(t *testing.T) {
			db, ct := countingDB(t, url, c)
			table := freshTable(t, db, "cur", "(id INTEGER PRIMARY KEY, v TEXT)")
			const n = 20000
			fillRows(t, db, table, n)
			ctx := context.Background()

			scan := func(q interface {
				QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			}) {
				rows, err := q.QueryContext(ctx, "SELECT id, v FROM "+table+" ORDER BY id")
				require.NoError(t, err)
				requireNumberedRows(t, rows, n, func(id int) string { return fmt.Sprintf("%080d", id) })
			}
			scan(db)
			v, ok := ct.paths.Load(cursorPath(c))
			require.True(t, ok, "the result should have used the cursor")
			require.GreaterOrEqual(t, v.(*atomic.Int64).Load(), int64(1))

			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (id, v) VALUES (?, ?)", n+1, "tx")
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE id = ?", n+1)
			require.NoError(t, err)
			scan(tx)
			require.NoError(t, tx.Commit())

			// Close after a few rows, many times: more than the server's 4
			// connections, so a leaked stream would stall the loop.
			for i := 0; i < 12; i++ {
				rows, err := db.QueryContext(ctx, "SELECT id, v FROM "+table)
				require.NoError(t, err)
				for j := 0; j < 10 && rows.Next(); j++ {
				}
				require.NoError(t, rows.Close())
			}

			// Cancelling the context stops a stream promptly.
			cctx, cancel := context.WithCancel(ctx)
			rows, err := db.QueryContext(cctx, "SELECT id, v FROM "+table)
			require.NoError(t, err)
			require.True(t, rows.Next())
			cancel()
			start := time.Now()
			for rows.Next() {
			}
			require.Error(t, rows.Err())
			require.Less(t, time.Since(start), 5*time.Second)
			rows.Close()

			// A write whose rows are too large ran once and is not repeated.
			_, err = db.QueryContext(ctx, "UPDATE "+table+" SET v = v || 'x' RETURNING v")
			require.Error(t, err)
			var lerr *libsql.Error
			require.True(t, errors.As(err, &lerr))
			require.Equal(t, "RESPONSE_TOO_LARGE", lerr.Code)
			var x int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE v LIKE '%xx'").Scan(&x))
			require.Zero(t, x, "the UPDATE ran twice")

			// The pool still works.
			var cnt int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&cnt))
			require.Equal(t, n, cnt)
		})
	}
}

// TestSlowCursorReadInTransaction reads a cursor for longer than sqld's 10 s
// stream expiry inside a transaction; the next statement must still work.
func TestSlowCursorReadInTransaction(t *testing.T) {
	t.Parallel() // mostly waiting, on a server of its own
	if testing.Short() {
		t.Skip("slow")
	}
	url := cursorServer(t)
	db, err := sql.Open("libsql", url+"?codec=direct")
	require.NoError(t, err)
	defer db.Close()
	table := freshTable(t, db, "slow", "(id INTEGER PRIMARY KEY, v TEXT)")
	fillRows(t, db, table, 4000)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (id, v) VALUES (100000, 'inside')")
	require.NoError(t, err)
	rows, err := tx.QueryContext(ctx, "SELECT id FROM "+table+" ORDER BY id")
	require.NoError(t, err)
	deadline := time.Now().Add(12 * time.Second)
	n := 0
	for rows.Next() {
		n++
		if time.Now().Before(deadline) {
			time.Sleep(4 * time.Millisecond)
		}
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 4001, n)
	var v string
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT v FROM "+table+" WHERE id = 100000").Scan(&v))
	require.Equal(t, "inside", v)
	require.NoError(t, tx.Commit())
}

// TestNoStreamLeaks runs 2,000 sequential and 2,000 concurrent queries (16
// goroutines) against a sqld limited to 8 connections: any leaked stream
// would hold one for 10 s and stall the run.
func TestNoStreamLeaks(t *testing.T) {
	t.Parallel() // a server of its own
	// libsql-wal: sqld 0.24.32's default WAL can deadlock under concurrent writers
	// (see TestConcurrency); this test is about streams, not the WAL.
	url := startServer(t, "--max-concurrent-connections", "8", "--use-custom-wal", "libsql-wal")
	type run struct {
		testmatrix.Variant
		closed bool // keepStreams=0: a stream per statement, so the pool may outgrow sqld's limit
	}
	runs := []run{{Variant: httpVariants[0], closed: true}}
	for _, c := range variants {
		runs = append(runs, run{Variant: c})
	}
	for _, c := range runs {
		name := c.Name
		if c.closed {
			name += "_keepStreams=0"
		}
		t.Run(name, func(t *testing.T) {
			dsn := c.DSN(url)
			if c.closed {
				dsn = c.DSN(url, "keepStreams=0")
			}
			db, err := sql.Open("libsql", dsn)
			require.NoError(t, err)
			defer db.Close()
			if !c.closed {
				// Each open connection keeps its server stream, and so one
				// of sqld's connections, between its statements (over
				// WebSocket for its life; sqld closes the socket of a
				// stream over its limit). The pool must stay within it
				// (docs/GUIDE.md "Kept streams and the server's connections").
				db.SetMaxOpenConns(8)
			}
			table := freshTable(t, db, "leak", "(id INTEGER PRIMARY KEY, v INTEGER)")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i := 0; i < 2000; i++ {
				var n int
				require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
			}
			var wg sync.WaitGroup
			var failed atomic.Int64
			var firstErr atomic.Value
			for g := 0; g < 16; g++ {
				wg.Go(func() {
					for i := 0; i < 125; i++ {
						var err error
						if i%5 == 0 {
							_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", g)
						} else {
							var n int
							err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
						}
						if err != nil {
							failed.Add(1)
							firstErr.CompareAndSwap(nil, err)
							return
						}
					}
				})
			}
			wg.Wait()
			require.Zero(t, failed.Load(), "first error: %v", firstErr.Load())
			var n int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
			require.Equal(t, 16*25, n)
		})
	}
}
