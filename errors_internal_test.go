package libsql

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/gormerr"
)

func TestErrorClasses(t *testing.T) {
	tests := []struct {
		err  *Error
		is   []error
		text string
	}{
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "UNIQUE constraint failed: t.a"}, []error{ErrConstraint, ErrUniqueViolation}, "libsql: UNIQUE constraint failed: t.a (SQLITE_CONSTRAINT)"},
		// The texts users read: SQLite's name for SQLITE_ERROR, the status
		// once, the cause after the message.
		{&Error{Code: "SQLITE_UNKNOWN", Message: "SQLite error: no such table: t", stmt: true}, nil, "libsql: SQLite error: no such table: t (SQLITE_ERROR)"},
		{&Error{HTTPStatus: 401, Message: "The JWT is invalid"}, []error{ErrAuth}, "libsql: HTTP 401 Unauthorized: The JWT is invalid"},
		{&Error{HTTPStatus: 404, Message: "Not Found"}, []error{ErrNotFound}, "libsql: HTTP 404 Not Found"},
		{&Error{HTTPStatus: 502}, nil, "libsql: HTTP 502 Bad Gateway"},
		{&Error{Message: "cannot connect to the server", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), safe: true, badConn: true},
			[]error{driver.ErrBadConn}, "libsql: cannot connect to the server: dial tcp 127.0.0.1:1: connect: connection refused"},
		// The kinds of constraint violation, from sqld's messages.
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.a, t.b"}, []error{ErrConstraint, ErrUniqueViolation}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: index 'ix'"}, []error{ErrConstraint, ErrUniqueViolation}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: FOREIGN KEY constraint failed"}, []error{ErrConstraint, ErrForeignKeyViolation}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: NOT NULL constraint failed: t.nn"}, []error{ErrConstraint, ErrNotNullViolation}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: CHECK constraint failed: ck >= 0"}, []error{ErrConstraint, ErrCheckViolation}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: cannot store TEXT value in INTEGER column s.a"}, []error{ErrConstraint}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: negative values are not allowed"}, []error{ErrConstraint}, ""},
		{&Error{Code: "SQLITE_CONSTRAINT"}, []error{ErrConstraint}, ""},
		// The driver's context, with SQL that quotes another message: the
		// kind is the server's message's alone.
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.u", txLost: true,
			Statement: 3, Deferred: true, SQL: "INSERT INTO t VALUES ('SQLite error: CHECK constraint failed: x')"},
			[]error{ErrConstraint, ErrUniqueViolation, ErrTxLost},
			"libsql: transaction lost: deferred statement #3 (INSERT INTO t VALUES ('SQLite error: CHECK constraint failed: x')) failed: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)"},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: FOREIGN KEY constraint failed", OutcomeUnknown: true},
			[]error{ErrConstraint, ErrForeignKeyViolation}, ""},
		// A trigger's RAISE whose text reads like a kind is not that kind.
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: no: SQLite error: UNIQUE constraint failed: t.u"}, []error{ErrConstraint}, ""},
		// The words alone are not a constraint violation.
		{&Error{Code: "SQLITE_UNKNOWN", Message: "SQLite error: UNIQUE constraint failed: t.a"}, nil, ""},
		{&Error{Message: "UNIQUE constraint failed: t.a"}, nil, ""},
		{&Error{Code: "SQLITE_BUSY"}, []error{ErrBusy}, ""},
		{&Error{Code: "SQLITE_LOCKED"}, []error{ErrBusy}, ""},
		{&Error{Code: "TRANSACTION_BUSY"}, []error{ErrBusy}, ""},
		{&Error{HTTPStatus: 401, Message: "bad token"}, []error{ErrAuth}, "libsql: HTTP 401 Unauthorized: bad token"},
		{&Error{Code: "AUTH_JWT_INVALID", Message: "The JWT is invalid"}, []error{ErrAuth}, "libsql: The JWT is invalid (AUTH_JWT_INVALID)"},
		{&Error{HTTPStatus: 403}, []error{ErrPermission}, ""},
		{&Error{Code: "SQLITE_AUTH"}, []error{ErrPermission}, ""},
		{&Error{Code: "SQLITE_PERM"}, []error{ErrPermission}, ""},
		{&Error{Code: "SQL_PARSE_ERROR"}, []error{ErrSyntax}, ""},
		{&Error{Code: "SQL_INPUT_ERROR"}, []error{ErrSyntax}, ""},
		{&Error{Code: "SQL_NO_STATEMENT"}, []error{ErrSyntax}, ""},
		{&Error{Code: "SQL_MANY_STATEMENTS"}, []error{ErrSyntax}, ""},
		{&Error{Code: "ARGS_INVALID"}, []error{ErrArgs}, ""},
		{&Error{Code: "ARGS_BOTH_POSITIONAL_AND_NAMED"}, []error{ErrArgs}, ""},
		{&Error{HTTPStatus: 429}, []error{ErrTooManyRequests}, ""},
		{&Error{HTTPStatus: 503}, []error{ErrTooManyRequests}, ""},
		{&Error{HTTPStatus: 404}, []error{ErrNotFound}, ""},
		{&Error{Code: "SQLITE_READONLY"}, []error{ErrReadOnly}, ""},
		{&Error{Code: codeReadOnlyTx}, []error{ErrReadOnly}, ""},
		{&Error{txLost: true, Message: "gone", Err: io.EOF}, []error{ErrTxLost, io.EOF}, "libsql: transaction lost: gone: EOF"},
		{&Error{badConn: true, safe: true, Message: "request failed"}, []error{driver.ErrBadConn}, ""},
	}
	all := []error{ErrConstraint, ErrUniqueViolation, ErrForeignKeyViolation,
		ErrNotNullViolation, ErrCheckViolation, ErrBusy, ErrAuth, ErrPermission,
		ErrSyntax, ErrArgs, ErrTooManyRequests, ErrNotFound, ErrReadOnly, ErrTxLost,
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
		if tt.err.SafeToRetry() != tt.err.safe {
			t.Error("SafeToRetry")
		}
	}
}

