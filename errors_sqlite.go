package libsql

import "strings"

// SQLite's result codes (https://www.sqlite.org/rescode.html), the numbers
// mattn/go-sqlite3 puts in sqlite3.Error's Code and ExtendedCode. An
// extended code is its primary code plus a detail times 256.
const (
	sqliteError      = 1
	sqliteInternal   = 2
	sqlitePerm       = 3
	sqliteAbort      = 4
	sqliteBusy       = 5
	sqliteLocked     = 6
	sqliteNoMem      = 7
	sqliteReadOnly   = 8
	sqliteInterrupt  = 9
	sqliteIOErr      = 10
	sqliteCorrupt    = 11
	sqliteNotFound   = 12
	sqliteFull       = 13
	sqliteCantOpen   = 14
	sqliteProtocol   = 15
	sqliteSchema     = 17
	sqliteTooBig     = 18
	sqliteConstraint = 19
	sqliteMismatch   = 20
	sqliteMisuse     = 21
	sqliteNoLFS      = 22
	sqliteAuth       = 23
	sqliteRange      = 25
	sqliteNotADB     = 26

	sqliteConstraintCheck      = sqliteConstraint | 1<<8  // 275
	sqliteConstraintForeignKey = sqliteConstraint | 3<<8  // 787
	sqliteConstraintNotNull    = sqliteConstraint | 5<<8  // 1299
	sqliteConstraintUnique     = sqliteConstraint | 8<<8  // 2067
	sqliteConstraintDatatype   = sqliteConstraint | 12<<8 // 3091
)

// primaryCodes maps the Hrana code of an error SQLite reported to SQLite's
// primary result code. sqld names every primary code but SQLITE_ERROR,
// which it sends as SQLITE_UNKNOWN (together with codes it cannot name, so
// 1 is a guess for those), or as SQL_INPUT_ERROR when SQLite's prepare
// failed at a known offset. The other codes of sqld's own (SQL_PARSE_ERROR
// from its parser, STREAM_EXPIRED, ...) are not SQLite's and have none.
var primaryCodes = map[string]int{
	codeSQLiteUnknown:    sqliteError,
	codeSQLInputError:    sqliteError,
	codeSQLiteInternal:   sqliteInternal,
	codeSQLitePerm:       sqlitePerm,
	codeSQLiteAbort:      sqliteAbort,
	codeSQLiteBusy:       sqliteBusy,
	codeSQLiteLocked:     sqliteLocked,
	codeSQLiteNoMem:      sqliteNoMem,
	codeSQLiteReadOnly:   sqliteReadOnly,
	codeSQLiteInterrupt:  sqliteInterrupt,
	codeSQLiteIOErr:      sqliteIOErr,
	codeSQLiteCorrupt:    sqliteCorrupt,
	codeSQLiteNotFound:   sqliteNotFound,
	codeSQLiteFull:       sqliteFull,
	codeSQLiteCantOpen:   sqliteCantOpen,
	codeSQLiteProtocol:   sqliteProtocol,
	codeSQLiteSchema:     sqliteSchema,
	codeSQLiteTooBig:     sqliteTooBig,
	codeSQLiteConstraint: sqliteConstraint,
	codeSQLiteMismatch:   sqliteMismatch,
	codeSQLiteMisuse:     sqliteMisuse,
	codeSQLiteNoLFS:      sqliteNoLFS,
	codeSQLiteAuth:       sqliteAuth,
	codeSQLiteRange:      sqliteRange,
	codeSQLiteNotADB:     sqliteNotADB,
}

// constraintCodes recovers the extended code of a SQLITE_CONSTRAINT error,
// which sqld does not send, from the start of SQLite's message, whose
// wording SQLite keeps stable (sqlite3HaltConstraint and its callers).
//
// SQLite words a PRIMARY KEY clash (SQLITE_CONSTRAINT_PRIMARYKEY, 1555)
// and a rowid clash (SQLITE_CONSTRAINT_ROWID) exactly like a UNIQUE one:
// "UNIQUE constraint failed: t.id". Telling them apart needs the schema, so
// every such error is SQLITE_CONSTRAINT_UNIQUE here, which covers all
// duplicate keys; GORM translates 1555 and 2067 alike. Other messages (a
// trigger's RAISE text, a virtual table's) leave the primary code.
var constraintCodes = []struct {
	prefix string
	code   int
}{
	{"UNIQUE constraint failed: ", sqliteConstraintUnique},
	{"FOREIGN KEY constraint failed", sqliteConstraintForeignKey},
	{"NOT NULL constraint failed: ", sqliteConstraintNotNull},
	{"CHECK constraint failed: ", sqliteConstraintCheck},
	{"cannot store ", sqliteConstraintDatatype}, // a STRICT table: "cannot store TEXT value in INTEGER column t.c"
}

// sqliteMessagePrefix starts sqld's message for an error SQLite reported:
// "SQLite error: <sqlite3_errmsg>".
const sqliteMessagePrefix = "SQLite error: "

// SQLiteCode returns SQLite's primary result code for the error (19 for
// SQLITE_CONSTRAINT, 5 for SQLITE_BUSY, 1 for SQLITE_ERROR, which sqld
// calls SQLITE_UNKNOWN), or 0 when SQLite did not report it: HTTP and
// network failures, and sqld's own codes such as SQL_PARSE_ERROR.
func (e *Error) SQLiteCode() int {
	if e == nil {
		return 0
	}
	return primaryCodes[e.Code]
}

// SQLiteExtendedCode returns SQLite's extended result code for the error,
// as far as the message tells it: for SQLITE_CONSTRAINT, 2067 for UNIQUE
// (PRIMARY KEY clashes included, which SQLite words alike), 787 for
// FOREIGN KEY, 1299 for NOT NULL, 275 for CHECK, 3091 for a STRICT
// table's type check. Otherwise it is the primary code, as SQLite's own
// sqlite3_extended_errcode is when there is no detail, and 0 when SQLite
// did not report the error.
func (e *Error) SQLiteExtendedCode() int {
	primary := e.SQLiteCode()
	if primary != sqliteConstraint {
		return primary
	}
	// Message is sqld's, untouched: SQLite's own text follows its prefix
	// (the driver's words are in other fields).
	msg := strings.TrimPrefix(e.Message, sqliteMessagePrefix)
	for _, c := range constraintCodes {
		if strings.HasPrefix(msg, c.prefix) {
			return c.code
		}
	}
	return primary
}
