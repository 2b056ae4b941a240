// Command embedded shows an embedded replica (github.com/gohrana/libsql/
// embedded): a local SQLite file that follows a libSQL primary, answering
// reads locally and sending writes to the primary, with the writes seen
// by the next local read.
//
//	go run . -dsn http://127.0.0.1:8080 -db /tmp/replica.db
//
// It drops and recreates its own table (embedded_notes) on every run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	// Makes codec=gojson available in the primary's DSN; without it only
	// the default codec=direct and protobuf are.
	_ "github.com/gohrana/libsql/codec/gojson"
	"github.com/gohrana/libsql/embedded"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "the primary's DSN, e.g. http://127.0.0.1:8080 or libsql://db.example.com")
	path := flag.String("db", filepath.Join(os.TempDir(), "embedded-example.db"), "the local replica file")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("embedded: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, *path, os.Stdout); err != nil {
		log.Fatal("embedded: ", err)
	}
}

func run(dsn, path string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The token, if any, goes in WithAuthToken rather than the DSN.
	c, err := embedded.NewConnector(path, dsn, embedded.WithAuthToken(os.Getenv("LIBSQL_AUTH_TOKEN")))
	if err != nil {
		return err
	}
	defer c.Close()
	db := sql.OpenDB(c)
	defer db.Close()

	// A replica starts where its file left off; Sync brings it up to date.
	if _, err := c.Sync(ctx); err != nil {
		return err
	}

	// Writes go to the primary...
	for _, q := range []string{
		"DROP TABLE IF EXISTS embedded_notes",
		"CREATE TABLE embedded_notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	tx, err := db.BeginTx(ctx, nil) // a transaction runs on the primary, whole
	if err != nil {
		return err
	}
	for _, body := range []string{"reads are local", "writes go to the primary"} {
		if _, err := tx.ExecContext(ctx, "INSERT INTO embedded_notes (body) VALUES (?)", body); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}

	// ...and the next read, on the local file, waits until it has them.
	rows, err := db.QueryContext(ctx, "SELECT id, body FROM embedded_notes ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var body string
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		fmt.Fprintf(out, "%d: %s\n", id, body)
	}
	if err := rows.Err(); err != nil {
		return err
	}

	res, err := c.Sync(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the local file has the primary's log up to a frame: %v\n", res.FrameNo > 0)
	return nil
}
