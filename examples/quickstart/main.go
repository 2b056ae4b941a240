// Command quickstart shows typical use of the libsql driver: open a
// database, create a table, insert in a transaction, query, and handle a
// constraint error.
//
//	go run ./examples/quickstart -dsn 'http://127.0.0.1:8080?codec=direct'
//	go run ./examples/quickstart -dsn 'ws://127.0.0.1:8080?codec=protobuf'
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gohrana/libsql"
	// The baseline codec, linked only where imported: make demo runs the
	// quickstart with codec=direct (the default), protobuf and gojson, over
	// http:// and ws:// DSNs.
	_ "github.com/gohrana/libsql/codec/gojson"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080 or libsql://db.example.com?authToken=...")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("quickstart: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn); err != nil {
		log.Fatal("quickstart: ", err)
	}
}

func run(dsn string) error {
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}

	// A script with several statements runs as one Exec.
	if _, err := db.ExecContext(ctx, `
		DROP TABLE IF EXISTS quickstart_users;
		CREATE TABLE quickstart_users (
			id      INTEGER PRIMARY KEY,
			email   TEXT NOT NULL UNIQUE,
			score   REAL,
			avatar  BLOB,
			created DATETIME NOT NULL
		);`); err != nil {
		return fmt.Errorf("create table: %w", err)
	}

	// Insert in a transaction with a reused prepared statement.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO quickstart_users (email, score, avatar, created) VALUES (?, ?, ?, ?)")
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i, email := range []string{"ada@example.com", "grace@example.com", "edsger@example.com"} {
		if _, err := ins.ExecContext(ctx, email, 90.5+float64(i), []byte{0xca, 0xfe, byte(i)}, now); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("insert %s: %w", email, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}

	// Named parameters.
	res, err := db.ExecContext(ctx, "UPDATE quickstart_users SET score = score + :bonus WHERE email = :email",
		sql.Named("bonus", 1.5), sql.Named("email", "ada@example.com"))
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	fmt.Printf("updated %d row(s)\n", n)

	// A UNIQUE violation is a typed, classified error.
	_, err = db.ExecContext(ctx, "INSERT INTO quickstart_users (email, created) VALUES (?, ?)", "ada@example.com", now)
	var lerr *libsql.Error
	if errors.Is(err, libsql.ErrConstraint) && errors.As(err, &lerr) {
		fmt.Printf("duplicate rejected: code %s\n", lerr.Code)
	} else {
		return fmt.Errorf("expected a constraint error, got %v", err)
	}

	rows, err := db.QueryContext(ctx, "SELECT id, email, score, avatar, created FROM quickstart_users ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id      int64
			email   string
			score   float64
			avatar  []byte
			created time.Time
		)
		if err := rows.Scan(&id, &email, &score, &avatar, &created); err != nil {
			return err
		}
		fmt.Printf("%d %-20s %5.1f %x %s\n", id, email, score, avatar, created.Format(time.RFC3339))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "DROP TABLE quickstart_users")
	return err
}
