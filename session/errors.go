package session

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// Error classes, for errors.Is. An *Error matches the classes its code or
// HTTP status belongs to. Package libsql exports them under the same names.
var (
	ErrConstraint      = errors.New("libsql: constraint violation")
	ErrBusy            = errors.New("libsql: database busy")
	ErrAuth            = errors.New("libsql: authentication failed")
	ErrPermission      = errors.New("libsql: permission denied")
	ErrSyntax          = errors.New("libsql: SQL error")
	ErrTooManyRequests = errors.New("libsql: server overloaded")
	ErrNotFound        = errors.New("libsql: not found")
	ErrReadOnly        = errors.New("libsql: read-only")
	ErrTxLost          = errors.New("libsql: transaction lost")

	// The kinds of constraint violation, each also ErrConstraint. sqld
	// sends no extended result codes; they are read from SQLite's message
	// (see SQLiteExtendedCode). ErrUniqueViolation covers PRIMARY KEY and
	// rowid clashes too, which SQLite reports in the same words.
	ErrUniqueViolation     = errors.New("libsql: UNIQUE constraint violation")
	ErrForeignKeyViolation = errors.New("libsql: FOREIGN KEY constraint violation")
	ErrNotNullViolation    = errors.New("libsql: NOT NULL constraint violation")
	ErrCheckViolation      = errors.New("libsql: CHECK constraint violation")
)

// Error is an error reported by the server, or a failed exchange with it.
// It never contains the auth token. Package libsql exports it as
// libsql.Error.
type Error struct {
	// Code is the Hrana error code, e.g. "SQLITE_CONSTRAINT",
	// "SQL_PARSE_ERROR", "STREAM_EXPIRED"; "" for HTTP errors without one.
	Code string
	// Message is the server's message, or what failed.
	Message string
	// HTTPStatus is the HTTP status for errors at the HTTP level; 0 for
	// errors of one statement inside a successful response.
	HTTPStatus int
	// Safe reports that the request certainly had no effect on the server,
	// so repeating it cannot apply a write twice.
	Safe bool
	// TxLost is set when the error ended the caller's transaction.
	TxLost bool
	// BadConn is set when the request never left this process and the
	// connection held no server state (no transaction): database/sql may
	// run it again on another connection, and errors.Is(err,
	// driver.ErrBadConn) reports true.
	BadConn bool
	// Err is the network or decoding cause, if any.
	Err error
	// stmt marks the server's answer to one request inside a successful
	// response (see StmtError).
	stmt bool
}

// FromStatement reports whether the error is the server's answer to one
// statement or request inside a successful response (made by StmtError).
// Such an error leaves the stream, and any transaction on it, intact; any
// other failure of an exchange may have lost them.
func (e *Error) FromStatement() bool { return e.stmt }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("libsql: ")
	if e.TxLost {
		b.WriteString("transaction lost: ")
	}
	if e.HTTPStatus != 0 {
		b.WriteString("HTTP ")
		b.WriteString(http.StatusText(e.HTTPStatus))
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Code != "" {
		b.WriteString(" (")
		b.WriteString(e.Code)
		b.WriteString(")")
	}
	if e.Err != nil {
		if e.Message != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the network or decoding cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// SafeToRetry reports whether the failed request certainly had no effect.
func (e *Error) SafeToRetry() bool { return e.Safe }

// Is matches the error classes (ErrConstraint, ErrUniqueViolation, ErrBusy,
// ...) and, for a request that never left outside a transaction,
// driver.ErrBadConn.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrConstraint:
		return e.Code == CodeSQLiteConstraint
	case ErrUniqueViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintUnique
	case ErrForeignKeyViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintForeignKey
	case ErrNotNullViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintNotNull
	case ErrCheckViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintCheck
	case ErrBusy:
		return e.Code == CodeSQLiteBusy || e.Code == CodeSQLiteLocked || e.Code == CodeTransactionBusy
	case ErrAuth:
		// sqld's authentication codes (a hello refused over WebSocket,
		// where there is no HTTP status) all start with AUTH_.
		return e.HTTPStatus == http.StatusUnauthorized || strings.HasPrefix(e.Code, codeAuthPrefix)
	case ErrPermission:
		return e.HTTPStatus == http.StatusForbidden || e.Code == CodeSQLiteAuth || e.Code == CodeSQLitePerm
	case ErrSyntax:
		return e.Code == CodeSQLParseError || e.Code == CodeSQLInputError ||
			e.Code == CodeSQLNoStatement || e.Code == CodeSQLManyStatements
	case ErrTooManyRequests:
		return e.HTTPStatus == http.StatusTooManyRequests || e.HTTPStatus == http.StatusServiceUnavailable
	case ErrNotFound:
		return e.HTTPStatus == http.StatusNotFound
	case ErrReadOnly:
		return e.Code == CodeSQLiteReadOnly || e.Code == CodeReadOnlyTx
	case ErrTxLost:
		return e.TxLost
	case driver.ErrBadConn:
		return e.BadConn
	}
	return false
}

// errorJSON is the JSON form of an Error. Its first two fields have the
// names and meaning of mattn/go-sqlite3's sqlite3.Error fields; the names of
// the others must not equal those case-insensitively (encoding/json matches
// keys so), or decoding them into that shape would fail.
type errorJSON struct {
	Code         int    `json:"Code"`
	ExtendedCode int    `json:"ExtendedCode"`
	HranaCode    string `json:"HranaCode,omitempty"`
	Message      string `json:"Message,omitempty"`
	HTTPStatus   int    `json:"HTTPStatus,omitempty"`
	Error        string `json:"Error"`
}

// MarshalJSON encodes the error in the shape of mattn/go-sqlite3's
// sqlite3.Error, which is what GORM's SQLite dialector (gorm.io/driver/sqlite
// v1.6) decodes its errors into to translate them: numeric "Code" and
// "ExtendedCode" (see SQLiteCode and SQLiteExtendedCode), so that
// TranslateError turns UNIQUE violations into gorm.ErrDuplicatedKey and
// FOREIGN KEY ones into gorm.ErrForeignKeyViolated. The Hrana code is
// "HranaCode"; "Message" and "HTTPStatus" are the fields of those names, and
// "Error" is the error's text, so that loggers that encode errors as JSON
// (log/slog's JSONHandler) lose nothing. Like the text, it never contains
// the auth token.
func (e *Error) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("null"), nil
	}
	return json.Marshal(errorJSON{
		Code:         e.SQLiteCode(),
		ExtendedCode: e.SQLiteExtendedCode(),
		HranaCode:    e.Code,
		Message:      e.Message,
		HTTPStatus:   e.HTTPStatus,
		Error:        e.Error(),
	})
}

// HasCode reports whether err is an *Error with the Hrana code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// IsSafe reports whether err is an *Error for a request that certainly had
// no effect.
func IsSafe(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Safe
}

// StmtError converts the Hrana error of one statement or request.
func StmtError(he *codec.Error) *Error {
	return &Error{Code: he.Code, Message: he.Message, stmt: true}
}

// IsStatementError reports whether err is an *Error from a statement (see
// Error.FromStatement).
func IsStatementError(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.stmt
}

// Lost returns err marked as having ended the caller's transaction: a copy
// of an *Error with TxLost set, or an *Error wrapping anything else (a
// context's end reads "interrupted").
func Lost(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		cp := *e
		cp.TxLost, cp.BadConn = true, false
		return &cp
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{TxLost: true, Message: "interrupted", Err: err}
	}
	return &Error{TxLost: true, Err: err}
}
