package sqlscan

import "strings"

// A statement is the run of tokens up to the ';' that ends it (split.go:
// not one inside a trigger's body) or the end of the text, white space
// and comments aside; an empty one (";;") is no statement, as in SQLite. The classifiers below judge the first statement of a text by
// its leading keywords, and a text of more than one statement as none of
// theirs. A statement begins with its keyword: SQLite takes no "(BEGIN)"
// or "(SELECT 1)", so parentheses are not looked through.

// cursor walks the tokens of a text that count: neither white space nor
// comments.
type cursor struct {
	s     Scanner
	t     Token      // the current token; EOF at the end
	split splitState // after t
}

// newCursor returns a cursor at the first token of the first statement.
func newCursor(src string) cursor {
	c := cursor{s: NewScanner(src)}
	c.advance()
	for c.atSemi() {
		c.advance()
	}
	return c
}

func (c *cursor) advance() {
	for {
		c.t = c.s.Next()
		c.split = c.split.next(c.t, c.s.src)
		if c.t.Kind != Space && c.t.Kind != Comment {
			return
		}
	}
}

// atSemi reports whether the current token is a ';' that ends a
// statement.
func (c *cursor) atSemi() bool { return c.t.Kind == Semicolon && c.split == splitStart }

func (c *cursor) text() string { return c.s.src[c.t.Start:c.t.End] }

// keyword consumes the current token if it is the word kw (upper case),
// in any case.
func (c *cursor) keyword(kw string) bool {
	if c.t.Kind == Word && equalFold(c.text(), kw) {
		c.advance()
		return true
	}
	return false
}

// punct consumes the current token if it is the punctuation p.
func (c *cursor) punct(p string) bool {
	if c.t.Kind == Punct && c.text() == p {
		c.advance()
		return true
	}
	return false
}

// name consumes a name (SQLite's nm): an identifier, quoted or not, or a
// string. Reserved words are not told apart: SQLite refuses those.
func (c *cursor) name() bool {
	switch c.t.Kind {
	case Word, Quoted, String:
		c.advance()
		return true
	}
	return false
}

// skipStatement moves to the ';' or the end that ends the statement.
func (c *cursor) skipStatement() {
	for c.t.Kind != EOF && !c.atSemi() {
		c.advance()
	}
}

// atEnd reports whether the text ends here, but for ';', white space and
// comments: no other statement follows.
func (c *cursor) atEnd() bool {
	for c.atSemi() {
		c.advance()
	}
	return c.t.Kind == EOF
}

// equalFold reports whether s is kw, an upper-case ASCII word, in any
// case. Only ASCII letters fold: SQLite's keywords are ASCII, and "ſelect"
// is not SELECT.
func equalFold(s, kw string) bool {
	if len(s) != len(kw) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != kw[i] && c != kw[i]|0x20 {
			return false
		}
	}
	return true
}

// FirstKeyword returns the word the first statement of sql begins with,
// as written ("select"), after white space, comments and empty statements;
// "" if the statement begins with anything else or there is none.
// Parentheses are not looked through: SQLite takes no "(SELECT 1)".
func FirstKeyword(sql string) string {
	c := newCursor(sql)
	if c.t.Kind != Word {
		return ""
	}
	return c.text()
}

// ReadOnly reports whether sql certainly only reads, judged from its
// tokens alone: it is one statement that begins with SELECT, VALUES or
// EXPLAIN (which runs nothing), or with WITH and has none of the words
// INSERT, UPDATE, DELETE and REPLACE (a common table expression may
// precede a write; a column or function of such a name counts too). Any
// doubt means it may write: PRAGMA, several statements, anything else.
func ReadOnly(sql string) bool {
	c := newCursor(sql)
	if c.t.Kind != Word {
		return false
	}
	switch kw := c.text(); {
	case equalFold(kw, "SELECT"), equalFold(kw, "VALUES"), equalFold(kw, "EXPLAIN"):
		if strings.IndexByte(sql[c.t.End:], ';') < 0 {
			return true // no other statement can follow
		}
		c.skipStatement()
	case equalFold(kw, "WITH"):
		for c.advance(); c.t.Kind != EOF && !c.atSemi(); c.advance() {
			if c.t.Kind == Word && writeWord(c.text()) {
				return false
			}
		}
	default:
		return false
	}
	return c.atEnd()
}

func writeWord(w string) bool {
	switch len(w) {
	case 6:
		return equalFold(w, "INSERT") || equalFold(w, "UPDATE") || equalFold(w, "DELETE")
	case 7:
		return equalFold(w, "REPLACE")
	}
	return false
}

// TxKind is what a statement does to the transaction, if it is one of
// SQLite's transaction-control statements.
type TxKind uint8

// The transaction-control statements, in SQLite's grammar; the names of
// transactions are ignored, as SQLite ignores them.
const (
	NotTx        TxKind = iota // any other statement
	TxBegin                    // BEGIN [DEFERRED | IMMEDIATE | EXCLUSIVE] [TRANSACTION [name]]
	TxCommit                   // COMMIT or END [TRANSACTION [name]]
	TxRollback                 // ROLLBACK [TRANSACTION [name]]
	TxRollbackTo               // ROLLBACK [TRANSACTION [name]] TO [SAVEPOINT] name
	TxSavepoint                // SAVEPOINT name
	TxRelease                  // RELEASE [SAVEPOINT] name
)

