package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/internal/fixture"
)

// prepare creates and fills the tables the workloads read, through this
// repository's driver: bench with the 20,000 fixture rows (fixture.Insert in
// one transaction) and, if bigRows > 0, big with bigRows rows (one INSERT
// ... WITH RECURSIVE).
func prepare(ctx context.Context, url string, bigRows int, logf func(string, ...any)) error {
	db, err := sql.Open(libsql.DriverName, url)
	if err != nil {
		return err
	}
	defer db.Close()

	start := time.Now()
	if _, err := db.ExecContext(ctx, fixture.Schema); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	st, err := tx.PrepareContext(ctx, fixture.Insert)
	if err != nil {
		return err
	}
	for i := 1; i <= workload.FixtureRows; i++ {
		if _, err := st.ExecContext(ctx, fixture.MakeRow(i).Args()...); err != nil {
			return fmt.Errorf("fixture row %d: %w", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	var n, maxRowid int
	if err := db.QueryRowContext(ctx, "SELECT count(*), max(rowid) FROM bench").Scan(&n, &maxRowid); err != nil {
		return err
	}
	if n != workload.FixtureRows || maxRowid != workload.FixtureRows {
		return fmt.Errorf("bench holds %d rows up to rowid %d, want %d", n, maxRowid, workload.FixtureRows)
	}
	logf("prepared bench: %d fixture rows in %v", n, time.Since(start).Round(time.Millisecond))

	if bigRows <= 0 {
		return nil
	}
	start = time.Now()
	if _, err := db.ExecContext(ctx, workload.BigSchema); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, workload.BigFill(bigRows)); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil {
		return err
	}
	if n != bigRows {
		return fmt.Errorf("big holds %d rows, want %d", n, bigRows)
	}
	logf("prepared big: %d rows in %v", n, time.Since(start).Round(time.Millisecond))
	return nil
}
