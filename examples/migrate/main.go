// Command migrate shows github.com/golang-migrate/migrate/v4 migrating a
// libSQL database through the libsql driver: migrate's database/sqlite
// driver is handed a *sql.DB opened with "libsql" (WithInstance), the
// migrations are embedded with embed.FS and read through source/iofs, and
// Up, Steps and Version move and report the schema's version.
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'http://127.0.0.1:8080?codec=gojson'
//
// Its migrations (in migrations/) create and fill migrate_tasks; migrate
// keeps the version in migrate_example_migrations. After a run, the last
// migration is rolled back, so every run applies it again.
package main

import (
	"database/sql"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver
	// Makes codec=gojson available in the DSN; without it only the default
	// codec=direct is.
	_ "github.com/gohrana/libsql/codec/gojson"
	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MigrationsTable is the table in which migrate records the schema's
// version (schema_migrations unless told otherwise).
const MigrationsTable = "migrate_example_migrations"

// New returns a Migrate for the embedded migrations on db, which must have
// been opened with the "libsql" driver. Closing the Migrate closes db.
func New(db *sql.DB) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	driver, err := sqlite.WithInstance(db, &sqlite.Config{MigrationsTable: MigrationsTable})
	if err != nil {
		return nil, err
	}
	return migrate.NewWithInstance("iofs", src, "libsql", driver)
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("migrate: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("migrate: ", err)
	}
}

// run is the whole example; it writes the versions it reaches to w.
func run(dsn string, w io.Writer) error {
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	m, err := New(db)
	if err != nil {
		db.Close()
		return err
	}
	defer m.Close()

	// ErrNoChange: everything was applied already.
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("up: %w", err)
	}
	if err := printVersion(w, "after up", m); err != nil {
		return err
	}
	if err := m.Steps(-1); err != nil {
		return fmt.Errorf("steps -1: %w", err)
	}
	return printVersion(w, "after steps -1", m)
}

// printVersion writes the schema's version to w.
func printVersion(w io.Writer, when string, m *migrate.Migrate) error {
	version, dirty, err := m.Version()
	if err != nil {
		return fmt.Errorf("version: %w", err)
	}
	fmt.Fprintf(w, "%s: version %d, dirty %v\n", when, version, dirty)
	return nil
}
