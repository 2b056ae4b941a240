// Package sqlscan reads SQL text by SQLite's lexical rules, the ones of
// its tokenizer (sqlite3GetToken), and answers the questions the driver
// asks of a statement before sending it: its parameters, whether the text
// holds several statements, whether it certainly only reads, whether it
// controls a transaction, whether it sets a pragma. It does not parse SQL.
//
// It is the one home of the driver's rules about SQL text, exported so
// that the modules built on the driver (github.com/gohrana/libsql/embedded
// routes statements with it) read SQL by the same rules without reaching
// into the driver's internal packages.
//
//	st := sqlscan.Analyze(sql) // every rule at once: read a text once
//	if st.ReadOnly && !st.Multi { ... }
//
//	s := sqlscan.NewScanner(sql) // the tokens themselves
//	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
//		fmt.Println(t.Kind, sql[t.Start:t.End])
//	}
//
// Who imports it: the driver, and the embedded module, which routes statements by
// the same reading; it is public because that module is another module.
package sqlscan

// Kind is the kind of a token.
type Kind uint8

// The kinds of tokens. A text that SQLite rejects still splits into
// tokens; the bytes SQLite would stop at are Illegal.
const (
	EOF       Kind = iota // the end of the text (an empty token)
	Space                 // white space
	Comment               // -- to the end of the line, or /* */ (unterminated: to the end of the text)
	Word                  // an identifier or keyword, unquoted
	Quoted                // a quoted identifier: "...", `...` or [...]
	String                // a string literal, '...'
	Blob                  // a blob literal, x'...'
	Number                // a numeric literal
	Param                 // a parameter: ?, ?NNN, :name, @name, #name or $name
	Semicolon             // ;
	Punct                 // an operator or other punctuation
	Illegal               // an unterminated literal, a misformed number, blob or parameter, a stray byte
)

var kindNames = [...]string{"EOF", "Space", "Comment", "Word", "Quoted", "String", "Blob", "Number", "Param", "Semicolon", "Punct", "Illegal"}

// String returns the name of k, as in the constant's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Token is one token of a text: its kind and its bytes, text[Start:End].
type Token struct {
	Kind       Kind
	Start, End int
}

// Scanner reads the tokens of a text in order. Every byte of the text is
// in exactly one token, so the tokens' spans cover the text without gaps.
type Scanner struct {
	src string
	off int
}

// NewScanner returns a Scanner at the start of text.
func NewScanner(text string) Scanner { return Scanner{src: text} }

// Next returns the next token, or a token of kind EOF at the end of the
// text (and every time after).
func (s *Scanner) Next() Token {
	if s.off >= len(s.src) {
		return Token{Kind: EOF, Start: len(s.src), End: len(s.src)}
	}
	start := s.off
	k, end := scan(s.src, start)
	s.off = end
	return Token{Kind: k, Start: start, End: end}
}

// Byte classes, as SQLite has them.
const (
	cSpace = 1 << iota // white space inside a run of it (sqlite3Isspace: \v too)
	cDigit
	cHex
	cIdent // may continue an identifier: letters, digits, _, $ and bytes >= 0x80
)

var class = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] |= cSpace
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= cDigit | cHex | cIdent
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= cIdent
		t[c-'a'+'A'] |= cIdent
	}
	for _, c := range []byte("abcdefABCDEF") {
		t[c] |= cHex
	}
	t['_'] |= cIdent
	t['$'] |= cIdent
	for c := 0x80; c <= 0xff; c++ {
		t[c] |= cIdent
	}
	return t
}()

// is reports whether s has a byte at i and it is of class c.
func is(s string, i int, c uint8) bool { return i < len(s) && class[s[i]]&c != 0 }

// byteAt returns s[i], or 0 past the end, where SQLite reads the NUL.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// operator returns the kind and the end of the operator at s[i], of two
// bytes if two, else of one.
func operator(i int, two bool) (Kind, int) {
	if two {
		return Punct, i + 2
	}
	return Punct, i + 1
}