func TestErrorJSON(t *testing.T) {
	tests := []struct {
		err  *Error
		want string // the JSON
		gorm string // what GORM's TranslateError makes of it
	}{
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.c"},
			`{"Code":19,"ExtendedCode":2067,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: UNIQUE constraint failed: t.c","Error":"libsql: SQLite error: UNIQUE constraint failed: t.c (SQLITE_CONSTRAINT)"}`,
			"ErrDuplicatedKey"},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: FOREIGN KEY constraint failed"},
			`{"Code":19,"ExtendedCode":787,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: FOREIGN KEY constraint failed","Error":"libsql: SQLite error: FOREIGN KEY constraint failed (SQLITE_CONSTRAINT)"}`,
			"ErrForeignKeyViolated"},
		{&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: NOT NULL constraint failed: t.c"},
			`{"Code":19,"ExtendedCode":1299,"HranaCode":"SQLITE_CONSTRAINT","Message":"SQLite error: NOT NULL constraint failed: t.c","Error":"libsql: SQLite error: NOT NULL constraint failed: t.c (SQLITE_CONSTRAINT)"}`,
			""},
		{&Error{Code: "SQLITE_BUSY", Message: "SQLite error: database is locked"},
			`{"Code":5,"ExtendedCode":5,"HranaCode":"SQLITE_BUSY","Message":"SQLite error: database is locked","Error":"libsql: SQLite error: database is locked (SQLITE_BUSY)"}`,
			""},
		{&Error{HTTPStatus: 401, Message: "Unauthorized"},
			`{"Code":0,"ExtendedCode":0,"Message":"Unauthorized","HTTPStatus":401,"Error":"libsql: HTTP 401 Unauthorized"}`,
			""},
		{&Error{Err: io.EOF},
			`{"Code":0,"ExtendedCode":0,"Error":"libsql: EOF"}`,
			""},
		{&Error{Code: "SQL_PARSE_ERROR", Message: "bad \xff <sql> & \"q\""},
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
		if got := gormerr.Translate(tt.err); got != tt.gorm {
			t.Errorf("%+v: GORM translates it to %q, want %q", tt.err, got, tt.gorm)
		}
		// The shape GORM decodes: no key must clash with its fields.
		m, ok := gormerr.Decode(tt.err)
		if !ok || m.Code != tt.err.SQLiteCode() || m.ExtendedCode != tt.err.SQLiteExtendedCode() {
			t.Errorf("%s decodes into GORM's shape as %+v, %t", b, m, ok)
		}
	}
	// GORM marshals the error it is given: a copy marked lost by the
	// driver still translates, and so does the error as an error value.
	lost := lost(&Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.c"})
	if got := gormerr.Translate(error(lost)); got != "ErrDuplicatedKey" {
		t.Errorf("lost: %q", got)
	}
}

