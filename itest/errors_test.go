package itest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/gormerr"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// errorClass is one errors.Is target of the driver, with its name.
type errorClass struct {
	name string
	err  error
}

// errorClasses are the errors.Is targets of the driver.
var errorClasses = []errorClass{
	{"ErrConstraint", libsql.ErrConstraint},
	{"ErrUniqueViolation", libsql.ErrUniqueViolation},
	{"ErrForeignKeyViolation", libsql.ErrForeignKeyViolation},
	{"ErrNotNullViolation", libsql.ErrNotNullViolation},
	{"ErrCheckViolation", libsql.ErrCheckViolation},
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
// classes want (nil entries, or none, for no class), and returns it.
func requireClass(t *testing.T, err error, want ...error) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error in the chain, got %T: %v", err, err)
	for _, c := range errorClasses {
		require.Equal(t, slices.Contains(want, c.err), errors.Is(err, c.err),
			"errors.Is(err, %s) for %v (code %q, HTTP %d)", c.name, err, le.Code, le.HTTPStatus)
	}
	return le
}

// TestStatementErrors checks errors that the server reports for one
// statement: their class, code and message.
func TestStatementErrors(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
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
			class   error  // the class it matches, nil for none
			kind    error  // for a constraint, the kind of violation it also matches
			code    string // exact code; "" to skip
			message string // substring of the message
		}{
			{"unique_violation", "INSERT INTO " + table + " (u) VALUES (?)", []any{"taken"},
				libsql.ErrConstraint, libsql.ErrUniqueViolation, "SQLITE_CONSTRAINT", "UNIQUE"},
			{"primary_key_violation", "INSERT INTO " + table + " (id) VALUES (1)", nil,
				libsql.ErrConstraint, libsql.ErrUniqueViolation, "SQLITE_CONSTRAINT", "UNIQUE"},
			{"not_null_violation", "INSERT INTO " + table + " (nn) VALUES (NULL)", nil,
				libsql.ErrConstraint, libsql.ErrNotNullViolation, "SQLITE_CONSTRAINT", "NOT NULL"},
			{"check_violation", "INSERT INTO " + table + " (ck) VALUES (-1)", nil,
				libsql.ErrConstraint, libsql.ErrCheckViolation, "SQLITE_CONSTRAINT", "CHECK"},
			{"trigger_raise_abort", "INSERT INTO " + trigTable + " (v) VALUES (-5)", nil,
				libsql.ErrConstraint, nil, "SQLITE_CONSTRAINT", "negative values are not allowed"},
			{"syntax_error", "SELEC 1", nil,
				libsql.ErrSyntax, nil, "SQL_PARSE_ERROR", "syntax"},
			{"incomplete_statement", "SELECT * FROM", nil,
				libsql.ErrSyntax, nil, "SQL_PARSE_ERROR", ""},
			{"empty_statement", "", nil,
				libsql.ErrSyntax, nil, "SQL_NO_STATEMENT", ""},
			{"no_such_column", "SELECT nosuchcol FROM " + table, nil,
				libsql.ErrSyntax, nil, "SQL_INPUT_ERROR", "no such column"},
			{"no_such_table", "SELECT * FROM no_such_table_anywhere", nil,
				nil, nil, "", "no such table"},
			{"no_such_table_in_insert", "INSERT INTO no_such_table_anywhere VALUES (1)", nil,
				nil, nil, "", "no such table"},
			{"runtime_error_in_query", "SELECT abs(?)", []any{int64(-9223372036854775808)},
				nil, nil, "", "integer overflow"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := db.ExecContext(t.Context(), tc.sql, tc.args...)
				le := requireClass(t, err, tc.class, tc.kind)
				if tc.code != "" {
					require.Equal(t, tc.code, le.Code, "code of %v", err)
					require.Contains(t, err.Error(), tc.code, "the message names the code")
				}
				require.NotEmpty(t, le.Code, "the server always sends a code")
				require.Contains(t, le.Message, tc.message)
				require.Zero(t, le.HTTPStatus, "a statement error is not an HTTP error")
				require.NotErrorIs(t, le, libsql.ErrTxLost)
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
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrUniqueViolation)
		})
		t.Run("invalid_utf8_text_in_result", func(t *testing.T) {
			// sqld cannot put invalid UTF-8 into its answer and fails the
			// whole request: with HTTP 500, or over WebSocket in a message.
			var s string
			err := db.QueryRowContext(t.Context(), "SELECT CAST(x'ff' AS TEXT)").Scan(&s)
			le := requireClass(t, err, nil)
			require.Equal(t, httpOnly(variant, 500), le.HTTPStatus)
			if variant.WS() {
				// Over WebSocket sqld 0.24.32 closes the socket instead.
				require.Contains(t, err.Error(), "the server closed the connection")
				return
			}
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
	for _, variant := range variants {
		t.Run(variant.Name, func(t *testing.T) {
			t.Run("wrong_port", func(t *testing.T) {
				addr := closedAddr(t)
				db, err := sql.Open("libsql", variant.DSN("http://"+addr))
				require.NoError(t, err, "sql.Open does not connect")
				defer db.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				err = db.PingContext(ctx)
				le := requireClass(t, err, nil)
				require.True(t, errors.Is(err, syscall.ECONNREFUSED), "want connection refused, got %v", err)
				require.Contains(t, err.Error(), addr, "the message says where it tried to connect")
				require.True(t, le.SafeToRetry(), "a refused connection certainly had no effect")
				require.False(t, errors.Is(err, context.DeadlineExceeded), "fails fast, not by timing out")

				_, err = db.ExecContext(ctx, "CREATE TABLE never (x)")
				require.True(t, errors.Is(err, syscall.ECONNREFUSED), "exec: want connection refused, got %v", err)
			})
			t.Run("unknown_dsn_parameter", func(t *testing.T) {
				_, err := sql.Open("libsql", dsn(variant, "authToken=s3cr3t-token", "frobnicate=1"))
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
				db, err := sql.Open("libsql", variant.DSN(serverURL+"/no/such/prefix", "authToken=s3cr3t-token"))
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
				db, err := sql.Open("libsql", variant.DSN(serverURL+"/"))
				require.NoError(t, err)
				defer db.Close()
				require.NoError(t, db.PingContext(t.Context()), "a trailing slash is harmless")
			})
			t.Run("unsupported_scheme", func(t *testing.T) {
				_, err := sql.Open("libsql", "postgres://127.0.0.1:8080?codec="+variant.Codec)
				var de *libsql.DSNError
				require.ErrorAs(t, err, &de)
				require.Contains(t, err.Error(), "postgres")
			})
		})
	}
}

// requireCodes checks the error's numeric SQLite codes, their JSON form in
// the shape GORM decodes, and GORM's translation of it (gorm: the GORM
// error's name, "" for none).
func requireCodes(t *testing.T, err error, primary, extended int, gorm string) {
	t.Helper()
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "%T: %v", err, err)
	require.Equal(t, primary, le.SQLiteCode(), "SQLiteCode of %v", err)
	require.Equal(t, extended, le.SQLiteExtendedCode(), "SQLiteExtendedCode of %v", err)
	b, merr := json.Marshal(err)
	require.NoError(t, merr)
	m, ok := gormerr.Decode(err)
	require.True(t, ok, "GORM's shape must decode %s", b)
	require.Equal(t, gormerr.Message{Code: primary, ExtendedCode: extended}, m, "decoded from %s", b)
	var named struct{ HranaCode, Message, Error string }
	require.NoError(t, json.Unmarshal(b, &named))
	require.Equal(t, le.Code, named.HranaCode, "the Hrana code in %s", b)
	require.Equal(t, le.Message, named.Message)
	require.Equal(t, err.Error(), named.Error)
	require.Equal(t, gorm, gormerr.Translate(err), "GORM's TranslateError of %s", b)
}

