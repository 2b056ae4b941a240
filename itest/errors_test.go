package itest

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
)

// errorClass is one errors.Is target of the driver, with its name.
type errorClass struct {
	name string
	err  error
}

// errorClasses are the errors.Is targets of the driver.
var errorClasses = []errorClass{
	{"ErrConstraint", libsql.ErrConstraint},
	{"ErrBusy", libsql.ErrBusy},
	{"ErrAuth", libsql.ErrAuth},
	{"ErrPermission", libsql.ErrPermission},
	{"ErrSyntax", libsql.ErrSyntax},
	{"ErrTooManyRequests", libsql.ErrTooManyRequests},
	{"ErrNotFound", libsql.ErrNotFound},
	{"ErrReadOnly", libsql.ErrReadOnly},
	{"ErrTxLost", libsql.ErrTxLost},
	{"ErrTxDone", libsql.ErrTxDone},
}

// requireClass checks that err is a *libsql.Error that matches exactly the
// class want (or none, when want is nil), and returns it.
func requireClass(t *testing.T, err error, want error) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error in the chain, got %T: %v", err, err)
	for _, c := range errorClasses {
		require.Equal(t, c.err == want, errors.Is(err, c.err),
			"errors.Is(err, %s) for %v (code %q, HTTP %d)", c.name, err, le.Code, le.HTTPStatus)
	}
	return le
}

// TestStatementErrors checks errors that the server reports for one
// statement: their class, code and message.
func TestStatementErrors(t *testing.T) {
	forEachCodec(t, func(t *testing.T, db *sql.DB, _ string) {
		table := freshTable(t, db, "errs",
			"(id INTEGER PRIMARY KEY, u TEXT UNIQUE, nn TEXT NOT NULL DEFAULT 'x', ck INTEGER CHECK (ck >= 0))")
		mustExec(t, db, "INSERT INTO "+table+" (id, u) VALUES (1, 'taken')")
		trigTable := scratchName(t, db, "errs_trig")
		mustExec(t, db, "CREATE TABLE "+trigTable+" (v INTEGER);"+
			"CREATE TRIGGER "+trigTable+"_bi BEFORE INSERT ON "+trigTable+
			" WHEN new.v < 0 BEGIN SELECT RAISE(ABORT, 'negative values are not allowed'); END;")

		cases := []struct {
			name    string
			sql     string
			args    []any
			class   error  // the one class it matches, nil for none
			code    string // exact code; "" to skip
			message string // substring of the message
		}{
			{"unique_violation", "INSERT INTO " + table + " (u) VALUES (?)", []any{"taken"},
				libsql.ErrConstraint, "SQLITE_CONSTRAINT", "UNIQUE"},
			{"primary_key_violation", "INSERT INTO " + table + " (id) VALUES (1)", nil,
				libsql.ErrConstraint, "SQLITE_CONSTRAINT", "UNIQUE"},
			{"not_null_violation", "INSERT INTO " + table + " (nn) VALUES (NULL)", nil,
				libsql.ErrConstraint, "SQLITE_CONSTRAINT", "NOT NULL"},
			{"check_violation", "INSERT INTO " + table + " (ck) VALUES (-1)", nil,
				libsql.ErrConstraint, "SQLITE_CONSTRAINT", "CHECK"},
			{"trigger_raise_abort", "INSERT INTO " + trigTable + " (v) VALUES (-5)", nil,
				libsql.ErrConstraint, "SQLITE_CONSTRAINT", "negative values are not allowed"},
			{"syntax_error", "SELEC 1", nil,
				libsql.ErrSyntax, "SQL_PARSE_ERROR", "syntax"},
			{"incomplete_statement", "SELECT * FROM", nil,
				libsql.ErrSyntax, "SQL_PARSE_ERROR", ""},
			{"empty_statement", "", nil,
				libsql.ErrSyntax, "SQL_NO_STATEMENT", ""},
			{"no_such_column", "SELECT nosuchcol FROM " + table, nil,
				libsql.ErrSyntax, "SQL_INPUT_ERROR", "no such column"},
			{"no_such_table", "SELECT * FROM no_such_table_anywhere", nil,
				nil, "", "no such table"},
			{"no_such_table_in_insert", "INSERT INTO no_such_table_anywhere VALUES (1)", nil,
				nil, "", "no such table"},
			{"runtime_error_in_query", "SELECT abs(?)", []any{int64(-9223372036854775808)},
				nil, "", "integer overflow"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := db.ExecContext(t.Context(), tc.sql, tc.args...)
				le := requireClass(t, err, tc.class)
				if tc.code != "" {
					require.Equal(t, tc.code, le.Code, "code of %v", err)
					require.Contains(t, err.Error(), tc.code, "the message names the code")
				}
				require.NotEmpty(t, le.Code, "the server always sends a code")
				require.Contains(t, le.Message, tc.message)
				require.Zero(t, le.HTTPStatus, "a statement error is not an HTTP error")
				require.False(t, le.TxLost)
			})
		}
		t.Run("query_reports_error_too", func(t *testing.T) {
			rows, err := db.QueryContext(t.Context(), "INSERT INTO "+table+" (u) VALUES ('taken') RETURNING id")
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			requireClass(t, err, libsql.ErrConstraint)
		})
		t.Run("invalid_utf8_text_in_result", func(t *testing.T) {
			// sqld cannot put invalid UTF-8 into JSON and fails the whole
			// request with HTTP 500.
			var s string
			err := db.QueryRowContext(t.Context(), "SELECT CAST(x'ff' AS TEXT)").Scan(&s)
			le := requireClass(t, err, nil)
			require.Equal(t, 500, le.HTTPStatus)
			require.Contains(t, le.Message, "utf-8")
		})
		t.Run("nothing_applied_and_pool_works", func(t *testing.T) {
			require.EqualValues(t, 1, countRows(t, db, table))
			require.Zero(t, countRows(t, db, trigTable))
			require.NoError(t, db.PingContext(t.Context()))
		})
	})
}

