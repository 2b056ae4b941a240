package sqlscan

import (
	"slices"
	"strings"
	"testing"
)

// seeds are the fuzz targets' seeds beside testdata/fuzz.
var seeds = []string{
	"SELECT 1",
	"SELECT ?, ?3, :a, @b, #c, $d::e(f), :a; -- x\n/* y */",
	"SELECT 'it''s', \"q\"\"q\", `b`, [c], x'ab', 1.5e-3, 0x1F, 1_000",
	"WITH x AS (SELECT 'delete') SELECT * FROM x",
	"BEGIN IMMEDIATE TRANSACTION; -- x",
	"ROLLBACK TRANSACTION TO SAVEPOINT sp",
	"PRAGMA main.cache_size = -2000;",
	"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
	"CREATE TEMP TRIGGER tr UPDATE ON t BEGIN SELECT 1; UPDATE t SET a = ?; END; SELECT :x",
	"EXPLAIN CREATE TRIGGER tr DELETE ON t BEGIN SELECT CASE WHEN 1 THEN 2 END; END ; BEGIN",
	"\xef\xbb\xbf \v\f/* unterminated",
	"'unterminated", "$a(b c)", "x'abc'", "12abc", "!", "\x00", "\xff",
}

// FuzzScan: scanning never panics, the tokens cover the text in order
// without gaps or overlaps, none is empty, and each is self-delimiting:
// its bytes alone scan as the same one token.
func FuzzScan(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		s := NewScanner(sql)
		end := 0
		for tok := s.Next(); tok.Kind != EOF; tok = s.Next() {
			if tok.Start != end || tok.End <= tok.Start || tok.End > len(sql) || tok.Kind > Illegal {
				t.Fatalf("in %q after %d: token %+v", sql, end, tok)
			}
			end = tok.End
			text := sql[tok.Start:tok.End]
			alone := NewScanner(text)
			if a, b := alone.Next(), alone.Next(); a != (Token{tok.Kind, 0, len(text)}) || b.Kind != EOF {
				t.Fatalf("in %q the %v token %q scans alone as %v %q and then %v", sql, tok.Kind, text, a.Kind, text[:a.End], b.Kind)
			}
			if tok.Kind == Semicolon && text != ";" || tok.Kind == Param && !strings.ContainsAny(text[:1], "?:@#$") {
				t.Fatalf("in %q a %v token %q", sql, tok.Kind, text)
			}
		}
		if end != len(sql) {
			t.Fatalf("in %q the tokens end at %d", sql, end)
		}
	})
}

