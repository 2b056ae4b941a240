package embedded_test

// sqld processes of the tests' own (internal/sqldproc): the binary of
// scripts/sqld.sh or $LIBSQL_EMBEDDED_SQLD, killed with the test.

import (
	"database/sql"
	"testing"

	"github.com/gohrana/libsql/internal/sqldproc"
)

// startSqld starts a sqld of the test's own with the extra flags args.
func startSqld(t testing.TB, args ...string) *sqldproc.Server {
	t.Helper()
	return startSqldWith(t, sqldproc.Config{Args: args})
}

// startPrimary starts a sqld of the test's own with the extra flags args
// and opens it directly, as the primary the test's replicas follow.
func startPrimary(t testing.TB, args ...string) (*sqldproc.Server, *sql.DB) {
	t.Helper()
	p := startSqld(t, args...)
	return p, primaryDB(t, p.URL())
}

// startSqldWith starts a sqld of the test's own as cfg says.
func startSqldWith(t testing.TB, cfg sqldproc.Config) *sqldproc.Server {
	t.Helper()
	cfg.Bin = sqldproc.Binary(t, "LIBSQL_EMBEDDED_SQLD")
	return sqldproc.StartTest(t, cfg)
}

// restartSqld starts a killed server again on its port, with its data.
func restartSqld(t testing.TB, p *sqldproc.Server) {
	t.Helper()
	if err := p.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
}
