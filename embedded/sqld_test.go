package embedded_test

// sqld processes of the tests' own (internal/sqldproc): the binary of
// scripts/sqld.sh or $LIBSQL_EMBEDDED_SQLD, killed with the test.

import (
	"database/sql"
	"testing"

	"github.com/gohrana/libsql/internal/sqldproc"
)

// sqlds starts the tests' sqld processes: sqlds.Start(t, flags...), or
// sqlds.StartWith(t, cfg).
var sqlds = sqldproc.Starter{Env: "LIBSQL_EMBEDDED_SQLD"}

// startPrimary starts a sqld of the test's own with the extra flags args
// and opens it directly, as the primary the test's replicas follow.
func startPrimary(t testing.TB, args ...string) (*sqldproc.Server, *sql.DB) {
	t.Helper()
	p := sqlds.Start(t, args...)
	return p, primaryDB(t, p.URL())
}

// restartSqld starts a killed server again on its port, with its data.
func restartSqld(t testing.TB, p *sqldproc.Server) {
	t.Helper()
	if err := p.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
}