// FuzzScanClassify: ScanParams, FirstKeyword and the classifiers agree
// with the token stream, and a comment between every two tokens changes
// none of their answers.
func FuzzScanClassify(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		var toks []Token // white space and comments aside
		var spaced strings.Builder
		// Statements end where sqlite3_complete's machine (split.go,
		// checked against SQLite by itest/sqlscandiff) says.
		statements, first := 0, Token{}
		inStatement := false
		split := splitInvalid
		s := NewScanner(sql)
		for tok := s.Next(); tok.Kind != EOF; tok = s.Next() {
			spaced.WriteString("/**/")
			spaced.WriteString(sql[tok.Start:tok.End])
			split = split.next(tok, sql)
			switch tok.Kind {
			case Space, Comment:
				continue
			case Semicolon:
				inStatement = inStatement && split != splitStart
			default:
				if !inStatement {
					inStatement = true
					if statements++; statements == 1 {
						first = tok
					}
				}
			}
			toks = append(toks, tok)
		}
		if t := strings.TrimRight(sql, " \t\n\f\r\v"); !unterminatedComment(t) {
			spaced.WriteString("/**/") // not after an unterminated /*, which it would end
		}
		text := func(tok Token) string { return sql[tok.Start:tok.End] }
		isWord := func(tok Token, kws ...string) bool {
			return tok.Kind == Word && slices.ContainsFunc(kws, func(kw string) bool { return equalFold(text(tok), kw) })
		}

		p := ScanParams(sql)
		if p.Multi != (statements > 1) {
			t.Errorf("ScanParams(%q).Multi = %v; %d statements", sql, p.Multi, statements)
		}
		var named []string
		var numeric bool
		for _, tok := range toks {
			switch {
			case tok.Kind != Param:
			case sql[tok.Start] == '?':
				numeric = true
			case !slices.Contains(named, text(tok)):
				named = append(named, text(tok))
			}
		}
		if p.Named != (len(named) > 0) || p.Numeric != numeric || len(p.Names) > maxParam {
			t.Errorf("ScanParams(%q) = named %v numeric %v, %d names", sql, p.Named, p.Numeric, len(p.Names))
		}
		for _, n := range named {
			// Once at most, and once unless numbered past the limit.
			if c := strings.Count("\x00"+strings.Join(p.Names, "\x00")+"\x00", "\x00"+n+"\x00"); c > 1 || c == 0 && len(p.Names) < maxParam {
				t.Errorf("ScanParams(%q) names %q %d times", sql, n, c)
			}
		}
		for _, n := range p.Names {
			if n != "" && !slices.Contains(named, n) && !slices.ContainsFunc(toks, func(tok Token) bool { return tok.Kind == Param && text(tok) == n }) {
				t.Errorf("ScanParams(%q) names %q, no parameter token", sql, n)
			}
		}

		kw, want := FirstKeyword(sql), ""
		if statements > 0 && first.Kind == Word {
			want = text(first)
		}
		if kw != want {
			t.Errorf("FirstKeyword(%q) = %q, want %q", sql, kw, want)
		}

		if ReadOnly(sql) {
			ok := statements == 1 && isWord(first, "SELECT", "VALUES", "EXPLAIN", "WITH")
			if isWord(first, "WITH") && slices.ContainsFunc(toks, func(tok Token) bool { return isWord(tok, "INSERT", "UPDATE", "DELETE", "REPLACE") }) {
				ok = false
			}
			if !ok {
				t.Errorf("ReadOnly(%q)", sql)
			}
		}

		if k := TxControl(sql); k != NotTx {
			lead := map[TxKind][]string{TxBegin: {"BEGIN"}, TxCommit: {"COMMIT", "END"}, TxRollback: {"ROLLBACK"},
				TxRollbackTo: {"ROLLBACK"}, TxSavepoint: {"SAVEPOINT"}, TxRelease: {"RELEASE"}}[k]
			if statements != 1 || !isWord(first, lead...) || k == TxRollbackTo && !slices.ContainsFunc(toks, func(tok Token) bool { return isWord(tok, "TO") }) {
				t.Errorf("TxControl(%q) = %v", sql, k)
			}
		}

		key, name, ok := Pragma(sql)
		if ok && (statements != 1 || !isWord(first, "PRAGMA") || name == "" || name != lower(name) ||
			key != name && !strings.HasSuffix(key, "."+name) || key != lower(key)) {
			t.Errorf("Pragma(%q) = %q, %q, %v", sql, key, name, ok)
		}

		temp := CreatesTemp(sql)
		if temp && (statements == 0 || !isWord(first, "CREATE") || !slices.ContainsFunc(toks, func(tok Token) bool {
			return isWord(tok, "TEMP", "TEMPORARY") || strings.EqualFold(strings.Trim(text(tok), "\"`[]'"), "temp")
		})) {
			t.Errorf("CreatesTemp(%q)", sql)
		}

		// Comments between the tokens: the same answers.
		in := spaced.String()
		if q := ScanParams(in); !slices.Equal(q.Names, p.Names) || q.Named != p.Named || q.Numeric != p.Numeric || q.Multi != p.Multi {
			t.Errorf("ScanParams(%q) = %+v; of %q: %+v", in, q, sql, p)
		}
		if got := FirstKeyword(in); got != kw {
			t.Errorf("FirstKeyword(%q) = %q; of %q: %q", in, got, sql, kw)
		}
		if got, want := ReadOnly(in), ReadOnly(sql); got != want {
			t.Errorf("ReadOnly(%q) = %v; of %q: %v", in, got, sql, want)
		}
		if got, want := TxControl(in), TxControl(sql); got != want {
			t.Errorf("TxControl(%q) = %v; of %q: %v", in, got, sql, want)
		}
		if got := CreatesTemp(in); got != temp {
			t.Errorf("CreatesTemp(%q) = %v; of %q: %v", in, got, sql, temp)
		}
		if k, n, o := Pragma(in); k != key || n != name || o != ok {
			t.Errorf("Pragma(%q) = %q, %q, %v; of %q: %q, %q, %v", in, k, n, o, sql, key, name, ok)
		}
	})
}

// unterminatedComment reports whether sql ends in a /* comment without
// its */.
func unterminatedComment(sql string) bool {
	var last Token
	s := NewScanner(sql)
	for t := s.Next(); t.Kind != EOF; t = s.Next() {
		last = t
	}
	c := sql[last.Start:last.End]
	return last.Kind == Comment && strings.HasPrefix(c, "/*") && (len(c) < 4 || !strings.HasSuffix(c, "*/"))
}
