package libsql

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Error classes, for errors.Is. An *Error matches the classes its code or
// HTTP status belongs to:
//
//	if errors.Is(err, libsql.ErrConstraint) { ... }
var (
	// ErrConstraint: a constraint failed (SQLITE_CONSTRAINT).
	ErrConstraint = errors.New("libsql: constraint violation")
	// ErrUniqueViolation: a UNIQUE constraint failed, or a PRIMARY KEY one
	// (SQLite reports both as "UNIQUE constraint failed: t.c", and sqld
	// sends no extended code to tell them apart). Also ErrConstraint.
	ErrUniqueViolation = errors.New("libsql: UNIQUE constraint violation")
	// ErrForeignKeyViolation: a FOREIGN KEY constraint failed. Also ErrConstraint.
	ErrForeignKeyViolation = errors.New("libsql: FOREIGN KEY constraint violation")
	// ErrNotNullViolation: a NOT NULL constraint failed. Also ErrConstraint.
	ErrNotNullViolation = errors.New("libsql: NOT NULL constraint violation")
	// ErrCheckViolation: a CHECK constraint failed. Also ErrConstraint.
	ErrCheckViolation = errors.New("libsql: CHECK constraint violation")
	// ErrBusy: the database was busy or locked, or the server had too many
	// transactions (SQLITE_BUSY, SQLITE_LOCKED, TRANSACTION_BUSY).
	ErrBusy = errors.New("libsql: database busy")
	// ErrAuth: authentication failed (HTTP 401, or one of sqld's AUTH_ codes:
	// a missing, expired or invalid token).
	ErrAuth = errors.New("libsql: authentication failed")
	// ErrPermission: the token lacks a permission (HTTP 403, SQLITE_AUTH, SQLITE_PERM).
	ErrPermission = errors.New("libsql: permission denied")
	// ErrSyntax: the SQL could not be parsed or prepared.
	ErrSyntax = errors.New("libsql: SQL error")
	// ErrTooManyRequests: the server is overloaded (HTTP 429 or 503).
	ErrTooManyRequests = errors.New("libsql: server overloaded")
	// ErrNotFound: the server answered HTTP 404 (wrong URL or namespace).
	ErrNotFound = errors.New("libsql: not found")
	// ErrReadOnly: a write was attempted where only reads are allowed (a
	// read-only transaction, a read-only database).
	ErrReadOnly = errors.New("libsql: read-only")
	// ErrTxLost: the server no longer has the transaction (its stream
	// expired, the server restarted, or the lock was taken away after the
	// transaction timeout); it was rolled back, and the transaction must be
	// retried from the start.
	ErrTxLost = errors.New("libsql: transaction lost")
	// ErrTxDone: the transaction was already committed or rolled back.
	ErrTxDone = errors.New("libsql: transaction already finished")
)

// Error is an error the server reported, or a failed exchange with it. Its
// text and JSON never contain the auth token or a header value.
//
// errors.Is matches it against the classes above, and against
// driver.ErrBadConn for a request that certainly never left this process
// outside a transaction, so that database/sql runs it again on another
// connection.
type Error struct {
	// Code is the Hrana error code: "SQLITE_CONSTRAINT", "SQL_PARSE_ERROR",
	// "STREAM_EXPIRED", ...; "" when the server sent none. sqld calls
	// SQLite's SQLITE_ERROR "SQLITE_UNKNOWN".
	Code string
	// Message is the server's message, or what failed.
	Message string
	// HTTPStatus is the HTTP status of a failure at the HTTP level; 0
	// otherwise.
	HTTPStatus int
	// Err is the network or decoding cause, if any.
	Err error

	safe    bool // the request certainly had no effect
	badConn bool // it never left and lost no state: database/sql may retry it elsewhere
	txLost  bool // it ended the caller's transaction
	stmt    bool // the server's answer to one statement inside an exchange that succeeded
}

// fromSession returns err, an error of the session layer, as the driver
// reports it: a *transport.Error becomes an *Error; anything else (a
// context's end) is returned as it is.
func fromSession(err error) error {
	te, ok := err.(*transport.Error)
	if !ok {
		return err
	}
	return &Error{Code: te.Code, Message: te.Message, HTTPStatus: te.HTTPStatus, Err: te.Err,
		safe: te.Safe, badConn: te.Resend, txLost: te.TxLost, stmt: te.Statement}
}