// TestErrorsConstraintKinds provokes each kind of constraint violation on
// a real server, outside a transaction, inside one, and with deferred
// execution (where the driver puts the statement's position and SQL before
// sqld's message), and checks its classes, its numeric SQLite codes and
// what GORM's TranslateError makes of it. sqld sends SQLITE_CONSTRAINT for
// all of them; the kind comes from SQLite's message.
func TestErrorsConstraintKinds(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		parent := freshTable(t, db, "ck_parent", "(id INTEGER PRIMARY KEY)")
		child := freshTable(t, db, "ck_child", "(id INTEGER PRIMARY KEY, pid INTEGER REFERENCES "+parent+" (id),"+
			" u TEXT UNIQUE, nn TEXT NOT NULL DEFAULT 'x', ck INTEGER CHECK (ck >= 0), a INTEGER, b INTEGER,"+
			" CONSTRAINT ck_small CHECK (ck < 100), UNIQUE (a, b))")
		keyed := freshTable(t, db, "ck_keyed", "(k TEXT PRIMARY KEY) WITHOUT ROWID")
		strict := freshTable(t, db, "ck_strict", "(n INTEGER) STRICT")
		mustExec(t, db, "INSERT INTO "+parent+" (id) VALUES (1)")
		mustExec(t, db, "INSERT INTO "+child+" (id, pid, u, a, b) VALUES (1, 1, 'taken', 1, 1)")
		mustExec(t, db, "INSERT INTO "+keyed+" (k) VALUES ('k1')")

		cases := []struct {
			name     string
			sql      string
			kind     error // nil: ErrConstraint alone
			extended int
			gorm     string
		}{
			{"unique_column", "INSERT INTO " + child + " (u) VALUES ('taken')", libsql.ErrUniqueViolation, 2067, "ErrDuplicatedKey"},
			{"unique_pair", "INSERT INTO " + child + " (a, b) VALUES (1, 1)", libsql.ErrUniqueViolation, 2067, "ErrDuplicatedKey"},
			// SQLite's own extended code would be 1555 (PRIMARYKEY); its
			// message is a UNIQUE one, and GORM maps both to a duplicate.
			{"integer_primary_key", "INSERT INTO " + child + " (id) VALUES (1)", libsql.ErrUniqueViolation, 2067, "ErrDuplicatedKey"},
			{"text_primary_key", "INSERT INTO " + keyed + " (k) VALUES ('k1')", libsql.ErrUniqueViolation, 2067, "ErrDuplicatedKey"},
			{"foreign_key_insert", "INSERT INTO " + child + " (pid) VALUES (99)", libsql.ErrForeignKeyViolation, 787, "ErrForeignKeyViolated"},
			{"foreign_key_delete", "DELETE FROM " + parent + " WHERE id = 1", libsql.ErrForeignKeyViolation, 787, "ErrForeignKeyViolated"},
			{"not_null", "INSERT INTO " + child + " (nn) VALUES (NULL)", libsql.ErrNotNullViolation, 1299, ""},
			{"check", "INSERT INTO " + child + " (ck) VALUES (-1)", libsql.ErrCheckViolation, 275, ""},
			{"named_check", "INSERT INTO " + child + " (ck) VALUES (200)", libsql.ErrCheckViolation, 275, ""},
			{"strict_type", "INSERT INTO " + strict + " (n) VALUES ('abc')", nil, 3091, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Run("autocommit", func(t *testing.T) {
					_, err := db.ExecContext(t.Context(), tc.sql)
					requireClass(t, err, libsql.ErrConstraint, tc.kind)
					requireCodes(t, err, 19, tc.extended, tc.gorm)
				})
				t.Run("transaction", func(t *testing.T) {
					tx, err := db.BeginTx(t.Context(), nil)
					require.NoError(t, err)
					defer func() { _ = tx.Rollback() }()
					_, err = tx.ExecContext(t.Context(), tc.sql)
					requireClass(t, err, libsql.ErrConstraint, tc.kind)
					requireCodes(t, err, 19, tc.extended, tc.gorm)
				})
				t.Run("deferred", func(t *testing.T) {
					tx, err := db.BeginTx(libsql.WithDeferredExec(t.Context(), true), nil)
					require.NoError(t, err)
					defer func() { _ = tx.Rollback() }()
					_, err = tx.ExecContext(t.Context(), tc.sql)
					require.NoError(t, err, "queued")
					err = tx.Commit()
					requireClass(t, err, libsql.ErrConstraint, tc.kind, libsql.ErrTxLost)
					require.Contains(t, err.Error(), "deferred statement", "the driver's words come first")
					requireCodes(t, err, 19, tc.extended, tc.gorm)
				})
			})
		}
		t.Run("deferred_foreign_key_at_commit", func(t *testing.T) {
			dparent := freshTable(t, db, "ck_dparent", "(id INTEGER PRIMARY KEY)")
			dchild := freshTable(t, db, "ck_dchild",
				"(pid INTEGER REFERENCES "+dparent+" (id) DEFERRABLE INITIALLY DEFERRED)")
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			_, err = tx.ExecContext(t.Context(), "INSERT INTO "+dchild+" (pid) VALUES (7)")
			require.NoError(t, err, "a deferred foreign key is checked at COMMIT")
			err = tx.Commit()
			// The stream closes with the COMMIT, so the transaction is gone.
			requireClass(t, err, libsql.ErrConstraint, libsql.ErrForeignKeyViolation, libsql.ErrTxLost)
			requireCodes(t, err, 19, 787, "ErrForeignKeyViolated")
			require.Zero(t, countRows(t, db, dchild), "nothing committed")
		})
		t.Run("nothing_applied", func(t *testing.T) {
			require.EqualValues(t, 1, countRows(t, db, parent))
			require.EqualValues(t, 1, countRows(t, db, child))
			require.EqualValues(t, 1, countRows(t, db, keyed))
			require.Zero(t, countRows(t, db, strict))
		})
	})
}

