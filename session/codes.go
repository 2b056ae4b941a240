package session

// Hrana error codes that the driver acts on or classifies, as sqld 0.24
// sends them in Error.code (see hrana.md §9.3). They are the one place the
// driver spells these strings.
const (
	CodeSQLParseError      = "SQL_PARSE_ERROR"
	CodeSQLInputError      = "SQL_INPUT_ERROR"
	CodeSQLNoStatement     = "SQL_NO_STATEMENT"
	CodeSQLManyStatements  = "SQL_MANY_STATEMENTS"
	CodeTransactionTimeout = "TRANSACTION_TIMEOUT"
	CodeTransactionBusy    = "TRANSACTION_BUSY"
	CodeResponseTooLarge   = "RESPONSE_TOO_LARGE"
	CodeStreamExpired      = "STREAM_EXPIRED"

	CodeSQLiteConstraint = "SQLITE_CONSTRAINT"
	CodeSQLiteBusy       = "SQLITE_BUSY"
	CodeSQLiteLocked     = "SQLITE_LOCKED"
	CodeSQLiteAuth       = "SQLITE_AUTH"
	CodeSQLitePerm       = "SQLITE_PERM"
	CodeSQLiteReadOnly   = "SQLITE_READONLY"

	// CodeReadOnlyTx is the driver's own code for a write refused inside a
	// read-only transaction; no server sends it.
	CodeReadOnlyTx = "READONLY_TRANSACTION"
)