// stmtError is the error the server reported for one statement.
func stmtError(he *codec.Error) *Error {
	return &Error{Code: he.Code, Message: he.Message, stmt: true}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("libsql: ")
	if e.txLost {
		b.WriteString("transaction lost: ")
	}
	msg := e.Message
	if e.HTTPStatus != 0 {
		b.WriteString("HTTP ")
		b.WriteString(strconv.Itoa(e.HTTPStatus))
		if text := http.StatusText(e.HTTPStatus); text != "" {
			b.WriteString(" ")
			b.WriteString(text)
			if msg == text {
				msg = ""
			}
		}
		if msg != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(msg)
	if code := e.displayCode(); code != "" && !strings.Contains(msg, code) {
		b.WriteString(" (")
		b.WriteString(code)
		b.WriteString(")")
	}
	if e.Err != nil {
		if msg != "" || e.HTTPStatus != 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// displayCode is the code as the text shows it: SQLite's own name for what
// sqld calls SQLITE_UNKNOWN, which is SQLITE_ERROR (as far as the code
// goes: sqld also sends it for codes it cannot name).
func (e *Error) displayCode() string {
	if e.Code == codeSQLiteUnknown {
		return "SQLITE_ERROR"
	}
	return e.Code
}

// Unwrap returns the network or decoding cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// SafeToRetry reports whether the failed request certainly had no effect on
// the server, so that sending it again cannot apply a write twice.
func (e *Error) SafeToRetry() bool { return e.safe }

// Is matches the error classes (ErrConstraint, ErrUniqueViolation, ErrBusy,
// ...) and, for a request that never left outside a transaction,
// driver.ErrBadConn.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrConstraint:
		return e.Code == codeSQLiteConstraint
	case ErrUniqueViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintUnique
	case ErrForeignKeyViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintForeignKey
	case ErrNotNullViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintNotNull
	case ErrCheckViolation:
		return e.SQLiteExtendedCode() == sqliteConstraintCheck
	case ErrBusy:
		return e.Code == codeSQLiteBusy || e.Code == codeSQLiteLocked || e.Code == codeTransactionBusy
	case ErrAuth:
		// sqld's authentication codes (a hello refused over WebSocket,
		// where there is no HTTP status) all start with AUTH_.
		return e.HTTPStatus == http.StatusUnauthorized || strings.HasPrefix(e.Code, codeAuthPrefix)
	case ErrPermission:
		return e.HTTPStatus == http.StatusForbidden || e.Code == codeSQLiteAuth || e.Code == codeSQLitePerm
	case ErrSyntax:
		return e.Code == codeSQLParseError || e.Code == codeSQLInputError ||
			e.Code == codeSQLNoStatement || e.Code == codeSQLManyStatements
	case ErrTooManyRequests:
		return e.HTTPStatus == http.StatusTooManyRequests || e.HTTPStatus == http.StatusServiceUnavailable
	case ErrNotFound:
		return e.HTTPStatus == http.StatusNotFound
	case ErrReadOnly:
		return e.Code == codeSQLiteReadOnly || e.Code == codeReadOnlyTx
	case ErrTxLost:
		return e.txLost
	case driver.ErrBadConn:
		return e.badConn
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
// (log/slog's JSONHandler) lose nothing.
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

// DSNError is a malformed DSN or Config. Its text never includes the DSN
// itself, which may carry a token.
type DSNError struct{ Msg string }

func (e *DSNError) Error() string { return "libsql: invalid DSN: " + e.Msg }

// asError returns err's *Error, or nil.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// hasCode reports whether err is an *Error with the Hrana code.
func hasCode(err error, code string) bool {
	e := asError(err)
	return e != nil && e.Code == code
}

// isSafe reports whether err is an *Error for a request that certainly had
// no effect.
func isSafe(err error) bool {
	e := asError(err)
	return e != nil && e.safe
}

// isStatementError reports whether err is the server's answer to one
// statement inside an exchange that succeeded: the stream, and a
// transaction on it, are intact.
func isStatementError(err error) bool {
	e := asError(err)
	return e != nil && e.stmt
}

// lost returns err marked as having ended the caller's transaction: a copy
// of an *Error with that mark (and no longer database/sql's to retry
// elsewhere), or an *Error wrapping anything else (a context's end reads
// "interrupted").
func lost(err error) *Error {
	if e := asError(err); e != nil {
		cp := *e
		cp.txLost, cp.badConn = true, false
		return &cp
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{txLost: true, Message: "interrupted", Err: err}
	}
	return &Error{txLost: true, Err: err}
}
