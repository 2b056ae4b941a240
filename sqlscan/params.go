package sqlscan

// maxParam is the largest ?NNN SQLite takes by default
// (SQLITE_MAX_VARIABLE_NUMBER), as sqld builds it.
const maxParam = 32766

// Params describes the parameters of an SQL text, numbered as SQLite
// numbers them: a ? takes the number after the largest so far, ?NNN takes
// NNN, and a named parameter takes the next number where it first appears
// and keeps it after.
type Params struct {
	// Names[i] is the name of parameter i+1 as sqlite3_bind_parameter_name
	// has it, prefix included (":a", "$b", "?3"), or "" for a ? and for a
	// number no parameter names. What SQLite refuses, a ?NNN out of
	// 1..32766 or a parameter it would number past 32766, is left out.
	Names []string

	Named   bool // a :name, @name, #name or $name
	Numeric bool // a ? or ?NNN

	// Multi reports that the text holds more than one statement: a ';'
	// that ends a statement is followed by more than white space,
	// comments and ';'. The ';' inside a CREATE TRIGGER's body ends none
	// (split.go), as SQLite splits a text.
	Multi bool
}

// indexAfter is the number of names past which lookups go through a map.
const indexAfter = 32

// ScanParams returns the parameters of sql. It allocates only for a text
// with parameters.
func ScanParams(sql string) Params {
	var p Params
	var index map[string]int // name -> number, once there are many names
	statements := 0
	inStatement := false
	split := splitInvalid
	s := NewScanner(sql)
	for t := s.Next(); t.Kind != EOF; t = s.Next() {
		if split != splitNormal || t.Kind == Semicolon {
			split = split.next(t, sql)
		}
		switch t.Kind {
		case Space, Comment:
			continue
		case Semicolon:
			if split == splitStart {
				inStatement = false
			}
			continue
		case Param:
			p.add(sql[t.Start:t.End], &index)
		}
		if !inStatement {
			inStatement = true
			statements++
		}
	}
	p.Multi = statements > 1
	return p
}

// add numbers the parameter spelled text.
func (p *Params) add(text string, index *map[string]int) {
	if p.Names == nil {
		p.Names = make([]string, 0, 8) // one allocation for most statements
	}
	if text[0] == '?' {
		p.Numeric = true
		if len(text) == 1 {
			if len(p.Names) < maxParam {
				p.Names = append(p.Names, "")
			}
			return
		}
		n := 0
		for _, d := range []byte(text[1:]) {
			if n = n*10 + int(d-'0'); n > maxParam {
				return
			}
		}
		if n == 0 {
			return
		}
		for len(p.Names) < n {
			p.Names = append(p.Names, "")
		}
		if p.Names[n-1] == "" {
			p.Names[n-1] = text // the spelling first seen names it: ?01 or ?1
			if *index != nil {
				(*index)[text] = n
			}
		}
		return
	}
	p.Named = true
	if p.number(text, index) > 0 || len(p.Names) >= maxParam {
		return
	}
	p.Names = append(p.Names, text)
	if *index != nil {
		(*index)[text] = len(p.Names)
	}
}

// number returns the number of the parameter named text, or 0.
func (p *Params) number(text string, index *map[string]int) int {
	if *index == nil && len(p.Names) > indexAfter {
		*index = make(map[string]int, 2*len(p.Names))
		for i, n := range p.Names {
			if n != "" {
				(*index)[n] = i + 1
			}
		}
	}
	if *index != nil {
		return (*index)[text]
	}
	for i, n := range p.Names {
		if n == text {
			return i + 1
		}
	}
	return 0
}
