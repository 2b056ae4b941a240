package libsql

import (
	"errors"

	"github.com/gohrana/libsql/session"
)

// Error classes, for errors.Is. An *Error matches the classes its code or
// HTTP status belongs to:
//
//	if errors.Is(err, libsql.ErrConstraint) { ... }
var (
	// ErrConstraint: a constraint failed (SQLITE_CONSTRAINT).
	ErrConstraint = session.ErrConstraint
	// ErrUniqueViolation: a UNIQUE constraint failed, or a PRIMARY KEY one
	// (SQLite reports both as "UNIQUE constraint failed: t.c", and sqld
	// sends no extended code to tell them apart). Also ErrConstraint.
	ErrUniqueViolation = session.ErrUniqueViolation
	// ErrForeignKeyViolation: a FOREIGN KEY constraint failed. Also ErrConstraint.
	ErrForeignKeyViolation = session.ErrForeignKeyViolation
	// ErrNotNullViolation: a NOT NULL constraint failed. Also ErrConstraint.
	ErrNotNullViolation = session.ErrNotNullViolation
	// ErrCheckViolation: a CHECK constraint failed. Also ErrConstraint.
	ErrCheckViolation = session.ErrCheckViolation
	// ErrBusy: the database was busy or locked, or the server had too many
	// transactions (SQLITE_BUSY, SQLITE_LOCKED, TRANSACTION_BUSY).
	ErrBusy = session.ErrBusy
	// ErrAuth: authentication failed (HTTP 401: missing, expired or invalid token).
	ErrAuth = session.ErrAuth
	// ErrPermission: the token lacks a permission (HTTP 403, SQLITE_AUTH, SQLITE_PERM).
	ErrPermission = session.ErrPermission
	// ErrSyntax: the SQL could not be parsed or prepared.
	ErrSyntax = session.ErrSyntax
	// ErrTooManyRequests: the server is overloaded (HTTP 429 or 503).
	ErrTooManyRequests = session.ErrTooManyRequests
	// ErrNotFound: the server answered HTTP 404 (wrong URL or namespace).
	ErrNotFound = session.ErrNotFound
	// ErrReadOnly: a write was attempted where only reads are allowed (a
	// read-only transaction, a read-only database).
	ErrReadOnly = session.ErrReadOnly
	// ErrTxLost: the server no longer has the transaction (its stream
	// expired, the server restarted, or the lock was taken away after the
	// transaction timeout); it was rolled back, and the transaction must be
	// retried from the start.
	ErrTxLost = session.ErrTxLost
	// ErrTxDone: the transaction was already committed or rolled back.
	ErrTxDone = errors.New("libsql: transaction already finished")
)

// Error is an error reported by the server, or a failed exchange with it.
// It never contains the auth token. Code is the Hrana error code
// ("SQLITE_CONSTRAINT", "SQL_PARSE_ERROR", "STREAM_EXPIRED"; "" for HTTP
// errors without one), HTTPStatus the HTTP status of errors at the HTTP
// level, SafeToRetry whether the request certainly had no effect. A request
// that never left this process outside a transaction also matches
// driver.ErrBadConn, so that database/sql runs it again on another
// connection.
type Error = session.Error

// DSNError is a malformed DSN or Config. Its text never includes the DSN
// itself, which may carry a token.
type DSNError struct{ Msg string }

func (e *DSNError) Error() string { return "libsql: invalid DSN: " + e.Msg }
