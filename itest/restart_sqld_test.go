package itest

// sqld as a child process of the test binary (internal/sqldproc), for the
// fault, restart and expiry tests: a server of one's own starts in well
// under a second, can be killed (SIGKILL) or stopped (SIGTERM) and started
// again on the same port with the same data, and holds no write lock
// another test could want.
//
// The binary is the one scripts/sqld.sh caches (the same one the local
// Docker image is built from), or $LIBSQL_ITEST_SQLD.

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/sqldproc"
)

// sqlds starts the tests' sqld processes (sqlds.Start(t, flags...), or
// sqlds.StartWith(t, cfg)), given as long to start as the harness's
// containers.
var sqlds = sqldproc.Starter{Env: "LIBSQL_ITEST_SQLD", StartTimeout: startTimeout}

// privateTable creates a table on a server of the test's own (sqlds.Start),
// without freshTable's DROP at the end: the server and its data go away
// with the test, and a DROP could wait seconds for a write lock that a
// lost transaction's stream still holds on the server.
func privateTable(t testing.TB, db *sql.DB, name, schema string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := db.ExecContext(ctx, "CREATE TABLE "+name+" "+schema)
	require.NoError(t, err, "create table %s", name)
	return name
}
