package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/internal/fixture"
)

// The tables the orchestrator prepares (and InsertTx recreates).
const (
	// FixtureRows is the number of rows of the fixture table bench.
	FixtureRows = 20000
	// BigQuery reads the 1,000,000-row table big.
	BigQuery = "SELECT id, name, score FROM big"
	// BigSchema and BigFill create and fill big in one statement.
	BigSchema = "CREATE TABLE big (id INTEGER, name TEXT, score REAL)"
	// PointQuery reads one fixture row by its primary key (the rowid; the
	// table is filled in order, so row i has rowid i).
	PointQuery = "SELECT a, b, c, d, e, f FROM bench WHERE rowid = ?"
	// insertTable is the table InsertTx fills.
	insertTable = "bench_ins"
)

// BigFill fills big with n rows: id 1..n, name 'name-<id>', score id/2.
func BigFill(n int) string {
	return fmt.Sprintf("INSERT INTO big (id, name, score) "+
		"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "+
		"SELECT i, 'name-' || i, i * 0.5 FROM s", n)
}

// Options parameterize the workloads.
type Options struct {
	Iters    int           // ScanFixture, Ceiling: measured iterations (after one warm-up)
	N        int           // rows to expect or insert, or queries to run
	Conc     int           // Concurrent: goroutines
	Duration time.Duration // Concurrent: how long
	Seed     uint64        // key sequence of the point workloads
}

// fixtureSums returns the sum of column a over rows 1..n, to check scans.
func fixtureSums(n int) (sumA int64) {
	for i := 1; i <= n; i++ {
		sumA += fixture.MakeRow(i).A
	}
	return sumA
}

// scanFixture reads every row of fixture.Query into typed variables.
func scanFixture(ctx context.Context, db *sql.DB) (count int, sumA int64, err error) {
	rows, err := db.QueryContext(ctx, fixture.Query)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var (
		a, f int64
		b    string
		c    float64
		d    []byte
		e    sql.NullString
	)
	for rows.Next() {
		if err := rows.Scan(&a, &b, &c, &d, &e, &f); err != nil {
			return count, sumA, err
		}
		count++
		sumA += a
	}
	return count, sumA, rows.Err()
}

// ScanFixture is workload (a): fixture.Query over the 20,000-row table with
// typed Scan, o.Iters times after one warm-up. Rate is the median over the
// iterations.
func ScanFixture(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	r := Result{Workload: "scan20k"}
	want := fixtureSums(o.N)
	scan := func() error {
		n, sum, err := scanFixture(ctx, db)
		if err != nil {
			return err
		}
		if n != o.N || sum != want {
			return fmt.Errorf("scanned %d rows (sum of a %d), want %d (%d)", n, sum, o.N, want)
		}
		return nil
	}
	if err := scan(); err != nil {
		return r, err
	}
	secs := make([]float64, 0, o.Iters)
	m := Begin()
	for range o.Iters {
		t := time.Now()
		if err := scan(); err != nil {
			return r, err
		}
		secs = append(secs, time.Since(t).Seconds())
	}
	r.Rate = float64(o.N) / harness.Median(secs)
	m.End(&r, int64(o.N)*int64(o.Iters))
	return r, nil
}

// PointKeys returns the rowids of workload (b) for o.Seed: 200 warm-up
// keys, then o.N measured ones. The floors use them too, so that every
// variant reads the same rows.
func PointKeys(o Options) (warm, measured []int64) {
	return pointKeys(200, FixtureRows, o.Seed, 99), pointKeys(o.N, FixtureRows, o.Seed, 0)
}

// pointKeys returns n rowids in 1..rows, the same for a given seed.
func pointKeys(n, rows int, seed, stream uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, stream))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = 1 + rng.Int64N(int64(rows))
	}
	return ids
}

// wantA returns column a of fixture rows 0..rows (index = rowid).
func wantA(rows int) []int64 {
	a := make([]int64, rows+1)
	for i := 1; i <= rows; i++ {
		a[i] = fixture.MakeRow(i).A
	}
	return a
}

// pointQuery reads one row by rowid and checks it.
func pointQuery(ctx context.Context, db *sql.DB, id int64, want []int64) error {
	var (
		a, f int64
		b    string
		c    float64
		d    []byte
		e    sql.NullString
	)
	if err := db.QueryRowContext(ctx, PointQuery, id).Scan(&a, &b, &c, &d, &e, &f); err != nil {
		return fmt.Errorf("rowid %d: %w", id, err)
	}
	if a != want[id] {
		return fmt.Errorf("rowid %d: a = %d, want %d", id, a, want[id])
	}
	return nil
}

