package itest

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	_ "modernc.org/sqlite" // registers "sqlite", which file: DSNs go to
)

// TestFileDSN: a file: DSN opened with the libsql driver runs on a local
// SQLite file through the registered "sqlite" driver, as libsql-client-go
// does, so that the same code runs locally and against sqld.
func TestFileDSN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "local.db")
	db, err := sql.Open("libsql", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	mustExec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(t, db, "INSERT INTO t (v) VALUES (?), (?)", "a", "b")
	require.EqualValues(t, 2, countRows(t, db, "t"))

	// The file really holds the data: another driver sees it.
	direct, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer direct.Close()
	require.EqualValues(t, 2, countRows(t, direct, "t"))
}
