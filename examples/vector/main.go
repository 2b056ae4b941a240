// Command vector keeps embeddings in a libSQL vector column and finds
// nearest neighbours through a vector index: an F32_BLOB(4) column,
// CREATE INDEX ... (libsql_vector_idx(embedding)), and vector_top_k,
// whose candidates are ranked by vector_distance_cos. The embeddings are
// libsql.Vector32 values, which the driver sends as libSQL's FLOAT32
// blobs and scans back.
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'ws://127.0.0.1:8080?codec=protobuf'
//
// The embeddings are made up, four numbers per fruit: how sweet, sour,
// crunchy and juicy it is. It drops and recreates its own table
// (vector_fruits) on every run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/gohrana/libsql"
	// Makes codec=gojson available in the DSN; without it only the default
	// codec=direct is.
	_ "github.com/gohrana/libsql/codec/gojson"
)

// Dims is the number of elements of every embedding, the n of the
// column's F32_BLOB(n).
const Dims = 4

const schema = `
DROP TABLE IF EXISTS vector_fruits;
CREATE TABLE vector_fruits (
	id        INTEGER PRIMARY KEY,
	name      TEXT NOT NULL UNIQUE,
	embedding F32_BLOB(4) NOT NULL
);
CREATE INDEX vector_fruits_idx ON vector_fruits (libsql_vector_idx(embedding));`

// Fruit is a row of vector_fruits.
type Fruit struct {
	Name      string
	Embedding libsql.Vector32 // sweet, sour, crunchy, juicy
}

// Fruits are the rows run inserts.
var Fruits = []Fruit{
	{"apple", libsql.Vector32{0.7, 0.3, 0.9, 0.5}},
	{"banana", libsql.Vector32{0.9, 0.1, 0.1, 0.2}},
	{"carrot", libsql.Vector32{0.3, 0, 1, 0.3}},
	{"grape", libsql.Vector32{0.8, 0.3, 0.3, 0.9}},
	{"lemon", libsql.Vector32{0.1, 1, 0.2, 0.8}},
	{"lime", libsql.Vector32{0.2, 0.9, 0.2, 0.7}},
	{"orange", libsql.Vector32{0.6, 0.6, 0.1, 1}},
}

// Reset drops vector_fruits and creates it again, empty, with its index.
func Reset(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, schema)
	return err
}

// Add inserts fruits in one transaction, through one prepared statement;
// the index takes in each embedding as it is inserted.
func Add(ctx context.Context, db *sql.DB, fruits []Fruit) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO vector_fruits (name, embedding) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, f := range fruits {
		if _, err := stmt.ExecContext(ctx, f.Name, f.Embedding); err != nil {
			return fmt.Errorf("insert %s: %w", f.Name, err)
		}
	}
	return tx.Commit()
}

// Neighbour is a fruit found near a query, with its cosine distance from
// it (0 for the same direction, 2 for the opposite one).
type Neighbour struct {
	Name     string
	Distance float64
}

// Nearest returns the k fruits whose embeddings are nearest to query, the
// nearest first. vector_top_k looks them up in the index and gives their
// rowids; the join fetches their rows, and vector_distance_cos orders them.
func Nearest(ctx context.Context, db *sql.DB, query libsql.Vector32, k int) ([]Neighbour, error) {
	rows, err := db.QueryContext(ctx, `
SELECT f.name, vector_distance_cos(f.embedding, ?1) AS distance
FROM vector_top_k('vector_fruits_idx', ?1, ?2) AS top
JOIN vector_fruits AS f ON f.rowid = top.id
ORDER BY distance, f.name`, query, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Neighbour
	for rows.Next() {
		var n Neighbour
		if err := rows.Scan(&n.Name, &n.Distance); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Embedding returns the embedding of the fruit called name, scanned from
// its blob; the error is sql.ErrNoRows if there is none.
func Embedding(ctx context.Context, db *sql.DB, name string) (libsql.Vector32, error) {
	var e libsql.Vector32
	err := db.QueryRowContext(ctx, "SELECT embedding FROM vector_fruits WHERE name = ?", name).Scan(&e)
	return e, err
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("vector: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("vector: ", err)
	}
}

// run is the whole example; it writes what it finds to w.
func run(dsn string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	if err := Reset(ctx, db); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if err := Add(ctx, db, Fruits); err != nil {
		return err
	}

	for _, q := range []struct {
		what  string
		query libsql.Vector32
	}{
		{"sour and juicy", libsql.Vector32{0.1, 0.9, 0.1, 0.9}},
		{"sweet and crunchy", libsql.Vector32{0.9, 0.1, 0.9, 0.2}},
	} {
		near, err := Nearest(ctx, db, q.query, 3)
		if err != nil {
			return fmt.Errorf("nearest to %s: %w", q.what, err)
		}
		found := make([]string, len(near))
		for i, n := range near {
			found[i] = fmt.Sprintf("%s (%.3f)", n.Name, n.Distance)
		}
		fmt.Fprintf(w, "%s %v: %s\n", q.what, q.query, strings.Join(found, ", "))
	}

	lime, err := Embedding(ctx, db, "lime")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "lime is stored as %v\n", lime)
	return nil
}
