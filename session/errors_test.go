package session_test

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/session"
)

func TestErrorClasses(t *testing.T) {
	tests := []struct {
		err  *session.Error
		is   []error
		text string
	}{
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "UNIQUE constraint failed: t.a"}, []error{session.ErrConstraint, session.ErrUniqueViolation}, "libsql: UNIQUE constraint failed: t.a (SQLITE_CONSTRAINT)"},
		// The kinds of constraint violation, from sqld's messages.
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.a, t.b"}, []error{session.ErrConstraint, session.ErrUniqueViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: index 'ix'"}, []error{session.ErrConstraint, session.ErrUniqueViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: FOREIGN KEY constraint failed"}, []error{session.ErrConstraint, session.ErrForeignKeyViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: NOT NULL constraint failed: t.nn"}, []error{session.ErrConstraint, session.ErrNotNullViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: CHECK constraint failed: ck >= 0"}, []error{session.ErrConstraint, session.ErrCheckViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: cannot store TEXT value in INTEGER column s.a"}, []error{session.ErrConstraint}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: negative values are not allowed"}, []error{session.ErrConstraint}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT"}, []error{session.ErrConstraint}, ""},
		// The driver's words before sqld's message, with SQL that quotes
		// another message: what follows the last "SQLite error: " counts.
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "deferred statement #3 (INSERT INTO t VALUES ('SQLite error: CHECK constraint failed: x')) failed: SQLite error: UNIQUE constraint failed: t.u"},
			[]error{session.ErrConstraint, session.ErrUniqueViolation}, ""},
		{&session.Error{Code: "SQLITE_CONSTRAINT", TxLost: true, Message: "the outcome of COMMIT is unknown: SQLite error: FOREIGN KEY constraint failed"},
			[]error{session.ErrConstraint, session.ErrForeignKeyViolation, session.ErrTxLost}, ""},
		// The words alone are not a constraint violation.
		{&session.Error{Code: "SQLITE_UNKNOWN", Message: "SQLite error: UNIQUE constraint failed: t.a"}, nil, ""},
		{&session.Error{Message: "UNIQUE constraint failed: t.a"}, nil, ""},
		{&session.Error{Code: "SQLITE_BUSY"}, []error{session.ErrBusy}, ""},
		{&session.Error{Code: "SQLITE_LOCKED"}, []error{session.ErrBusy}, ""},
		{&session.Error{Code: "TRANSACTION_BUSY"}, []error{session.ErrBusy}, ""},
		{&session.Error{HTTPStatus: 401, Message: "bad token"}, []error{session.ErrAuth}, "libsql: HTTP Unauthorized: bad token"},
		{&session.Error{Code: "AUTH_JWT_INVALID", Message: "The JWT is invalid"}, []error{session.ErrAuth}, "libsql: The JWT is invalid (AUTH_JWT_INVALID)"},
		{&session.Error{HTTPStatus: 403}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQLITE_AUTH"}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQLITE_PERM"}, []error{session.ErrPermission}, ""},
		{&session.Error{Code: "SQL_PARSE_ERROR"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_INPUT_ERROR"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_NO_STATEMENT"}, []error{session.ErrSyntax}, ""},
		{&session.Error{Code: "SQL_MANY_STATEMENTS"}, []error{session.ErrSyntax}, ""},
		{&session.Error{HTTPStatus: 429}, []error{session.ErrTooManyRequests}, ""},
		{&session.Error{HTTPStatus: 503}, []error{session.ErrTooManyRequests}, ""},
		{&session.Error{HTTPStatus: 404}, []error{session.ErrNotFound}, ""},
		{&session.Error{Code: "SQLITE_READONLY"}, []error{session.ErrReadOnly}, ""},
		{&session.Error{Code: session.CodeReadOnlyTx}, []error{session.ErrReadOnly}, ""},
		{&session.Error{TxLost: true, Message: "gone", Err: io.EOF}, []error{session.ErrTxLost, io.EOF}, "libsql: transaction lost: gone: EOF"},
		{&session.Error{BadConn: true, Safe: true, Message: "request failed"}, []error{driver.ErrBadConn}, ""},
	}
	all := []error{session.ErrConstraint, session.ErrUniqueViolation, session.ErrForeignKeyViolation,
		session.ErrNotNullViolation, session.ErrCheckViolation, session.ErrBusy, session.ErrAuth, session.ErrPermission,
		session.ErrSyntax, session.ErrTooManyRequests, session.ErrNotFound, session.ErrReadOnly, session.ErrTxLost,
		driver.ErrBadConn}
	for _, tt := range tests {
		for _, class := range all {
			want := false
			for _, c := range tt.is {
				want = want || c == class
			}
			if got := errors.Is(tt.err, class); got != want {
				t.Errorf("errors.Is(%+v, %v) = %v", tt.err, class, got)
			}
		}
		if tt.text != "" && tt.err.Error() != tt.text {
			t.Errorf("text %q, want %q", tt.err.Error(), tt.text)
		}
		if tt.err.SafeToRetry() != tt.err.Safe {
			t.Error("SafeToRetry")
		}
	}
}