// TestErrorsSQLiteCodes checks the numeric codes of other errors from a
// real server: SQLite's primary code by sqld's name for it (SQLITE_ERROR is
// SQLITE_UNKNOWN or SQL_INPUT_ERROR), and none for what SQLite did not
// report. GORM translates none of them.
func TestErrorsSQLiteCodes(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
		table := freshTable(t, db, "codes", "(id INTEGER PRIMARY KEY)")
		cases := []struct {
			name             string
			sql              string
			code             string
			primary, extends int
		}{
			{"no_such_table", "SELECT * FROM no_such_table_anywhere", "SQLITE_UNKNOWN", 1, 1},
			{"integer_overflow", "SELECT abs(-9223372036854775807 - 1)", "SQLITE_UNKNOWN", 1, 1},
			{"no_such_column", "SELECT nosuchcol FROM " + table, "SQL_INPUT_ERROR", 1, 1},
			{"too_big", "SELECT zeroblob(2000000000)", "SQLITE_TOOBIG", 18, 18},
			{"datatype_mismatch", "INSERT INTO " + table + " (id) VALUES ('abc')", "SQLITE_MISMATCH", 20, 20},
			{"sqld_parser", "SELEC 1", "SQL_PARSE_ERROR", 0, 0},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := db.ExecContext(t.Context(), tc.sql)
				require.Error(t, err)
				var le *libsql.Error
				require.True(t, errors.As(err, &le))
				require.Equal(t, tc.code, le.Code, "%v", err)
				requireCodes(t, err, tc.primary, tc.extends, "")
			})
		}
		t.Run("http_404", func(t *testing.T) {
			bad, err := sql.Open("libsql", variant.DSN(serverURL+"/no/such/prefix"))
			require.NoError(t, err)
			defer bad.Close()
			err = bad.PingContext(t.Context())
			requireClass(t, err, libsql.ErrNotFound)
			requireCodes(t, err, 0, 0, "")
			b, merr := json.Marshal(err)
			require.NoError(t, merr)
			require.Contains(t, string(b), `"HTTPStatus":404`)
		})
	})
}