func TestLost(t *testing.T) {
	e := lost(&Error{Code: "SQLITE_BUSY", badConn: true})
	if !e.txLost || e.badConn || e.Code != "SQLITE_BUSY" {
		t.Fatalf("%+v", e)
	}
	if e := lost(context.Canceled); !e.txLost || !errors.Is(e, context.Canceled) || !strings.Contains(e.Error(), "interrupted") {
		t.Fatalf("%v", e)
	}
	if e := lost(io.ErrUnexpectedEOF); !e.txLost || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Fatalf("%v", e)
	}
}

func TestStatementErrors(t *testing.T) {
	e := stmtError(&codec.Error{Code: "SQLITE_CONSTRAINT", Message: "m"})
	if !e.stmt || !isStatementError(e) || !hasCode(e, "SQLITE_CONSTRAINT") {
		t.Fatal("StmtError")
	}
	other := &Error{Code: "STREAM_EXPIRED", HTTPStatus: 400}
	if other.stmt || isStatementError(other) || hasCode(io.EOF, "x") || isSafe(io.EOF) {
		t.Fatal("not from a statement")
	}
}

// TestErrorContext pins, for each kind of error the driver puts its own
// context around, that Message stays the server's, the context fields, and
// the text that puts the two together.
func TestErrorContext(t *testing.T) {
	unique := codec.Error{Code: "SQLITE_CONSTRAINT", Message: "SQLite error: UNIQUE constraint failed: t.u"}
	busy := codec.Error{Code: "SQLITE_BUSY", Message: "SQLite error: database is locked"}
	failed := func(e codec.Error) *codec.StepOutcome { return &codec.StepOutcome{Status: codec.StepFailed, Error: e} }
	skipped := &codec.StepOutcome{Status: codec.StepSkipped}
	long := "INSERT INTO t (a) VALUES ('" + strings.Repeat("é", 150) + "')"
	tests := []struct {
		name string
		err  error
		want Error // the exported fields
		is   []error
		text string
	}{
		{"batch statement", batchStmtError(1, "INSERT INTO t VALUES (1)", &unique),
			Error{Code: unique.Code, Message: unique.Message, Statement: 2, SQL: "INSERT INTO t VALUES (1)", RolledBack: true},
			[]error{ErrConstraint, ErrUniqueViolation},
			`libsql: batch statement #2 ("INSERT INTO t VALUES (1)") failed, and the batch was rolled back: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)`},
		{"batch statement, long SQL", batchStmtError(0, long, &unique),
			Error{Code: unique.Code, Message: unique.Message, Statement: 1, SQL: long[:199] + "...", RolledBack: true},
			[]error{ErrConstraint, ErrUniqueViolation},
			`libsql: batch statement #1 (` + strconv.Quote(long[:199]+"...") + `) failed, and the batch was rolled back: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)`},
		{"batch statement lost with its transaction", lost(batchStmtError(0, "DELETE FROM t", &unique)),
			Error{Code: unique.Code, Message: unique.Message, Statement: 1, SQL: "DELETE FROM t", RolledBack: true},
			[]error{ErrConstraint, ErrUniqueViolation, ErrTxLost},
			`libsql: transaction lost: batch statement #1 ("DELETE FROM t") failed, and the batch was rolled back: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)`},
		{"batch statement refused in a read batch", batchReadOnlyError(0, "INSERT INTO t VALUES (1)", "statement would write in a read batch"),
			Error{Code: codeReadOnlyTx, Message: "statement would write in a read batch", Statement: 1, SQL: "INSERT INTO t VALUES (1)"},
			[]error{ErrReadOnly},
			`libsql: batch statement #1 ("INSERT INTO t VALUES (1)"): statement would write in a read batch (READONLY_TRANSACTION)`},
		{"batch COMMIT", driverStepError(failed(busy), "COMMIT", true),
			Error{Code: busy.Code, Message: busy.Message, SQL: "COMMIT", RolledBack: true},
			[]error{ErrBusy},
			"libsql: COMMIT failed: SQLite error: database is locked (SQLITE_BUSY) (the batch was rolled back)"},
		{"batch SAVEPOINT skipped", driverStepError(skipped, "SAVEPOINT libsql_batch", false),
			Error{SQL: "SAVEPOINT libsql_batch"},
			nil,
			"libsql: the server skipped SAVEPOINT libsql_batch"},
		{"BEGIN", beginError(failed(busy)),
			Error{Code: busy.Code, Message: busy.Message, SQL: "BEGIN"},
			[]error{ErrBusy},
			"libsql: BEGIN failed: SQLite error: database is locked (SQLITE_BUSY)"},
		{"BEGIN skipped, deferred statements lost", lost(beginError(skipped)),
			Error{SQL: "BEGIN"},
			[]error{ErrTxLost},
			"libsql: transaction lost: the server skipped BEGIN"},
		{"deferred statement", deferredStmtError(7, "INSERT INTO t\nVALUES (1)", failed(unique)),
			Error{Code: unique.Code, Message: unique.Message, Statement: 7, SQL: "INSERT INTO t …", Deferred: true},
			[]error{ErrConstraint, ErrUniqueViolation, ErrTxLost},
			"libsql: transaction lost: deferred statement #7 (INSERT INTO t …) failed: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)"},
		{"deferred statement skipped", deferredStmtError(2, "UPDATE t SET a = 1", skipped),
			Error{Statement: 2, SQL: "UPDATE t SET a = 1", Deferred: true},
			[]error{ErrTxLost},
			"libsql: transaction lost: deferred statement #2 (UPDATE t SET a = 1) failed: the server skipped it"},
		{"deferred statements refused", lost(refused(stmtError(&codec.Error{Code: "SQL_PARSE_ERROR", Message: "SQL string could not be parsed: near INSRT"}))),
			Error{Code: "SQL_PARSE_ERROR", Message: "SQL string could not be parsed: near INSRT", Deferred: true},
			[]error{ErrSyntax, ErrTxLost},
			"libsql: transaction lost: deferred statements refused: SQL string could not be parsed: near INSRT (SQL_PARSE_ERROR)"},
		{"COMMIT outcome unknown", commitUnknown(&Error{Message: "the server closed the connection", Err: io.ErrUnexpectedEOF, badConn: true}),
			Error{Message: "the server closed the connection", Err: io.ErrUnexpectedEOF, OutcomeUnknown: true},
			[]error{io.ErrUnexpectedEOF},
			"libsql: the outcome of COMMIT is unknown: the server closed the connection: unexpected EOF"},
		{"COMMIT outcome unknown after a 502", commitUnknown(&Error{HTTPStatus: 502, Message: "upstream down"}),
			Error{HTTPStatus: 502, Message: "upstream down", OutcomeUnknown: true},
			nil,
			"libsql: the outcome of COMMIT is unknown: HTTP 502 Bad Gateway: upstream down"},
		{"COMMIT failed at the server", lost(driverStepError(failed(unique), "COMMIT", false)),
			Error{Code: unique.Code, Message: unique.Message, SQL: "COMMIT"},
			[]error{ErrConstraint, ErrUniqueViolation, ErrTxLost},
			"libsql: transaction lost: COMMIT failed: SQLite error: UNIQUE constraint failed: t.u (SQLITE_CONSTRAINT)"},
		{"Query too large, not run again", withNote(&Error{Code: "RESPONSE_TOO_LARGE", Message: "Response is too large"}, "the statement ran; it writes, so it is not run again to stream its rows"),
			Error{Code: "RESPONSE_TOO_LARGE", Message: "Response is too large", Note: "the statement ran; it writes, so it is not run again to stream its rows"},
			nil,
			"libsql: Response is too large (RESPONSE_TOO_LARGE) (the statement ran; it writes, so it is not run again to stream its rows)"},
	}
	all := []error{ErrConstraint, ErrUniqueViolation, ErrBusy, ErrSyntax, ErrReadOnly, ErrTxLost, driver.ErrBadConn, io.ErrUnexpectedEOF}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := asError(tt.err)
			if e == nil {
				t.Fatalf("%T is no *Error", tt.err)
			}
			got := Error{Code: e.Code, Message: e.Message, HTTPStatus: e.HTTPStatus, Err: e.Err, Statement: e.Statement,
				SQL: e.SQL, Deferred: e.Deferred, RolledBack: e.RolledBack, OutcomeUnknown: e.OutcomeUnknown, Note: e.Note}
			if got != tt.want {
				t.Errorf("fields %+v\nwant   %+v", got, tt.want)
			}
			for _, class := range all {
				want := false
				for _, c := range tt.is {
					want = want || c == class
				}
				if errors.Is(e, class) != want {
					t.Errorf("errors.Is(%v) = %v", class, !want)
				}
			}
			if e.Error() != tt.text {
				t.Errorf("text %q\nwant %q", e.Error(), tt.text)
			}
			// JSON (and so GORM) sees the server's message, untouched, and
			// the whole text.
			b, err := json.Marshal(e)
			var m struct{ Message, Error string }
			if err != nil || json.Unmarshal(b, &m) != nil || m.Message != tt.want.Message || m.Error != tt.text {
				t.Errorf("JSON %s, %v", b, err)
			}
		})
	}
}