// TestSQLiteCodes checks the numeric codes against SQLite's (and
// mattn/go-sqlite3's) numbers, written out here rather than taken from the
// package's tables.
func TestSQLiteCodes(t *testing.T) {
	tests := []struct {
		code, message     string
		primary, extended int
	}{
		{"SQLITE_UNKNOWN", "SQLite error: no such table: x", 1, 1},
		{"SQL_INPUT_ERROR", "SQL input error: no such column: c (at offset 7)", 1, 1},
		{"SQLITE_INTERNAL", "", 2, 2},
		{"SQLITE_PERM", "", 3, 3},
		{"SQLITE_ABORT", "", 4, 4},
		{"SQLITE_BUSY", "SQLite error: database is locked", 5, 5},
		{"SQLITE_LOCKED", "", 6, 6},
		{"SQLITE_NOMEM", "", 7, 7},
		{"SQLITE_READONLY", "", 8, 8},
		{"SQLITE_INTERRUPT", "", 9, 9},
		{"SQLITE_IOERR", "", 10, 10},
		{"SQLITE_CORRUPT", "", 11, 11},
		{"SQLITE_NOTFOUND", "", 12, 12},
		{"SQLITE_FULL", "", 13, 13},
		{"SQLITE_CANTOPEN", "", 14, 14},
		{"SQLITE_PROTOCOL", "", 15, 15},
		{"SQLITE_SCHEMA", "", 17, 17},
		{"SQLITE_TOOBIG", "", 18, 18},
		{"SQLITE_MISMATCH", "", 20, 20},
		{"SQLITE_MISUSE", "", 21, 21},
		{"SQLITE_NOLFS", "", 22, 22},
		{"SQLITE_AUTH", "", 23, 23},
		{"SQLITE_RANGE", "", 25, 25},
		{"SQLITE_NOTADB", "", 26, 26},
		// SQLITE_CONSTRAINT_* from the message; a PRIMARY KEY clash reads
		// as UNIQUE (2067), as SQLite words it.
		{"SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.c", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: UNIQUE constraint failed: t.id", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: FOREIGN KEY constraint failed", 19, 787},
		{"SQLITE_CONSTRAINT", "SQLite error: NOT NULL constraint failed: t.c", 19, 1299},
		{"SQLITE_CONSTRAINT", "SQLite error: CHECK constraint failed: named", 19, 275},
		{"SQLITE_CONSTRAINT", "SQLite error: cannot store TEXT value in INTEGER column s.a", 19, 3091},
		{"SQLITE_CONSTRAINT", "UNIQUE constraint failed: t.c", 19, 2067},
		{"SQLITE_CONSTRAINT", "SQLite error: constraint failed", 19, 19},
		{"SQLITE_CONSTRAINT", "SQLite error: ", 19, 19},
		{"SQLITE_CONSTRAINT", "SQLite error: unique constraint failed: t.c", 19, 19},
		{"SQLITE_BUSY", "SQLite error: UNIQUE constraint failed: t.c", 5, 5},
		// Not SQLite's.
		{"SQL_PARSE_ERROR", "SQL string could not be parsed: syntax error", 0, 0},
		{"SQL_NO_STATEMENT", "", 0, 0},
		{"STREAM_EXPIRED", "", 0, 0},
		{"TRANSACTION_TIMEOUT", "", 0, 0},
		{"READONLY_TRANSACTION", "", 0, 0},
		{"", "connection refused", 0, 0},
		{"sqlite_busy", "", 0, 0},
	}
	for _, tt := range tests {
		e := &session.Error{Code: tt.code, Message: tt.message}
		if got := e.SQLiteCode(); got != tt.primary {
			t.Errorf("%s %q: SQLiteCode %d, want %d", tt.code, tt.message, got, tt.primary)
		}
		if got := e.SQLiteExtendedCode(); got != tt.extended {
			t.Errorf("%s %q: SQLiteExtendedCode %d, want %d", tt.code, tt.message, got, tt.extended)
		}
		if got := e.SQLiteExtendedCode() & 0xff; got != e.SQLiteCode() {
			t.Errorf("%s %q: the extended code's low byte %d is not the primary code", tt.code, tt.message, got)
		}
	}
	var nilErr *session.Error
	if nilErr.SQLiteCode() != 0 || nilErr.SQLiteExtendedCode() != 0 {
		t.Error("a nil *Error has codes")
	}
}

// gormErrMessage is what gorm.io/driver/sqlite v1.6's Translate decodes an
// error into (its ErrMessage): it json.Marshals the error and unmarshals the
// result into this shape, then looks ExtendedCode up in gormErrCodes.
type gormErrMessage struct {
	Code         int `json:"Code"`
	ExtendedCode int `json:"ExtendedCode"`
	SystemErrno  int `json:"SystemErrno"`
}

