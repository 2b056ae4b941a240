package itest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// TestPrepareChecks: on every transport and codec, Prepare of SQL that
// cannot run fails with the server's error, as with mattn/go-sqlite3; a
// good statement prepares, reports its positional parameters to
// database/sql, and runs again and again.
func TestPrepareChecks(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, bad := range []string{"invalid sql", "SELECT * FROM no_such_table_prepare"} {
			_, err := db.PrepareContext(ctx, bad)
			le := requireLibsqlError(t, err)
			require.NotEmpty(t, le.Code, "%s: the server's code", bad)
			require.NotContains(t, le.Message, "libsql:", "%s: Message is the server's", bad)
		}
		_, err := db.PrepareContext(ctx, "invalid sql")
		require.True(t, errors.Is(err, libsql.ErrSyntax), "invalid sql: %v, want ErrSyntax", err)

		table := freshTable(t, db, "prep", "(a INTEGER, b TEXT)")
		st, err := db.PrepareContext(ctx, "INSERT INTO "+table+" VALUES (?, ?)")
		require.NoError(t, err)
		defer st.Close()
		for i := range 3 {
			_, err := st.ExecContext(ctx, i, "x")
			require.NoError(t, err)
		}
		_, err = st.ExecContext(ctx, 1)
		require.Error(t, err, "one argument for two parameters")
		require.EqualValues(t, 3, countRows(t, db, table))

		c, err := db.Conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Raw(func(dc any) error {
			for q, want := range map[string]int{
				"SELECT a FROM " + table + " WHERE a = ? OR b = ?2": 2,
				"SELECT a FROM " + table + " WHERE a = :a":          -1,
			} {
				s, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
				if err != nil {
					return err
				}
				require.Equal(t, want, s.NumInput(), q)
				s.Close()
			}
			return nil
		}))
	})
}
