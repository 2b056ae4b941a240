package main

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/exampletest"
	"github.com/golang-migrate/migrate/v4"
)

// forEachVariant runs f once per transport and codec
// (exampletest.ForEachDSN), on a database without the example's tables.
// The subtests run one after the other, since they share those tables.
func forEachVariant(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) {
		db := open(t, dsn)
		if _, err := db.Exec("DROP TABLE IF EXISTS migrate_tasks; DROP TABLE IF EXISTS " + MigrationsTable); err != nil {
			t.Fatal(err)
		}
		f(t, dsn)
	})
}

// open opens dsn, to be closed when the test ends.
func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `after up: version 3, dirty false
after steps -1: version 2, dirty false
`
	forEachVariant(t, func(t *testing.T, dsn string) {
		exampletest.CheckOutput(t, want, func(w io.Writer) error { return run(dsn, w) })
	})
}

// TestUpStepsVersion moves the schema up, back step by step, forward and
// all the way down, and checks after each move the error, the version
// migrate reports and what the database holds.
func TestUpStepsVersion(t *testing.T) {
	forEachVariant(t, func(t *testing.T, dsn string) {
		m, err := New(open(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		db := open(t, dsn) // m.Close closes the one it was given

		if _, _, err := m.Version(); !errors.Is(err, migrate.ErrNilVersion) {
			t.Fatalf("Version before any migration: error %v, want migrate.ErrNilVersion", err)
		}
		steps := []struct {
			name    string
			do      func() error
			wantErr error
			version uint // 0: none (migrate.ErrNilVersion)
			tasks   int  // rows in migrate_tasks; -1: no table
			due     bool // migrate_tasks has the due column
		}{
			{"up", m.Up, nil, 3, 2, true},
			{"up again", m.Up, migrate.ErrNoChange, 3, 2, true},
			{"steps -1", func() error { return m.Steps(-1) }, nil, 2, 0, true},
			{"steps -1 again", func() error { return m.Steps(-1) }, nil, 1, 0, false},
			{"steps 2", func() error { return m.Steps(2) }, nil, 3, 2, true},
			{"down", m.Down, nil, 0, -1, false},
		}
		for _, step := range steps {
			if err := step.do(); !errors.Is(err, step.wantErr) {
				t.Fatalf("%s: error %v, want %v", step.name, err, step.wantErr)
			}

			version, dirty, err := m.Version()
			switch {
			case step.version == 0 && !errors.Is(err, migrate.ErrNilVersion):
				t.Errorf("%s: Version() = %d, %v, %v; want migrate.ErrNilVersion", step.name, version, dirty, err)
			case step.version != 0 && (err != nil || version != step.version || dirty):
				t.Errorf("%s: Version() = %d, %v, %v; want %d, false, nil", step.name, version, dirty, err, step.version)
			}

			exampletest.CheckRows(t, context.Background(), db, step.name, "migrate_tasks", step.tasks)
			var due int
			if err := db.QueryRow("SELECT count(*) FROM pragma_table_info('migrate_tasks') WHERE name = 'due'").Scan(&due); err != nil {
				t.Fatal(err)
			}
			if (due == 1) != step.due {
				t.Errorf("%s: due column present: %v, want %v", step.name, due == 1, step.due)
			}
		}
	})
}

// TestSeededRows reads back what the migrations wrote: the DATETIME column
// arrives as a time.Time.
func TestSeededRows(t *testing.T) {
	forEachVariant(t, func(t *testing.T, dsn string) {
		m, err := New(open(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Up(); err != nil {
			t.Fatal(err)
		}
		var (
			title string
			due   time.Time
		)
		if err := open(t, dsn).QueryRow("SELECT title, due FROM migrate_tasks WHERE done = 1").Scan(&title, &due); err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC); title != "write the migrations" || !due.Equal(want) {
			t.Errorf("done task = %q due %v, want %q due %v", title, due, "write the migrations", want)
		}
	})
}
