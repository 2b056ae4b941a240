package libsql

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// ErrArgs: the arguments do not fit the statement, or hold a value the
	// server refuses (sqld's ARGS_INVALID, which it also answers for a
	// value over 5,000,000 bytes, and ARGS_BOTH_POSITIONAL_AND_NAMED).
	ErrArgs = errors.New("libsql: invalid arguments")
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
// Code, Message and HTTPStatus are the server's, untouched, as pgx's
// PgError keeps PostgreSQL's fields: the driver's words about where the
// error happened (which statement of a Batch or of a transaction's deferred
// statements, whether the batch was rolled back, whether a COMMIT may have
// run) are in fields of their own, and Error's text puts the two together.
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
	// Message is the server's message, exactly as it sent it ("SQLite
	// error: UNIQUE constraint failed: t.c"). For a failure the driver
	// found itself (no answer, an answer it cannot use, a statement it
	// refused to send) it says what failed; "" when the server skipped a
	// step without a word (see SQL).
	Message string
	// HTTPStatus is the HTTP status of a failure at the HTTP level; 0
	// otherwise.
	HTTPStatus int
	// Err is the network or decoding cause, if any.
	Err error

	// Statement is the position, from 1, of the statement the error is
	// about: in its Batch, or, when Deferred, among its transaction's
	// deferred statements. 0 when the error is not about one statement of
	// several.
	Statement int
	// SQL is, with Statement, that statement's SQL, cut short when long;
	// without it, the statement the driver added around the caller's that
	// failed or that the server skipped: "BEGIN", "COMMIT", "SAVEPOINT
	// libsql_batch", ...; "" otherwise.
	SQL string
	// Deferred says that the error is about statements that deferred
	// execution queued: the one at Statement, or, with Statement 0, the
	// whole queue, which the server refused before running any of it.
	Deferred bool
	// RolledBack says that the error rolled the Batch back (to its
	// savepoint, inside a transaction): none of its statements took
	// effect.
	RolledBack bool
	// OutcomeUnknown says that a COMMIT got no answer (a network failure,
	// or a 5xx a proxy may have sent after forwarding it): it may have
	// committed.
	OutcomeUnknown bool
	// Note is the driver's remark on what happened around the error, such
	// as that a Query whose result was too large to answer ran, and why it
	// was not run again; "" if none.
	Note string

	safe    bool // the request certainly had no effect
	badConn bool // it never left and lost no state: database/sql may retry it elsewhere
	txLost  bool // it ended the caller's transaction
	stmt    bool // the server's answer to one statement inside an exchange that succeeded
	skipped bool // the server skipped the step at SQL or Statement, saying nothing
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

// stepError is the error of a batch step that did not succeed: the
// server's error for it, or that it skipped it. The step was the server's
// to answer, so the exchange itself succeeded.
func stepError(s *codec.StepOutcome) *Error {
	if s.Status == codec.StepFailed {
		return stmtError(&s.Error)
	}
	return &Error{stmt: true, skipped: true}
}

// driverStepError is the error of a statement the driver added around the
// caller's (BEGIN, COMMIT, a Batch's SAVEPOINT or RELEASE), sql, that
// failed or was skipped; rolledBack says that a Batch was rolled back
// because of it.
func driverStepError(s *codec.StepOutcome, sql string, rolledBack bool) *Error {
	e := stepError(s)
	e.SQL, e.RolledBack = sql, rolledBack
	return e
}

// beginError is the error of a transaction's BEGIN that did not succeed,
// however it was sent.
func beginError(s *codec.StepOutcome) *Error { return driverStepError(s, "BEGIN", false) }

// batchStmtError is the error of statement i (from 0) of a Batch, whose
// SQL is sql, which failed and rolled the batch back.
func batchStmtError(i int, sql string, he *codec.Error) *Error {
	e := stmtError(he)
	e.Statement, e.SQL, e.RolledBack = i+1, cutSQL(sql), true
	return e
}

// deferredStmtError is the error of the deferred statement at position seq
// (from 1), whose SQL is sql, which failed or was skipped. The caller
// carried on as if it had worked, so the transaction cannot: it is lost.
func deferredStmtError(seq int, sql string, s *codec.StepOutcome) *Error {
	e := stepError(s)
	e.Statement, e.SQL, e.Deferred, e.txLost = seq, sqlSnippet(sql), true, true
	return e
}

// refused names err, for a batch of deferred statements, as the server's
// refusal of the whole batch when it is a statement error about no step in
// particular (sqld compiles the whole batch before running it, so a parse
// error in any statement refuses all of them).
func refused(err error) error {
	e := asError(err)
	if e == nil || !e.stmt || e.SQL != "" || e.Statement != 0 {
		return err
	}
	cp := *e
	cp.Deferred = true
	return &cp
}

// readOnlyError refuses, before sending it, a statement that would write
// where only reads are allowed; msg says where.
func readOnlyError(msg string) *Error {
	return &Error{Code: codeReadOnlyTx, Message: msg}
}