// scan returns the kind and the end of the token at s[i], i < len(s).
func scan(s string, i int) (Kind, int) {
	switch c := s[i]; c {
	case ' ', '\t', '\n', '\f', '\r':
		// \v continues white space but cannot start it, as in SQLite.
		j := i + 1
		for is(s, j, cSpace) {
			j++
		}
		return Space, j
	case ';':
		return Semicolon, i + 1
	case '-':
		switch byteAt(s, i+1) {
		case '-':
			for j := i + 2; j < len(s); j++ {
				if s[j] == '\n' {
					return Comment, j
				}
			}
			return Comment, len(s)
		case '>': // -> and ->>
			if byteAt(s, i+2) == '>' {
				return Punct, i + 3
			}
			return Punct, i + 2
		}
		return Punct, i + 1
	case '/':
		if byteAt(s, i+1) != '*' {
			return Punct, i + 1
		}
		// SQLite takes a "/*" that ends the text for two operators; a
		// comment is as good (either fails) and keeps the rule simple.
		for j := i + 2; j+1 < len(s); j++ {
			if s[j] == '*' && s[j+1] == '/' {
				return Comment, j + 2
			}
		}
		return Comment, len(s)
	case '(', ')', ',', '+', '*', '%', '&', '~':
		return Punct, i + 1
	case '=':
		return operator(i, byteAt(s, i+1) == '=')
	case '<':
		d := byteAt(s, i+1)
		return operator(i, d == '=' || d == '>' || d == '<')
	case '>':
		d := byteAt(s, i+1)
		return operator(i, d == '=' || d == '>')
	case '|':
		return operator(i, byteAt(s, i+1) == '|')
	case '!':
		if byteAt(s, i+1) == '=' {
			return Punct, i + 2
		}
		return Illegal, i + 1
	case '\'', '"', '`':
		return quoted(s, i)
	case '[':
		for j := i + 1; j < len(s); j++ {
			if s[j] == ']' {
				return Quoted, j + 1
			}
		}
		return Illegal, len(s)
	case '.':
		if is(s, i+1, cDigit) {
			return number(s, i)
		}
		return Punct, i + 1
	case '?':
		j := i + 1
		for is(s, j, cDigit) {
			j++
		}
		return Param, j
	case '$', '@', ':', '#':
		return param(s, i)
	case 'x', 'X':
		if byteAt(s, i+1) == '\'' {
			return blob(s, i)
		}
	case 0xef:
		// A byte order mark is white space wherever it is.
		if byteAt(s, i+1) == 0xbb && byteAt(s, i+2) == 0xbf {
			return Space, i + 3
		}
	}
	c := s[i]
	switch {
	case class[c]&cDigit != 0:
		return number(s, i)
	case class[c]&cIdent != 0 && c != '$':
		j := i + 1
		for is(s, j, cIdent) {
			j++
		}
		return Word, j
	}
	return Illegal, i + 1
}

// quoted reads a literal in quotes, where a doubled quote stands for one.
func quoted(s string, i int) (Kind, int) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			continue
		}
		if byteAt(s, j+1) == q {
			j++
			continue
		}
		if q == '\'' {
			return String, j + 1
		}
		return Quoted, j + 1
	}
	return Illegal, len(s)
}

// number reads a numeric literal: hexadecimal (0x...), or decimal with a
// fraction and an exponent. Digits may be separated by '_', as SQLite
// 3.46 and later take them. Identifier bytes glued to a number make it
// Illegal, as in SQLite: 12abc is one misformed token.
func number(s string, i int) (Kind, int) {
	digits := func(j int, c uint8) int {
		for j < len(s) && (class[s[j]]&c != 0 || s[j] == '_') {
			j++
		}
		return j
	}
	var j int
	if s[i] == '0' && (byteAt(s, i+1)|0x20) == 'x' && is(s, i+2, cHex) {
		j = digits(i+2, cHex)
	} else {
		j = digits(i, cDigit)
		if byteAt(s, j) == '.' {
			j = digits(j+1, cDigit)
		}
		if byteAt(s, j)|0x20 == 'e' {
			if is(s, j+1, cDigit) {
				j = digits(j+1, cDigit)
			} else if c := byteAt(s, j+1); (c == '+' || c == '-') && is(s, j+2, cDigit) {
				j = digits(j+2, cDigit)
			}
		}
	}
	if !is(s, j, cIdent) {
		return Number, j
	}
	for is(s, j, cIdent) {
		j++
	}
	return Illegal, j
}

// param reads a named parameter: a prefix (: @ # $) and identifier bytes,
// among which "::" may appear, and after at least one of them a suffix in
// parentheses without white space, as SQLite takes Tcl variable names.
func param(s string, i int) (Kind, int) {
	n := 0 // identifier bytes
	j := i + 1
loop:
	for j < len(s) {
		switch c := s[j]; {
		case class[c]&cIdent != 0:
			n++
			j++
		case c == ':' && byteAt(s, j+1) == ':':
			j += 2
		case c == '(' && n > 0:
			for j++; j < len(s) && s[j] != ')' && class[s[j]]&cSpace == 0; j++ {
			}
			if j < len(s) && s[j] == ')' {
				return Param, j + 1
			}
			return Illegal, j
		default:
			break loop
		}
	}
	if n == 0 {
		return Illegal, j
	}
	return Param, j
}

// blob reads x'...': an even number of hexadecimal digits in quotes, or
// else an Illegal token up to the closing quote.
func blob(s string, i int) (Kind, int) {
	j := i + 2
	for is(s, j, cHex) {
		j++
	}
	if byteAt(s, j) == '\'' && (j-i)%2 == 0 {
		return Blob, j + 1
	}
	for ; j < len(s); j++ {
		if s[j] == '\'' {
			return Illegal, j + 1
		}
	}
	return Illegal, len(s)
}