// TestErrorsJSONHasNoToken: the JSON form of an error holds the message and
// text, which never show the auth token, even where a proxy echoes the
// Authorization header into its error body.
func TestErrorsJSONHasNoToken(t *testing.T) {
	const token = "s3cr3t-json-token-0123456789abcdef"
	bodies := map[string]struct {
		status      int
		contentType string
		body        func(auth string) string
	}{
		"json_error_401":  {401, "application/json", func(a string) string { return `{"error":"token not accepted: ` + a + `"}` }},
		"hrana_error_400": {400, "application/json", func(a string) string { return `{"message":"bad ` + a + `","code":"X_` + a + `"}` }},
		"text_plain_403":  {403, "text/plain", func(a string) string { return "rejected " + a }},
		"garbage_200":     {200, "application/json", func(a string) string { return `{"baton":"` + a + `", "results": [` }},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/v3/pipeline")
		b, ok := bodies[name]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", b.contentType)
		rw.WriteHeader(b.status)
		_, _ = io.WriteString(rw, b.body(r.Header.Get("Authorization")))
	}))
	defer srv.Close()
	for _, variant := range httpVariants {
		for name := range bodies {
			t.Run(variant.Name+"/"+name, func(t *testing.T) {
				db, err := sql.Open("libsql", srv.URL+"/"+name+"?codec="+variant.Codec+"&authToken="+token)
				require.NoError(t, err)
				defer db.Close()
				_, err = db.ExecContext(t.Context(), "SELECT 1")
				require.Error(t, err)
				b, merr := json.Marshal(err)
				require.NoError(t, merr)
				for _, part := range []string{token, token[:12], token[len(token)-12:]} {
					require.NotContains(t, string(b), part, "JSON of the error")
				}
				require.True(t, json.Valid(b))
			})
		}
	}
}
