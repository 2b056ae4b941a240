package libsql

import (
	"context"
	"errors"
	"net/http"
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
	// ErrBusy: the database was busy or locked, or the server had too many
	// transactions (SQLITE_BUSY, SQLITE_LOCKED, TRANSACTION_BUSY).
	ErrBusy = errors.New("libsql: database busy")
	// ErrAuth: authentication failed (HTTP 401: missing, expired or invalid token).
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

// Error is an error reported by the server, or a failed exchange with it.
// It never contains the auth token.
type Error struct {
	// Code is the Hrana error code, e.g. "SQLITE_CONSTRAINT",
	// "SQL_PARSE_ERROR", "STREAM_EXPIRED"; "" for HTTP errors without one.
	Code string
	// Message is the server's message.
	Message string
	// HTTPStatus is the HTTP status for errors at the HTTP level; 0 for
	// errors of one statement inside a successful response.
	HTTPStatus int
	// Safe reports that the request certainly had no effect on the server,
	// so repeating it cannot apply a write twice.
	Safe bool
	// TxLost is set when the error ended the caller's transaction.
	TxLost bool
	err    error // network or decoding cause
}

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
	if e.err != nil {
		if e.Message != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.err.Error())
	}
	return b.String()
}

// Unwrap returns the network or decoding cause, if any.
func (e *Error) Unwrap() error { return e.err }

// SafeToRetry reports whether the failed request certainly had no effect.
func (e *Error) SafeToRetry() bool { return e.Safe }

// Is matches the error classes (ErrConstraint, ErrBusy, ...).
func (e *Error) Is(target error) bool {
	switch target {
	case ErrConstraint:
		return e.Code == "SQLITE_CONSTRAINT"
	case ErrBusy:
		return e.Code == "SQLITE_BUSY" || e.Code == "SQLITE_LOCKED" || e.Code == "TRANSACTION_BUSY"
	case ErrAuth:
		return e.HTTPStatus == http.StatusUnauthorized
	case ErrPermission:
		return e.HTTPStatus == http.StatusForbidden || e.Code == "SQLITE_AUTH" || e.Code == "SQLITE_PERM"
	case ErrSyntax:
		return e.Code == "SQL_PARSE_ERROR" || e.Code == "SQL_INPUT_ERROR" ||
			e.Code == "SQL_NO_STATEMENT" || e.Code == "SQL_MANY_STATEMENTS"
	case ErrTooManyRequests:
		return e.HTTPStatus == http.StatusTooManyRequests || e.HTTPStatus == http.StatusServiceUnavailable
	case ErrNotFound:
		return e.HTTPStatus == http.StatusNotFound
	case ErrReadOnly:
		return e.Code == "SQLITE_READONLY" || e.Code == codeReadOnlyTx
	case ErrTxLost:
		return e.TxLost
	}
	return false
}

// codeReadOnlyTx is the driver's own code for a write refused in a
// read-only transaction.
const codeReadOnlyTx = "READONLY_TRANSACTION"

// DSNError is a malformed DSN or Config. Its text never includes the DSN
// itself, which may carry a token.
type DSNError struct{ Msg string }

func (e *DSNError) Error() string { return "libsql: invalid DSN: " + e.Msg }

// stmtError converts a Hrana error from a statement result.
func stmtError(he *codec.Error) *Error {
	return &Error{Code: he.Code, Message: he.Message}
}

// wrapErr converts what the transport returns into the driver's errors.
// Context errors stay recognisable with errors.Is.
func wrapErr(err error) error {
	var te *transport.Error
	if !errors.As(err, &te) {
		return err
	}
	e := &Error{Code: te.Code, Message: te.Message, HTTPStatus: te.Status, Safe: !te.Sent, err: te.Err}
	if te.Status == 0 && te.Message == "" {
		e.Message = te.Op + " failed"
	}
	return e
}

// isContextErr reports whether err came from a cancelled or expired context.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