// TestErrorContextCopies checks that the constructors that add context to
// an error copy it: a transaction's stored error is never changed by what
// one caller adds.
func TestErrorContextCopies(t *testing.T) {
	base := &Error{Code: "SQLITE_CONSTRAINT", Message: "m", stmt: true, badConn: true}
	for name, err := range map[string]error{
		"withNote":      withNote(base, "n"),
		"refused":       refused(base),
		"commitUnknown": commitUnknown(base),
		"inTxRequest":   inTxRequest(base),
		"lost":          lost(base),
	} {
		if e := asError(err); e == base || e == nil {
			t.Errorf("%s: %v is not a copy", name, err)
		}
		if errors.Is(err, driver.ErrBadConn) && name != "withNote" && name != "refused" {
			t.Errorf("%s: a transaction's error is left to database/sql to retry elsewhere", name)
		}
	}
	if *base != (Error{Code: "SQLITE_CONSTRAINT", Message: "m", stmt: true, badConn: true}) {
		t.Errorf("the original changed: %+v", base)
	}
	// Other errors pass through.
	for _, f := range []func(error) error{refused, commitUnknown, inTxRequest, func(err error) error { return withNote(err, "n") }} {
		if err := f(io.EOF); err != io.EOF {
			t.Errorf("%v became %v", io.EOF, err)
		}
	}
	// A step's error is not the refusal of a whole batch.
	if e := asError(refused(beginError(&codec.StepOutcome{Status: codec.StepFailed, Error: codec.Error{Code: "SQLITE_BUSY"}}))); e.Deferred {
		t.Error("BEGIN's failure named as the refusal of the queue")
	}
}

func TestSQLSnippet(t *testing.T) {
	long := "INSERT INTO t (a, b, c) VALUES ('" + strings.Repeat("é", 40) + "')"
	tests := []struct{ in, want string }{
		{"INSERT INTO t VALUES (?)", "INSERT INTO t VALUES (?)"},
		{"INSERT INTO t\nVALUES (?)", "INSERT INTO t …"},
		{long, long[:59] + " …"}, // cut before the 2-byte rune that straddles byte 60
	}
	for _, tt := range tests {
		got := sqlSnippet(tt.in)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("sqlSnippet(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
