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

	// codeAuthPrefix starts every code of sqld's authentication errors
	// (AUTH_JWT_INVALID, AUTH_JWT_EXPIRED, AUTH_HEADER_NOT_FOUND, ...).
	codeAuthPrefix = "AUTH_"

	// The codes of errors SQLite reported: sqld sends SQLite's primary
	// result code by name (never an extended one), and SQLITE_UNKNOWN for
	// SQLITE_ERROR and any code it has no name for.
	CodeSQLiteUnknown    = "SQLITE_UNKNOWN"
	CodeSQLiteInternal   = "SQLITE_INTERNAL"
	CodeSQLitePerm       = "SQLITE_PERM"
	CodeSQLiteAbort      = "SQLITE_ABORT"
	CodeSQLiteBusy       = "SQLITE_BUSY"
	CodeSQLiteLocked     = "SQLITE_LOCKED"
	CodeSQLiteNoMem      = "SQLITE_NOMEM"
	CodeSQLiteReadOnly   = "SQLITE_READONLY"
	CodeSQLiteInterrupt  = "SQLITE_INTERRUPT"
	CodeSQLiteIOErr      = "SQLITE_IOERR"
	CodeSQLiteCorrupt    = "SQLITE_CORRUPT"
	CodeSQLiteNotFound   = "SQLITE_NOTFOUND"
	CodeSQLiteFull       = "SQLITE_FULL"
	CodeSQLiteCantOpen   = "SQLITE_CANTOPEN"
	CodeSQLiteProtocol   = "SQLITE_PROTOCOL"
	CodeSQLiteSchema     = "SQLITE_SCHEMA"
	CodeSQLiteTooBig     = "SQLITE_TOOBIG"
	CodeSQLiteConstraint = "SQLITE_CONSTRAINT"
	CodeSQLiteMismatch   = "SQLITE_MISMATCH"
	CodeSQLiteMisuse     = "SQLITE_MISUSE"
	CodeSQLiteNoLFS      = "SQLITE_NOLFS"
	CodeSQLiteAuth       = "SQLITE_AUTH"
	CodeSQLiteRange      = "SQLITE_RANGE"
	CodeSQLiteNotADB     = "SQLITE_NOTADB"

	// CodeReadOnlyTx is the driver's own code for a write refused inside a
	// read-only transaction; no server sends it.
	CodeReadOnlyTx = "READONLY_TRANSACTION"
)