var txNames = [...]string{"NotTx", "TxBegin", "TxCommit", "TxRollback", "TxRollbackTo", "TxSavepoint", "TxRelease"}

// String returns the name of k, as in the constant's name.
func (k TxKind) String() string {
	if int(k) < len(txNames) {
		return txNames[k]
	}
	return "TxKind(?)"
}

// TxControl returns the kind of transaction-control statement sql is, or
// NotTx: for another statement, one that does not follow the grammar
// (which SQLite refuses), EXPLAIN (which runs nothing) or a text of more
// than one statement.
func TxControl(sql string) TxKind {
	c := newCursor(sql)
	var k TxKind
	switch {
	case c.keyword("BEGIN"):
		_ = c.keyword("DEFERRED") || c.keyword("IMMEDIATE") || c.keyword("EXCLUSIVE")
		c.transactionOpt()
		k = TxBegin
	case c.keyword("COMMIT"), c.keyword("END"):
		c.transactionOpt()
		k = TxCommit
	case c.keyword("ROLLBACK"):
		c.transactionOpt()
		k = TxRollback
		if c.keyword("TO") {
			c.keyword("SAVEPOINT")
			if !c.name() {
				return NotTx
			}
			k = TxRollbackTo
		}
	case c.keyword("SAVEPOINT"):
		if !c.name() {
			return NotTx
		}
		k = TxSavepoint
	case c.keyword("RELEASE"):
		c.keyword("SAVEPOINT")
		if !c.name() {
			return NotTx
		}
		k = TxRelease
	default:
		return NotTx
	}
	if !c.atEnd() {
		return NotTx
	}
	return k
}

// AnyBeginsTx reports whether some statement of sql begins with BEGIN or
// SAVEPOINT, the statements that may begin a transaction: of a script,
// whether it may leave one open. A trigger's body is part of its CREATE
// TRIGGER statement, so its statements are not looked at.
func AnyBeginsTx(sql string) bool {
	c := newCursor(sql)
	for c.t.Kind != EOF {
		if c.t.Kind == Word && (equalFold(c.text(), "BEGIN") || equalFold(c.text(), "SAVEPOINT")) {
			return true
		}
		c.skipStatement()
		for c.atSemi() {
			c.advance()
		}
	}
	return false
}

// transactionOpt consumes SQLite's trans_opt, [TRANSACTION [name]]. TO is
// a reserved word, never a name: it begins ROLLBACK's TO clause.
func (c *cursor) transactionOpt() {
	if c.keyword("TRANSACTION") && !(c.t.Kind == Word && equalFold(c.text(), "TO")) {
		c.name()
	}
}

// Pragma reports whether sql is one statement that sets a pragma,
// PRAGMA [schema.]name = value or PRAGMA [schema.]name(value), where the
// value is a number with an optional sign or a name (a word, quoted or
// not, or a string), as SQLite's grammar has it. It returns
// the pragma's name and its key, the name with its schema as written
// ("main.cache_size", or "cache_size" without one), both in lower case
// (ASCII only, as SQLite compares them). A query (PRAGMA name) is not one.
func Pragma(sql string) (key, name string, ok bool) {
	c := newCursor(sql)
	if !c.keyword("PRAGMA") || c.t.Kind != Word {
		return "", "", false
	}
	var schema string
	name = c.text()
	c.advance()
	if c.punct(".") {
		if c.t.Kind != Word {
			return "", "", false
		}
		schema, name = name, c.text()
		c.advance()
	}
	switch {
	case c.punct("="):
		ok = c.pragmaValue()
	case c.punct("("):
		ok = c.pragmaValue() && c.punct(")")
	}
	if !ok || !c.atEnd() {
		return "", "", false
	}
	name = lower(name)
	if schema == "" {
		return name, name, true
	}
	return lower(schema) + "." + name, name, true
}

// pragmaValue consumes a pragma's value: a number with an optional sign,
// or a name (ON, DELETE and DEFAULT are words too).
func (c *cursor) pragmaValue() bool {
	signed := c.punct("+") || c.punct("-")
	if c.t.Kind == Number {
		c.advance()
		return true
	}
	return !signed && c.name()
}

// lower returns s with ASCII letters in lower case; s itself if it has no
// upper-case letter, which is the common case and allocates nothing.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// CreatesTemp reports whether sql begins with a CREATE statement of a
// TEMP object: CREATE TEMP (or TEMPORARY) TABLE, VIEW or TRIGGER, or a
// CREATE whose object's name has the schema temp (CREATE TABLE
// temp.t ...). Such an object lives on one connection only.
func CreatesTemp(sql string) bool {
	c := newCursor(sql)
	if !c.keyword("CREATE") {
		return false
	}
	if c.keyword("TEMP") || c.keyword("TEMPORARY") {
		return true
	}
	_ = c.keyword("UNIQUE") || c.keyword("VIRTUAL")
	if !(c.keyword("TABLE") || c.keyword("VIEW") || c.keyword("TRIGGER") || c.keyword("INDEX")) {
		return false
	}
	if c.keyword("IF") && !(c.keyword("NOT") && c.keyword("EXISTS")) {
		return false
	}
	schema := c.t
	if !c.name() || !c.punct(".") {
		return false
	}
	text := c.s.src[schema.Start:schema.End]
	if schema.Kind != Word && len(text) >= 2 {
		text = text[1 : len(text)-1] // "temp", [temp], `temp`, 'temp'
	}
	return equalFold(text, "TEMP")
}
