package sqlscan

// Where a statement ends. A ';' ends a statement, except inside the body
// of a CREATE TRIGGER, whose statements end with ';' too: the trigger
// ends at the ';' after the END that follows one of them. This is
// sqlite3_complete's state machine, token for token, so that a text is
// split where SQLite's parser splits it.

// splitState is a state of sqlite3_complete's machine.
type splitState uint8

const (
	splitInvalid splitState = iota // nothing but white space yet
	splitStart                     // at the start of a statement (after a ';' that ended one)
	splitNormal                    // in a statement that ends at the next ';'
	splitExplain                   // after EXPLAIN at a statement's start
	splitCreate                    // after CREATE [TEMP | TEMPORARY] at a statement's start
	splitTrigger                   // in a trigger's definition
	splitSemi                      // after a ';' in a trigger's definition
	splitEnd                       // after ";END" in a trigger's definition
)

// splitToken is the class of a token to the machine.
type splitToken uint8

const (
	tkSemi splitToken = iota
	tkWS
	tkOther
	tkExplain
	tkCreate
	tkTemp
	tkTrigger
	tkEnd
)

// splitNext is sqlite3_complete's table: the state after a token of each
// class, in each state.
var splitNext = [8][8]splitState{
	//                  SEMI          WS            OTHER         EXPLAIN       CREATE        TEMP          TRIGGER       END
	splitInvalid: {splitStart, splitInvalid, splitNormal, splitExplain, splitCreate, splitNormal, splitNormal, splitNormal},
	splitStart:   {splitStart, splitStart, splitNormal, splitExplain, splitCreate, splitNormal, splitNormal, splitNormal},
	splitNormal:  {splitStart, splitNormal, splitNormal, splitNormal, splitNormal, splitNormal, splitNormal, splitNormal},
	splitExplain: {splitStart, splitExplain, splitExplain, splitNormal, splitCreate, splitNormal, splitNormal, splitNormal},
	splitCreate:  {splitStart, splitCreate, splitNormal, splitNormal, splitNormal, splitCreate, splitTrigger, splitNormal},
	splitTrigger: {splitSemi, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger},
	splitSemi:    {splitSemi, splitSemi, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitEnd},
	splitEnd:     {splitStart, splitEnd, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger, splitTrigger},
}

// next returns the state after token t of src.
func (s splitState) next(t Token, src string) splitState {
	switch t.Kind {
	case Semicolon:
		return splitNext[s][tkSemi]
	case Space, Comment:
		return splitNext[s][tkWS]
	case Word:
		if s == splitNormal || s == splitTrigger {
			return s // no word moves these
		}
		return splitNext[s][wordClass(src[t.Start:t.End])]
	}
	return splitNext[s][tkOther]
}

// splitWords are the words sqlite3_complete tells apart, with their
// classes; any other word is tkOther.
var splitWords = [...]struct {
	word string
	tk   splitToken
}{
	{"END", tkEnd},
	{"TEMP", tkTemp},
	{"TEMPORARY", tkTemp},
	{"CREATE", tkCreate},
	{"EXPLAIN", tkExplain},
	{"TRIGGER", tkTrigger},
}

// wordClass classifies a word as sqlite3_complete does.
func wordClass(w string) splitToken {
	for _, k := range splitWords {
		if equalFold(w, k.word) {
			return k.tk
		}
	}
	return tkOther
}

// StatementEnd returns where the first statement of sql ends: just past
// the ';' that ends it, or len(sql). Empty statements before it (";;")
// are part of it, as they are of sqlite3_prepare_v2's first statement.
func StatementEnd(sql string) int {
	c := newCursor(sql)
	c.skipStatement()
	return c.t.End
}
