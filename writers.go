package libsql

import (
	"context"
	"fmt"
	"strings"
)

// writers bounds how many autocommit statements that may write the
// connections of one Connector have in flight at once (Config.MaxWriters).
// SQLite takes one writer at a time anyway, and sqld 0.24.32 can stall all
// writes for good when many queue for its write lock at once; a bound in
// the client keeps that queue short without slowing a single writer.
//
// A nil *writers bounds nothing.
type writers struct {
	slots chan struct{}
}

// newWriters returns a bound of n, or nil for n <= 0 (unbounded).
func newWriters(n int) *writers {
	if n <= 0 {
		return nil
	}
	return &writers{slots: make(chan struct{}, n)}
}

// acquire takes a slot, waiting for one until ctx ends. The error then
// matches ctx's error and is safe to retry: nothing was sent. A nil bound
// has a slot for everyone.
func (w *writers) acquire(ctx context.Context) error {
	if w == nil {
		return nil
	}
	select {
	case w.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case w.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &Error{
			Message: fmt.Sprintf("waiting for one of the %d write slots (maxWriters)", cap(w.slots)),
			safe:    true,
			Err:     ctx.Err(),
		}
	}
}

// release gives back a slot taken by acquire.
func (w *writers) release() {
	if w != nil {
		<-w.slots
	}
}

// readOnlySQL reports whether sql certainly only reads, judged from its
// text alone, cheaply and conservatively: after blanks and comments it
// begins with SELECT, VALUES or EXPLAIN (which runs nothing), or with WITH
// and contains none of the words INSERT, UPDATE, DELETE and REPLACE (a
// common table expression may precede a write). Anything else, PRAGMA
// included, may write. A text of several statements never runs as one
// statement (sqld refuses it before running any), and scripts are bounded
// as writes, so the first keyword speaks for the whole statement.
func readOnlySQL(sql string) bool {
	word := firstWord(sql)
	switch {
	case strings.EqualFold(word, "SELECT"), strings.EqualFold(word, "VALUES"), strings.EqualFold(word, "EXPLAIN"):
		return true
	case strings.EqualFold(word, "WITH"):
		return !hasWriteWord(sql)
	}
	return false
}

// firstWord returns the keyword sql begins with, after blanks and
// comments, or "" if it begins with something else.
func firstWord(sql string) string {
	i := 0
	for i < len(sql) {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return ""
			}
			i += j + 1
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return ""
			}
			i += j + 4
		default:
			j := i
			for j < len(sql) && isLetter(sql[j]) {
				j++
			}
			if j < len(sql) && isIdent(sql[j]) {
				return "" // not a keyword: SELECT1
			}
			return sql[i:j]
		}
	}
	return ""
}

// hasWriteWord reports whether sql contains one of the words INSERT,
// UPDATE, DELETE and REPLACE, in any case, anywhere, strings and comments
// included: a false match only takes a slot that was not needed.
func hasWriteWord(sql string) bool {
	for i := 0; i < len(sql); {
		if !isIdent(sql[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(sql) && isIdent(sql[j]) {
			j++
		}
		switch w := sql[i:j]; len(w) {
		case 6:
			if strings.EqualFold(w, "INSERT") || strings.EqualFold(w, "UPDATE") || strings.EqualFold(w, "DELETE") {
				return true
			}
		case 7:
			if strings.EqualFold(w, "REPLACE") {
				return true
			}
		}
		i = j
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isIdent reports whether c may be part of an SQL identifier; bytes of
// multi-byte UTF-8 characters are.
func isIdent(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
