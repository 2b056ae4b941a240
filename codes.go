package libsql

// Hrana error codes that the driver acts on or classifies, as sqld 0.24
// sends them in Error.code (see hrana.md §9.3). They are the one place the
// driver spells these strings.
const (
	codeSQLParseError     = "SQL_PARSE_ERROR"
	codeSQLInputError     = "SQL_INPUT_ERROR"
	codeSQLNoStatement    = "SQL_NO_STATEMENT"
	codeSQLManyStatements = "SQL_MANY_STATEMENTS"
	codeArgsInvalid       = "ARGS_INVALID"

	codeArgsBothPositionalAndNamed = "ARGS_BOTH_POSITIONAL_AND_NAMED"

	codeTransactionTimeout = "TRANSACTION_TIMEOUT"
	codeTransactionBusy    = "TRANSACTION_BUSY"
	codeResponseTooLarge   = "RESPONSE_TOO_LARGE"
	codeStreamExpired      = "STREAM_EXPIRED"

	// codeAuthPrefix starts every code of sqld's authentication errors
	// (AUTH_JWT_INVALID, AUTH_JWT_EXPIRED, AUTH_HEADER_NOT_FOUND, ...).
	codeAuthPrefix = "AUTH_"

	// The codes of errors SQLite reported: sqld sends SQLite's primary
	// result code by name (never an extended one), and SQLITE_UNKNOWN for
	// SQLITE_ERROR and any code it has no name for.
	codeSQLiteUnknown    = "SQLITE_UNKNOWN"
	codeSQLiteInternal   = "SQLITE_INTERNAL"
	codeSQLitePerm       = "SQLITE_PERM"
	codeSQLiteAbort      = "SQLITE_ABORT"
	codeSQLiteBusy       = "SQLITE_BUSY"
	codeSQLiteLocked     = "SQLITE_LOCKED"
	codeSQLiteNoMem      = "SQLITE_NOMEM"
	codeSQLiteReadOnly   = "SQLITE_READONLY"
	codeSQLiteInterrupt  = "SQLITE_INTERRUPT"
	codeSQLiteIOErr      = "SQLITE_IOERR"
	codeSQLiteCorrupt    = "SQLITE_CORRUPT"
	codeSQLiteNotFound   = "SQLITE_NOTFOUND"
	codeSQLiteFull       = "SQLITE_FULL"
	codeSQLiteCantOpen   = "SQLITE_CANTOPEN"
	codeSQLiteProtocol   = "SQLITE_PROTOCOL"
	codeSQLiteSchema     = "SQLITE_SCHEMA"
	codeSQLiteTooBig     = "SQLITE_TOOBIG"
	codeSQLiteConstraint = "SQLITE_CONSTRAINT"
	codeSQLiteMismatch   = "SQLITE_MISMATCH"
	codeSQLiteMisuse     = "SQLITE_MISUSE"
	codeSQLiteNoLFS      = "SQLITE_NOLFS"
	codeSQLiteAuth       = "SQLITE_AUTH"
	codeSQLiteRange      = "SQLITE_RANGE"
	codeSQLiteNotADB     = "SQLITE_NOTADB"

	// codeReadOnlyTx is the driver's own code for a write refused inside a
	// read-only transaction; no server sends it.
	codeReadOnlyTx = "READONLY_TRANSACTION"
)