// TestConnectionErrors checks DSN and connection problems.
func TestConnectionErrors(t *testing.T) {
	for _, codecName := range codecs {
		t.Run(codecName, func(t *testing.T) {
			t.Run("wrong_port", func(t *testing.T) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				addr := l.Addr().String()
				require.NoError(t, l.Close()) // now nothing listens there
				db, err := sql.Open("libsql", "http://"+addr+"?codec="+codecName)
				require.NoError(t, err, "sql.Open does not connect")
				defer db.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				err = db.PingContext(ctx)
				le := requireClass(t, err, nil)
				require.True(t, errors.Is(err, syscall.ECONNREFUSED), "want connection refused, got %v", err)
				require.Contains(t, err.Error(), addr, "the message says where it tried to connect")
				require.True(t, le.Safe, "a refused connection certainly had no effect")
				require.False(t, errors.Is(err, context.DeadlineExceeded), "fails fast, not by timing out")

				_, err = db.ExecContext(ctx, "CREATE TABLE never (x)")
				require.True(t, errors.Is(err, syscall.ECONNREFUSED), "exec: want connection refused, got %v", err)
			})
			t.Run("unknown_dsn_parameter", func(t *testing.T) {
				_, err := sql.Open("libsql", dsn(codecName, "authToken=s3cr3t-token", "frobnicate=1"))
				require.Error(t, err)
				var de *libsql.DSNError
				require.True(t, errors.As(err, &de), "want *libsql.DSNError, got %T", err)
				require.Contains(t, err.Error(), "frobnicate", "the error names the parameter")
				require.NotContains(t, err.Error(), "s3cr3t", "the error never shows the token")
			})
			t.Run("unknown_codec", func(t *testing.T) {
				_, err := sql.Open("libsql", serverURL+"?codec=nosuchcodec")
				require.Error(t, err)
				require.Contains(t, err.Error(), "nosuchcodec")
			})
			t.Run("bad_path_prefix_is_not_found", func(t *testing.T) {
				db, err := sql.Open("libsql", serverURL+"/no/such/prefix?codec="+codecName+"&authToken=s3cr3t-token")
				require.NoError(t, err)
				defer db.Close()
				err = db.PingContext(t.Context())
				le := requireClass(t, err, libsql.ErrNotFound)
				require.Equal(t, 404, le.HTTPStatus)
				require.NotContains(t, err.Error(), "s3cr3t", "the error never shows the token")
				_, err = db.ExecContext(t.Context(), "SELECT 1")
				requireClass(t, err, libsql.ErrNotFound)
			})
			t.Run("right_prefix_works", func(t *testing.T) {
				db, err := sql.Open("libsql", serverURL+"/?codec="+codecName)
				require.NoError(t, err)
				defer db.Close()
				require.NoError(t, db.PingContext(t.Context()), "a trailing slash is harmless")
			})
			t.Run("unsupported_scheme", func(t *testing.T) {
				_, err := sql.Open("libsql", "ws://127.0.0.1:8080?codec="+codecName)
				require.Error(t, err)
				require.Contains(t, err.Error(), "WebSocket")
			})
		})
	}
}