// gormErrCodes is v1.6's errCodes, with GORM's errors by name.
var gormErrCodes = map[int]string{1555: "ErrDuplicatedKey", 2067: "ErrDuplicatedKey", 787: "ErrForeignKeyViolated"}

// gormTranslate does what v1.6's Translate does, returning the name of the
// GORM error it would return, or "" when it returns err unchanged.
func gormTranslate(err error) string {
	b, err := json.Marshal(err)
	if err != nil {
		return ""
	}
	var m gormErrMessage
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return gormErrCodes[m.ExtendedCode]
}

func TestErrorJSON(t *testing.T) {
	tests := []struct {
		err  *session.Error
		want string // the JSON
		gorm string // what GORM's TranslateError makes of it
	}{
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.c"},
			`{"Code":19,"ExtendedCode":2067,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: UNIQUE constraint failed: t.c","Error":"libsql: SQLite error: UNIQUE constraint failed: t.c (SQLITE_CONSTRAINT)"}`,
			"ErrDuplicatedKey"},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: FOREIGN KEY constraint failed"},
			`{"Code":19,"ExtendedCode":787,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: FOREIGN KEY constraint failed","Error":"libsql: SQLite error: FOREIGN KEY constraint failed (SQLITE_CONSTRAINT)"}`,
			"ErrForeignKeyViolated"},
		{&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: NOT NULL constraint failed: t.c"},
			`{"Code":19,"ExtendedCode":1299,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: NOT NULL constraint failed: t.c","Error":"libsql: SQLite error: NOT NULL constraint failed: t.c (SQLITE_CONSTRAINT)"}`,
			""},
		{&session.Error{Code: "SQLITE_BUSY", Message: "SQLite error: database is locked"},
			`{"Code":5,"ExtendedCode":5,"HranaCode":"SQLITE_BUSY","Message":"SQLite error: database is locked","Error":"libsql: SQLite error: database is locked (SQLITE_BUSY)"}`,
			""},
		{&session.Error{HTTPStatus: 401, Message: "Unauthorized"},
			`{"Code":0,"ExtendedCode":0,"Message":"Unauthorized","HTTPStatus":401,"Error":"libsql: HTTP Unauthorized: Unauthorized"}`,
			""},
		{&session.Error{Err: io.EOF},
			`{"Code":0,"ExtendedCode":0,"Error":"libsql: EOF"}`,
			""},
		{&session.Error{Code: "SQL_PARSE_ERROR", Message: "bad \xff <sql> & \"q\""},
			`{"Code":0,"ExtendedCode":0,"HranaCode":"SQL_PARSE_ERROR","Message":"bad \ufffd \u003csql\u003e \u0026 \"q\"","Error":"libsql: bad \ufffd \u003csql\u003e \u0026 \"q\" (SQL_PARSE_ERROR)"}`,
			""},
		{nil, `null`, ""},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.err)
		if err != nil || string(b) != tt.want {
			t.Errorf("%+v: JSON %s, %v\nwant %s", tt.err, b, err, tt.want)
		}
		if tt.err == nil {
			continue
		}
		if got := gormTranslate(tt.err); got != tt.gorm {
			t.Errorf("%+v: GORM translates it to %q, want %q", tt.err, got, tt.gorm)
		}
		// The shape GORM decodes: no key must clash with its fields.
		var m gormErrMessage
		if err := json.Unmarshal(b, &m); err != nil || m.Code != tt.err.SQLiteCode() || m.ExtendedCode != tt.err.SQLiteExtendedCode() {
			t.Errorf("%s decodes into GORM's shape as %+v, %v", b, m, err)
		}
	}
	// GORM marshals the error it is given: a copy marked lost by the
	// driver still translates, and so does the error as an error value.
	lost := session.Lost(&session.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.c"})
	if got := gormTranslate(error(lost)); got != "ErrDuplicatedKey" {
		t.Errorf("lost: %q", got)
	}
}

func TestLost(t *testing.T) {
	e := session.Lost(&session.Error{Code: "SQLITE_BUSY", BadConn: true})
	if !e.TxLost || e.BadConn || e.Code != "SQLITE_BUSY" {
		t.Fatalf("%+v", e)
	}
	if e := session.Lost(context.Canceled); !e.TxLost || !errors.Is(e, context.Canceled) || !strings.Contains(e.Error(), "interrupted") {
		t.Fatalf("%v", e)
	}
	if e := session.Lost(io.ErrUnexpectedEOF); !e.TxLost || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Fatalf("%v", e)
	}
}

func TestStatementErrors(t *testing.T) {
	e := session.StmtError(&codec.Error{Code: "SQLITE_CONSTRAINT", Message: "m"})
	if !e.FromStatement() || !session.IsStatementError(e) || !session.HasCode(e, "SQLITE_CONSTRAINT") {
		t.Fatal("StmtError")
	}
	other := &session.Error{Code: "STREAM_EXPIRED", HTTPStatus: 400}
	if other.FromStatement() || session.IsStatementError(other) || session.HasCode(io.EOF, "x") || session.IsSafe(io.EOF) {
		t.Fatal("not from a statement")
	}
}
