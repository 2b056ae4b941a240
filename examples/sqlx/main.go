// Command sqlx shows github.com/jmoiron/sqlx on the libsql driver: named
// statements (NamedExec, NamedQuery), IN lists expanded by sqlx.In, and
// rows scanned into structs with Get and Select. sqlx.Open takes the driver
// name "libsql" and a libsql DSN; sqlx writes its bind variables as "?",
// which is what SQLite expects.
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'http://127.0.0.1:8080?codec=gojson'
//
// It drops and recreates its own table (sqlx_people) on every run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver
	// Makes codec=gojson available in the DSN; without it only the default
	// codec=direct is.
	_ "github.com/gohrana/libsql/codec/gojson"
	"github.com/jmoiron/sqlx"
)

// Person is a row of sqlx_people; the db tags name its columns.
type Person struct {
	ID    int64  `db:"id"`
	Name  string `db:"name"`
	Email string `db:"email"`
	Age   int    `db:"age"`
}

const schema = `
DROP TABLE IF EXISTS sqlx_people;
CREATE TABLE sqlx_people (
	id    INTEGER PRIMARY KEY,
	name  TEXT NOT NULL,
	email TEXT NOT NULL UNIQUE,
	age   INTEGER NOT NULL
);`

// Reset drops sqlx_people and creates it again, empty.
func Reset(ctx context.Context, db *sqlx.DB) error {
	_, err := db.ExecContext(ctx, schema)
	return err
}

// AddPeople inserts people with one NamedExec: given a slice, sqlx writes a
// single INSERT with a row of values for each element.
func AddPeople(ctx context.Context, db *sqlx.DB, people []Person) error {
	_, err := db.NamedExecContext(ctx,
		`INSERT INTO sqlx_people (name, email, age) VALUES (:name, :email, :age)`, people)
	return err
}

// OlderThan returns the people older than age, by age, through NamedQuery
// and StructScan.
func OlderThan(ctx context.Context, db *sqlx.DB, age int) ([]Person, error) {
	rows, err := db.NamedQueryContext(ctx,
		`SELECT * FROM sqlx_people WHERE age > :age ORDER BY age`, map[string]any{"age": age})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var people []Person
	for rows.Next() {
		var p Person
		if err := rows.StructScan(&p); err != nil {
			return nil, err
		}
		people = append(people, p)
	}
	return people, rows.Err()
}

// ByEmails returns the people with the given emails, by name: sqlx.In
// expands the "?" that stands for the slice into one per element.
func ByEmails(ctx context.Context, db *sqlx.DB, emails []string) ([]Person, error) {
	query, args, err := sqlx.In(`SELECT * FROM sqlx_people WHERE email IN (?) ORDER BY name`, emails)
	if err != nil {
		return nil, err
	}
	var people []Person
	err = db.SelectContext(ctx, &people, db.Rebind(query), args...)
	return people, err
}

// ByEmail returns the person with an email; the error is sql.ErrNoRows if
// there is none.
func ByEmail(ctx context.Context, db *sqlx.DB, email string) (Person, error) {
	var p Person
	err := db.GetContext(ctx, &p, `SELECT * FROM sqlx_people WHERE email = ?`, email)
	return p, err
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("sqlx: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("sqlx: ", err)
	}
}

// run is the whole example; it writes what it finds to w.
func run(dsn string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, err := sqlx.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	if err := Reset(ctx, db); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if err := AddPeople(ctx, db, []Person{
		{Name: "Ada Lovelace", Email: "ada@example.com", Age: 36},
		{Name: "Grace Hopper", Email: "grace@example.com", Age: 85},
		{Name: "Alan Turing", Email: "alan@example.com", Age: 41},
	}); err != nil {
		return fmt.Errorf("insert: %w", err)
	}

	older, err := OlderThan(ctx, db, 40)
	if err != nil {
		return err
	}
	for _, p := range older {
		fmt.Fprintf(w, "older than 40: %s (%d)\n", p.Name, p.Age)
	}
	some, err := ByEmails(ctx, db, []string{"ada@example.com", "alan@example.com"})
	if err != nil {
		return err
	}
	for _, p := range some {
		fmt.Fprintf(w, "by email: %s\n", p.Name)
	}
	grace, err := ByEmail(ctx, db, "grace@example.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "grace@example.com is %s, id %d\n", grace.Name, grace.ID)
	return nil
}