// Point is workload (b): o.N point SELECTs by primary key, one at a time,
// after 200 warm-up queries; p50 and p99 of their latencies.
func Point(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	r := Result{Workload: "point"}
	want := wantA(FixtureRows)
	warm, ids := PointKeys(o)
	for _, id := range warm {
		if err := pointQuery(ctx, db, id, want); err != nil {
			return r, err
		}
	}
	lat := make([]time.Duration, len(ids))
	m := Begin()
	for i, id := range ids {
		t := time.Now()
		if err := pointQuery(ctx, db, id, want); err != nil {
			return r, err
		}
		lat[i] = time.Since(t)
	}
	m.End(&r, int64(len(ids)))
	r.SetLatencies(lat)
	return r, nil
}

// Concurrent is workload (d): o.Conc goroutines doing point SELECTs for
// o.Duration on one *sql.DB (pool sized to o.Conc). Rate is queries/s.
func Concurrent(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	r := Result{Workload: "concurrent"}
	db.SetMaxOpenConns(o.Conc)
	db.SetMaxIdleConns(o.Conc)
	want := wantA(FixtureRows)
	const perG = 1 << 16 // keys per goroutine, reused cyclically
	keys := make([][]int64, o.Conc)
	lats := make([][]time.Duration, o.Conc)
	for g := range keys {
		keys[g] = pointKeys(perG, FixtureRows, o.Seed, uint64(1000+g))
		lats[g] = make([]time.Duration, 0, 1<<16)
	}
	var (
		wg      sync.WaitGroup
		failed  atomic.Bool
		errOnce sync.Once
		firstEr error
	)
	run := func(deadline time.Time, record bool) {
		for g := range o.Conc {
			wg.Go(func() {
				ks := keys[g]
				for i := 0; !failed.Load(); i++ {
					t := time.Now()
					if !t.Before(deadline) {
						return
					}
					if err := pointQuery(ctx, db, ks[i%len(ks)], want); err != nil {
						failed.Store(true)
						errOnce.Do(func() { firstEr = err })
						return
					}
					if record {
						lats[g] = append(lats[g], time.Since(t))
					}
				}
			})
		}
		wg.Wait()
	}
	run(time.Now().Add(o.Duration/20), false) // warm-up: fills the pools
	if firstEr != nil {
		return r, firstEr
	}
	m := Begin()
	run(time.Now().Add(o.Duration), true)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	m.End(&r, int64(len(all)))
	if firstEr != nil {
		return r, firstEr
	}
	r.SetLatencies(all)
	return r, nil
}

// InsertTx is workload (c): o.N prepared INSERTs of fixture rows in one
// transaction, into a table recreated before the measured part. Rate is
// rows/s including BEGIN and COMMIT.
func InsertTx(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	r := Result{Workload: "insert"}
	schema := strings.Replace(fixture.Schema, "TABLE bench ", "TABLE "+insertTable+" ", 1)
	insert := strings.Replace(fixture.Insert, "INTO bench ", "INTO "+insertTable+" ", 1)
	if schema == fixture.Schema || insert == fixture.Insert {
		return r, errors.New("fixture.Schema or fixture.Insert changed shape; update InsertTx")
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+insertTable); err != nil {
		return r, err
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return r, err
	}
	args := make([][]any, o.N)
	for i := range args {
		args[i] = fixture.MakeRow(i + 1).Args()
	}
	fill := func(rows [][]any) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
		st, err := tx.PrepareContext(ctx, insert)
		if err != nil {
			return err
		}
		for i, a := range rows {
			if _, err := st.ExecContext(ctx, a...); err != nil {
				return fmt.Errorf("insert %d: %w", i+1, err)
			}
		}
		if err := st.Close(); err != nil {
			return err
		}
		return tx.Commit()
	}
	// Warm-up: a short transaction, then empty the table again.
	if err := fill(args[:min(100, len(args))]); err != nil {
		return r, err
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM "+insertTable); err != nil {
		return r, err
	}
	m := Begin()
	if err := fill(args); err != nil {
		return r, err
	}
	m.End(&r, int64(o.N))
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+insertTable).Scan(&n); err != nil {
		return r, err
	}
	if n != o.N {
		return r, fmt.Errorf("table holds %d rows after the commit, want %d", n, o.N)
	}
	return r, nil
}

// ScanBig is workload (e): BigQuery over the o.N-row table with typed
// Scan, once, without warm-up.
func ScanBig(ctx context.Context, db *sql.DB, o Options) (Result, error) {
	r := Result{Workload: "scan1m"}
	if err := db.PingContext(ctx); err != nil {
		return r, err
	}
	m := Begin()
	rows, err := db.QueryContext(ctx, BigQuery)
	if err != nil {
		return r, err
	}
	defer rows.Close()
	var (
		id, count, sumID int64
		name             string
		score            float64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &name, &score); err != nil {
			return r, fmt.Errorf("after %d rows: %w", count, err)
		}
		count++
		sumID += id
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("after %d rows: %w", count, err)
	}
	m.End(&r, count)
	n := int64(o.N)
	if count != n || sumID != n*(n+1)/2 {
		return r, fmt.Errorf("scanned %d rows (sum of id %d), want %d (%d)", count, sumID, n, n*(n+1)/2)
	}
	return r, nil
}
