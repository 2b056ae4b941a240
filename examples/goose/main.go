// Command goose shows github.com/pressly/goose/v3 migrating a libSQL
// database through the libsql driver: goose.DialectTurso, SQL migrations
// embedded in the binary with embed.FS, and goose's Provider applying them
// (Up), reporting them (Status) and rolling the last one back (Down).
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'http://127.0.0.1:8080?codec=gojson'
//
// Its migrations (in migrations/) create and fill goose_notes; goose keeps
// its bookkeeping in goose_example_version. After a run, the last migration
// is rolled back, so every run applies it again.
package main

import (
	"context"
	"database/sql"
	"embed"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"time"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver
	// Makes codec=gojson available in the DSN; without it only the default
	// codec=direct is.
	_ "github.com/gohrana/libsql/codec/gojson"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var embedded embed.FS

// VersionTable is the table in which goose records the applied migrations
// (goose_db_version unless told otherwise).
const VersionTable = "goose_example_version"

// NewProvider returns a goose provider for the embedded migrations on db.
func NewProvider(db *sql.DB) (*goose.Provider, error) {
	migrations, err := fs.Sub(embedded, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectTurso, db, migrations, goose.WithTableName(VersionTable))
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("goose: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("goose: ", err)
	}
}

// run is the whole example; it writes what goose did to w.
func run(dsn string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	provider, err := NewProvider(db)
	if err != nil {
		return err
	}

	applied, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	for _, r := range applied {
		fmt.Fprintf(w, "up %s\n", r.Source.Path)
	}
	if err := printStatus(ctx, w, provider); err != nil {
		return err
	}

	last, err := provider.Down(ctx)
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	fmt.Fprintf(w, "down %s\n", last.Source.Path)
	return printStatus(ctx, w, provider)
}

// printStatus writes the state of every migration to w.
func printStatus(ctx context.Context, w io.Writer, provider *goose.Provider) error {
	status, err := provider.Status(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	for _, s := range status {
		fmt.Fprintf(w, "  %-7s %s\n", s.State, s.Source.Path)
	}
	return nil
}