// batchReadOnlyError is readOnlyError for statement i (from 0) of a Batch,
// whose SQL is sql.
func batchReadOnlyError(i int, sql, msg string) *Error {
	e := readOnlyError(msg)
	e.Statement, e.SQL = i+1, cutSQL(sql)
	return e
}

// protocolError is a failure the driver found in the server's answer (or
// in its own bookkeeping of it), which msg describes.
func protocolError(msg string) *Error { return &Error{Message: msg} }

// stepCountError is the error of a batch of want steps that the server
// answered with got results.
func stepCountError(want, got int) *Error {
	return protocolError(fmt.Sprintf("server answered a %d-step batch with %d results", want, got))
}

// truncatedError is the error of a cursor whose answer ended early.
func truncatedError() *Error {
	return &Error{Message: "read failed", Err: transport.ErrCursorTruncated}
}

// slotWaitError is the error of a wait for one of slots write slots that
// ctxErr, its context's end, cut short: nothing was sent.
func slotWaitError(slots int, ctxErr error) *Error {
	return &Error{
		Message: fmt.Sprintf("waiting for one of the %d write slots (maxWriters)", slots),
		safe:    true,
		Err:     ctxErr,
	}
}

// withNote returns err with the driver's note: a copy of an *Error with
// Note set, or err itself if it is no *Error.
func withNote(err error, note string) error {
	e := asError(err)
	if e == nil {
		return err
	}
	cp := *e
	cp.Note = note
	return &cp
}

// inTxRequest returns err as the error of a request of a transaction,
// which database/sql must never retry on another connection: a copy of an
// *Error without that mark, or err itself.
func inTxRequest(err error) error {
	e := asError(err)
	if e == nil || !e.badConn {
		return err
	}
	cp := *e
	cp.badConn = false
	return &cp
}

// commitUnknown returns err, the failure of a COMMIT that may have run
// nonetheless, marked so: a copy of an *Error with OutcomeUnknown (and no
// longer database/sql's to retry elsewhere), or err itself.
func commitUnknown(err error) error {
	e := asError(err)
	if e == nil {
		return err
	}
	cp := *e
	cp.OutcomeUnknown, cp.badConn = true, false
	return &cp
}

// Error returns the error's text: the driver's words about where it
// happened, then the server's message, its code, and the cause.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("libsql: ")
	if e.txLost {
		b.WriteString("transaction lost: ")
	}
	if e.OutcomeUnknown {
		b.WriteString("the outcome of COMMIT is unknown: ")
	}
	e.writeContext(&b)
	e.writeCause(&b)
	if e.RolledBack && e.Statement == 0 {
		b.WriteString(" (the batch was rolled back)")
	}
	if e.Note != "" {
		b.WriteString(" (")
		b.WriteString(e.Note)
		b.WriteString(")")
	}
	return b.String()
}

// writeContext writes the driver's words that go before the server's
// message: which statement failed.
func (e *Error) writeContext(b *strings.Builder) {
	switch {
	case e.Statement > 0 && e.Deferred:
		fmt.Fprintf(b, "deferred statement #%d (%s) failed: ", e.Statement, e.SQL)
	case e.Statement > 0:
		fmt.Fprintf(b, "batch statement #%d (%s)", e.Statement, strconv.Quote(e.SQL))
		if e.RolledBack {
			b.WriteString(" failed, and the batch was rolled back: ")
		} else {
			b.WriteString(": ")
		}
	case e.Deferred:
		b.WriteString("deferred statements refused: ")
	case e.SQL != "" && !e.skipped:
		b.WriteString(e.SQL)
		b.WriteString(" failed: ")
	}
}

// writeCause writes what the server said (or that it skipped the step),
// with the HTTP status, the code and the network or decoding cause.
func (e *Error) writeCause(b *strings.Builder) {
	if e.skipped {
		if e.Statement > 0 || e.SQL == "" {
			b.WriteString("the server skipped it")
		} else {
			b.WriteString("the server skipped ")
			b.WriteString(e.SQL)
		}
		return
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
	case ErrArgs:
		return e.Code == codeArgsInvalid || e.Code == codeArgsBothPositionalAndNamed
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
// "HranaCode"; "Message" (the server's message, without the driver's
// context) and "HTTPStatus" are the fields of those names, and "Error" is
// the error's text, context included, so that loggers that encode errors
// as JSON (log/slog's JSONHandler) lose nothing.
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

// cutSQL shortens a Batch statement's SQL for its error, at a character's
// start.
func cutSQL(sql string) string {
	const max = 200
	if len(sql) <= max {
		return sql
	}
	return sql[:runeStart(sql, max)] + "..."
}

// sqlSnippet shortens a deferred statement's SQL for its error: its first
// line, cut at a character's start.
func sqlSnippet(sql string) string {
	const max = 60
	if i := strings.IndexAny(sql, "\r\n"); i >= 0 {
		sql = sql[:i] + " …"
	}
	if len(sql) <= max {
		return sql
	}
	return sql[:runeStart(sql, max)] + " …"
}

// runeStart returns the start of the character of s at byte i or, if none
// starts there, of the one before.
func runeStart(s string, i int) int {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
