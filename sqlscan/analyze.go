package sqlscan

// A Statement is everything the driver's rules say about an SQL text: its
// parameters, whether it is several statements, its first keyword,
// whether it certainly only reads, whether it controls or may begin a
// transaction, and whether it sets a pragma. Analyze makes one; the
// driver keeps it with a prepared statement and hands it down the layers,
// so that a text is read once, whatever asks.
type Statement struct {
	Params // the parameters, and Multi

	// Keyword is the word the first statement begins with, as written
	// (FirstKeyword); "" if it begins with anything else.
	Keyword string
	// ReadOnly reports that the text certainly only reads (ReadOnly).
	ReadOnly bool
	// Tx is the transaction control of a text of one statement
	// (TxControl); NotTx for a script.
	Tx TxKind
	// BeginsTx reports that the text may begin a transaction: a BEGIN or
	// SAVEPOINT, or a script with one (AnyBeginsTx).
	BeginsTx bool
	// PragmaKey and PragmaName are those of a text that sets a pragma
	// (Pragma): the lower-case name with its schema if given, and the
	// name. Both are "" otherwise.
	PragmaKey, PragmaName string
}

// SetsPragma reports whether the text is one statement that sets a
// pragma.
func (s *Statement) SetsPragma() bool { return s.PragmaName != "" }

// Analyze reads sql once for everything Statement says: one pass over
// its tokens for the parameters, and the first tokens for the rest (all
// of them only for a WITH, whose writes may come late, and for a script,
// whose later statements may begin a transaction). It allocates only for
// a text with parameters, and for a pragma's lower-case name.
func Analyze(sql string) Statement {
	st := Statement{Params: ScanParams(sql), Keyword: FirstKeyword(sql)}
	if st.Multi {
		// ReadOnly and TxControl hold for one statement only.
		st.BeginsTx = AnyBeginsTx(sql)
		return st
	}
	switch len(st.Keyword) {
	case 3, 4, 6, 7: // END, WITH, SELECT, VALUES, EXPLAIN
		st.ReadOnly = ReadOnly(sql)
	}
	switch len(st.Keyword) {
	case 3, 5, 6, 7, 8, 9: // END, BEGIN, COMMIT, RELEASE, ROLLBACK, SAVEPOINT
		st.Tx = TxControl(sql)
		st.BeginsTx = st.Tx == TxBegin || st.Tx == TxSavepoint
	}
	if len(st.Keyword) == 6 && equalFold(st.Keyword, "PRAGMA") {
		if key, name, ok := Pragma(sql); ok {
			st.PragmaKey, st.PragmaName = key, name
		}
	}
	return st
}
