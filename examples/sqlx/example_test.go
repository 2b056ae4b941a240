package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/exampletest"
	"github.com/jmoiron/sqlx"
)

// people is what the tests insert.
var people = []Person{
	{Name: "Ada Lovelace", Email: "ada@example.com", Age: 36},
	{Name: "Grace Hopper", Email: "grace@example.com", Age: 85},
	{Name: "Alan Turing", Email: "alan@example.com", Age: 41},
}

// forEachVariantDB runs f once per transport and codec
// (exampletest.ForEachDB), with the database opened and the people
// inserted into a fresh table.
func forEachVariantDB(t *testing.T, f func(t *testing.T, ctx context.Context, db *sqlx.DB)) {
	t.Helper()
	open := func(dsn string) (*sqlx.DB, error) { return sqlx.Open("libsql", dsn) }
	exampletest.ForEachDB(t, open, f, Reset, func(ctx context.Context, db *sqlx.DB) error {
		return AddPeople(ctx, db, people)
	})
}

// checkNames checks the answer of a query for people: no error, and the
// people named want, in that order. call, the query as written, begins
// the message.
func checkNames(t *testing.T, call string, got []Person, err error, want []string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("%s = %q, want %q", call, names, want)
	}
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `older than 40: Alan Turing (41)
older than 40: Grace Hopper (85)
by email: Ada Lovelace
by email: Alan Turing
grace@example.com is Grace Hopper, id 2
`
	exampletest.CheckRun(t, want, run)
}

// TestNamedExec reads back the rows one NamedExec inserted from a slice,
// and checks that a unique violation is a libsql.ErrConstraint.
func TestNamedExec(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sqlx.DB) {
		var got []Person
		if err := db.SelectContext(ctx, &got, `SELECT * FROM sqlx_people ORDER BY id`); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(people) {
			t.Fatalf("%d rows, want %d", len(got), len(people))
		}
		for i, p := range got {
			want := people[i]
			want.ID = int64(i + 1)
			if p != want {
				t.Errorf("row %d = %+v, want %+v", i, p, want)
			}
		}

		// A single struct binds the same way; the driver's error classes
		// come through sqlx unchanged.
		dup := Person{Name: "Ada again", Email: "ada@example.com", Age: 1}
		_, err := db.NamedExecContext(ctx, `INSERT INTO sqlx_people (name, email, age) VALUES (:name, :email, :age)`, dup)
		if !errors.Is(err, libsql.ErrConstraint) {
			t.Errorf("duplicate email: error %v, want libsql.ErrConstraint", err)
		}
	})
}

// TestNamedQuery runs OlderThan, a NamedQuery with a map argument.
func TestNamedQuery(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sqlx.DB) {
		tests := []struct {
			age  int
			want []string
		}{
			{0, []string{"Ada Lovelace", "Alan Turing", "Grace Hopper"}},
			{40, []string{"Alan Turing", "Grace Hopper"}},
			{85, nil},
		}
		for _, tt := range tests {
			got, err := OlderThan(ctx, db, tt.age)
			checkNames(t, fmt.Sprintf("OlderThan(%d)", tt.age), got, err, tt.want)
		}
	})
}

// TestIn runs ByEmails, an IN list that sqlx.In expands.
func TestIn(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sqlx.DB) {
		tests := []struct {
			emails []string
			want   []string
		}{
			{[]string{"grace@example.com"}, []string{"Grace Hopper"}},
			{[]string{"grace@example.com", "ada@example.com", "nobody@example.com"}, []string{"Ada Lovelace", "Grace Hopper"}},
			{[]string{"nobody@example.com"}, nil},
		}
		for _, tt := range tests {
			got, err := ByEmails(ctx, db, tt.emails)
			checkNames(t, fmt.Sprintf("ByEmails(%q)", tt.emails), got, err, tt.want)
		}
	})
}

// TestGet runs ByEmail: one row into a struct, or sql.ErrNoRows.
func TestGet(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *sqlx.DB) {
		got, err := ByEmail(ctx, db, "alan@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if want := (Person{ID: 3, Name: "Alan Turing", Email: "alan@example.com", Age: 41}); got != want {
			t.Errorf("ByEmail = %+v, want %+v", got, want)
		}
		if _, err := ByEmail(ctx, db, "nobody@example.com"); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("ByEmail(nobody): error %v, want sql.ErrNoRows", err)
		}
	})
}
