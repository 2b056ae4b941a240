package libsql

import (
	"strconv"
)

// sqlParams describes the parameters of one SQL text, in SQLite's order:
// names[i] is the name of parameter i+1 ("" for ? and ?NNN).
type sqlParams struct {
	names      []string
	hasNamed   bool
	hasNumeric bool // ? or ?NNN
	// multi: a ';' is followed by more than blanks and comments, so the
	// text may hold several statements (or a trigger body).
	multi bool
}

// scanParams finds the parameters of sql the way SQLite's tokenizer does,
// skipping string literals, quoted identifiers and comments. It only needs
// to be exact for well-formed SQL; the server reports anything else.
func scanParams(sql string) sqlParams {
	var p sqlParams
	index := map[string]int{}
	maxIdx := 0
	setName := func(idx int, name string) {
		for len(p.names) < idx {
			p.names = append(p.names, "")
		}
		if name != "" {
			p.names[idx-1] = name
		}
	}
	semi := false
	for i := 0; i < len(sql); {
		c := sql[i]
		if semi && !p.multi && c != ';' && !isBlank(c) && !startsComment(sql, i) {
			p.multi = true
		}
		switch {
		case c == ';':
			semi = true
			i++
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i, c)
		case c == '[':
			j := indexFrom(sql, i+1, ']')
			i = j + 1
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := indexFrom(sql, i+2, '\n')
			i = j + 1
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i += 2
			for i < len(sql) && !(sql[i] == '*' && i+1 < len(sql) && sql[i+1] == '/') {
				i++
			}
			i += 2
		case c == '?':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			p.hasNumeric = true
			if j == i+1 {
				maxIdx++
				setName(maxIdx, "")
			} else if n, err := strconv.Atoi(sql[i+1 : j]); err == nil && n > 0 && n <= 32766 {
				setName(n, "")
				maxIdx = max(maxIdx, n)
			}
			i = j
		case c == ':' || c == '@' || c == '$':
			j := i + 1
			for j < len(sql) {
				if isIDChar(sql[j]) {
					j++
				} else if c == '$' && sql[j] == ':' && j+1 < len(sql) && sql[j+1] == ':' {
					j += 2
				} else {
					break
				}
			}
			if j == i+1 {
				i++
				continue
			}
			name := sql[i:j]
			if _, seen := index[name]; !seen {
				maxIdx++
				index[name] = maxIdx
				setName(maxIdx, name)
				p.hasNamed = true
			}
			i = j
		case isIDChar(c):
			// Skip whole identifiers and numbers so that "a$b" is one word.
			for i < len(sql) && (isIDChar(sql[i]) || sql[i] == '$') {
				i++
			}
		default:
			i++
		}
	}
	return p
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func startsComment(sql string, i int) bool {
	return i+1 < len(sql) && (sql[i] == '-' && sql[i+1] == '-' || sql[i] == '/' && sql[i+1] == '*')
}

func isIDChar(c byte) bool {
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// skipQuoted returns the index after the literal starting at sql[i], where a
// doubled quote is an escaped one.
func skipQuoted(sql string, i int, q byte) int {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == q {
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

func indexFrom(s string, from int, c byte) int {
	for j := from; j < len(s); j++ {
		if s[j] == c {
			return j
		}
	}
	return len(s)
}

// uses reports whether the statement has a parameter called name, with or
// without its prefix character.
func (p *sqlParams) uses(name string) bool {
	for _, n := range p.names {
		if n != "" && (n == name || n[1:] == name) {
			return true
		}
	}
	return false
}
