package main

import (
	"context"
	"database/sql"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/exampletest"
	"github.com/pressly/goose/v3"
)

// forEachVariant runs f once per transport and codec
// (exampletest.ForEachDSN), on a database without the example's tables.
// The subtests run one after the other, since they share those tables.
func forEachVariant(t *testing.T, f func(t *testing.T, dsn string, db *sql.DB)) {
	t.Helper()
	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) {
		db, err := sql.Open("libsql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := db.Exec("DROP TABLE IF EXISTS goose_notes; DROP TABLE IF EXISTS " + VersionTable); err != nil {
			t.Fatal(err)
		}
		f(t, dsn, db)
	})
}

// newProvider is NewProvider for a test, which it stops if that fails.
func newProvider(t *testing.T, db *sql.DB) *goose.Provider {
	t.Helper()
	provider, err := NewProvider(db)
	if err != nil {
		t.Fatal(err)
	}
	return provider
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `up 00001_create_notes.sql
up 00002_add_pinned.sql
up 00003_seed_notes.sql
  applied 00001_create_notes.sql
  applied 00002_add_pinned.sql
  applied 00003_seed_notes.sql
down 00003_seed_notes.sql
  applied 00001_create_notes.sql
  applied 00002_add_pinned.sql
  pending 00003_seed_notes.sql
`
	forEachVariant(t, func(t *testing.T, dsn string, _ *sql.DB) {
		exampletest.CheckOutput(t, want, func(w io.Writer) error { return run(dsn, w) })
	})
}

// TestUpDownStatus walks the migrations up, down one, up again and all the
// way down, and checks after each step what goose ran, what it reports and
// what the database holds.
func TestUpDownStatus(t *testing.T) {
	forEachVariant(t, func(t *testing.T, _ string, db *sql.DB) {
		ctx := context.Background()
		provider := newProvider(t, db)
		up := func() ([]*goose.MigrationResult, error) { return provider.Up(ctx) }
		down := func() ([]*goose.MigrationResult, error) {
			r, err := provider.Down(ctx)
			return []*goose.MigrationResult{r}, err
		}
		downToZero := func() ([]*goose.MigrationResult, error) { return provider.DownTo(ctx, 0) }

		const a, p = goose.StateApplied, goose.StatePending
		steps := []struct {
			name    string
			do      func() ([]*goose.MigrationResult, error)
			ran     []int64       // the versions run, in order
			version int64         // the database's version after
			states  []goose.State // of migrations 1, 2, 3 after
			notes   int           // rows in goose_notes after; -1: no table
		}{
			{"up", up, []int64{1, 2, 3}, 3, []goose.State{a, a, a}, 2},
			{"up again", up, nil, 3, []goose.State{a, a, a}, 2},
			{"down", down, []int64{3}, 2, []goose.State{a, a, p}, 0},
			{"up after down", up, []int64{3}, 3, []goose.State{a, a, a}, 2},
			{"down to 0", downToZero, []int64{3, 2, 1}, 0, []goose.State{p, p, p}, -1},
		}
		start := time.Now().Add(-time.Minute)
		for _, step := range steps {
			results, err := step.do()
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			var ran []int64
			for _, r := range results {
				ran = append(ran, r.Source.Version)
			}
			if !slices.Equal(ran, step.ran) {
				t.Errorf("%s: ran versions %v, want %v", step.name, ran, step.ran)
			}

			if v, err := provider.GetDBVersion(ctx); err != nil || v != step.version {
				t.Errorf("%s: database version %d (%v), want %d", step.name, v, err, step.version)
			}
			status, err := provider.Status(ctx)
			if err != nil {
				t.Fatalf("%s: status: %v", step.name, err)
			}
			var states []goose.State
			for _, s := range status {
				states = append(states, s.State)
				if s.State == a && s.AppliedAt.Before(start) {
					t.Errorf("%s: version %d applied at %v, before the test started", step.name, s.Source.Version, s.AppliedAt)
				}
			}
			if !slices.Equal(states, step.states) {
				t.Errorf("%s: states %v, want %v", step.name, states, step.states)
			}

			exampletest.CheckRows(t, ctx, db, step.name, "goose_notes", step.notes)
		}
	})
}

// TestPinnedColumn checks what migration 2 added: the column and its index,
// which the seed rows of migration 3 use.
func TestPinnedColumn(t *testing.T) {
	forEachVariant(t, func(t *testing.T, _ string, db *sql.DB) {
		ctx := context.Background()
		provider := newProvider(t, db)
		if _, err := provider.Up(ctx); err != nil {
			t.Fatal(err)
		}
		var body string
		if err := db.QueryRowContext(ctx, "SELECT body FROM goose_notes INDEXED BY goose_notes_pinned WHERE pinned = 1").Scan(&body); err != nil {
			t.Fatal(err)
		}
		if want := "migrations are embedded with embed.FS"; body != want {
			t.Errorf("pinned note %q, want %q", body, want)
		}
	})
}
