// Package exampletest runs the tool examples' tests (examples/*, modules of
// their own) once per transport and codec against a running sqld:
//
//	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) { ... })
//
// or, with the example's database opened and prepared for each variant,
//
//	exampletest.ForEachDB(t, open, f, Reset, seed)
//
// and checks what an example's program prints (CheckRun, CheckOutput) and
// what a migration left in a table (CheckRows).
//
// The server is the one $LIBSQL_EXAMPLE_URL names (http://host:port);
// scripts/examples.sh (make examples) starts one and sets it. Without it
// the test is skipped.
package exampletest

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os"
	"testing"

	"github.com/gohrana/libsql/internal/testmatrix"
)

// URLEnv names the sqld the example tests run against.
const URLEnv = "LIBSQL_EXAMPLE_URL"

// ForEachDSN runs f as a subtest per variant of testmatrix.All (named as
// the integration tests name them: "direct", ..., "ws_protobuf"), with the
// variant's DSN of $LIBSQL_EXAMPLE_URL. The subtests run one after the
// other, since they share the example's tables.
func ForEachDSN(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	base := os.Getenv(URLEnv)
	if base == "" {
		t.Skipf("%s is not set: set it to a running sqld (e.g. http://127.0.0.1:8080), or run make examples", URLEnv)
	}
	for _, variant := range testmatrix.All() {
		t.Run(variant.Name, func(t *testing.T) {
			t.Helper() // so that a helper's f (CheckRun's) reports at its caller
			f(t, variant.DSN(base))
		})
	}
}

// ForEachDB runs f once per variant (ForEachDSN) on the example's
// database: open opens it with the variant's DSN (it is closed when the
// subtest ends) and the setup steps prepare it, in order (drop and create
// the tables, insert the rows). The steps and f run under one context.
func ForEachDB[DB io.Closer](t *testing.T, open func(dsn string) (DB, error), f func(t *testing.T, ctx context.Context, db DB), setup ...func(ctx context.Context, db DB) error) {
	t.Helper()
	ForEachDSN(t, func(t *testing.T, dsn string) {
		t.Helper() // a failure to set up is reported at the caller
		ctx := context.Background()
		db, err := open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for _, step := range setup {
			if err := step(ctx, db); err != nil {
				t.Fatalf("setup: %v", err)
			}
		}
		f(t, ctx, db)
	})
}

// CheckRun is an example's whole TestRun: it runs the program's run function
// once per variant (ForEachDSN) and checks all it prints (CheckOutput).
func CheckRun(t *testing.T, want string, run func(dsn string, w io.Writer) error) {
	t.Helper()
	ForEachDSN(t, func(t *testing.T, dsn string) {
		t.Helper() // a failure is reported at the caller of CheckRun
		CheckOutput(t, want, func(w io.Writer) error { return run(dsn, w) })
	})
}

// CheckOutput runs run with a buffer for its output and fails t if run
// fails or prints anything but want. It is CheckRun for one variant, for
// the examples whose subtests prepare the database or a file first.
func CheckOutput(t *testing.T, want string, run func(w io.Writer) error) {
	t.Helper()
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", &out, want)
	}
}

// CheckRows fails t unless table holds want rows or, for a negative want,
// does not exist: a migration example's check after each of its steps,
// which step names in the messages.
func CheckRows(t *testing.T, ctx context.Context, db *sql.DB, step, table string, want int) {
	t.Helper()
	var n int
	switch err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); {
	case want < 0 && err == nil:
		t.Errorf("%s: %s exists", step, table)
	case want >= 0 && err != nil:
		t.Errorf("%s: %v", step, err)
	case want >= 0 && n != want:
		t.Errorf("%s: %d rows in %s, want %d", step, n, table, want)
	}
}
