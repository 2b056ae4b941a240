package sqlscan

import (
	"fmt"
	"strings"
	"testing"
)

// render writes the tokens of sql as Kind(text) separated by blanks.
func render(sql string) string {
	var b strings.Builder
	s := NewScanner(sql)
	for t := s.Next(); t.Kind != EOF; t = s.Next() {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v(%s)", t.Kind, sql[t.Start:t.End])
	}
	return b.String()
}

func TestScan(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"", ""},
		{"SELECT 1;", "Word(SELECT) Space( ) Number(1) Semicolon(;)"},
		{" \t\n\f\r", "Space( \t\n\f\r)"},
		// \v continues white space but cannot begin it, as in SQLite.
		{" \v\vx", "Space( \v\v) Word(x)"},
		{"\vx", "Illegal(\v) Word(x)"},
		{"\xef\xbb\xbfSELECT", "Space(\xef\xbb\xbf) Word(SELECT)"},
		{"a\xef\xbb\xbf", "Word(a\xef\xbb\xbf)"},
		{"\xef\xbbx", "Word(\xef\xbbx)"},

		// Comments, and what they hide.
		{"-- x ';\nSELECT", "Comment(-- x ';) Space(\n) Word(SELECT)"},
		{"--", "Comment(--)"},
		{"/* a ' b */c", "Comment(/* a ' b */) Word(c)"},
		{"/**/", "Comment(/**/)"},
		{"/*/ x", "Comment(/*/ x)"},
		{"/* /* nested */ */", "Comment(/* /* nested */) Space( ) Punct(*) Punct(/)"},
		{"/* unterminated", "Comment(/* unterminated)"},
		{"/*", "Comment(/*)"},
		{"a/b-c", "Word(a) Punct(/) Word(b) Punct(-) Word(c)"},

		// Strings and quoted identifiers, and what they hide.
		{"'it''s -- no /* comment'", "String('it''s -- no /* comment')"},
		{"'a';'b'", "String('a') Semicolon(;) String('b')"},
		{"''", "String('')"},
		{"'unterminated ; x", "Illegal('unterminated ; x)"},
		{"'x''", "Illegal('x'')"},
		{`"a""b" ` + "`c``d`" + ` [e"f]`, `Quoted("a""b") Space( ) Quoted(` + "`c``d`" + `) Space( ) Quoted([e"f])`},
		{`"open`, `Illegal("open)`},
		{"[open", "Illegal([open)"},
		{"[a]]", "Quoted([a]) Illegal(])"},

		// Words: bytes from 0x80 on are identifier bytes, $ continues one.
		{"héllo wörld", "Word(héllo) Space( ) Word(wörld)"},
		{"表1", "Word(表1)"},
		{"a$b _c1", "Word(a$b) Space( ) Word(_c1)"},
		{"x", "Word(x)"},
		{"xyz'a'", "Word(xyz) String('a')"},

		// Blobs.
		{"x'ab'", "Blob(x'ab')"},
		{"X'0aFF'", "Blob(X'0aFF')"},
		{"x''", "Blob(x'')"},
		{"x'abc'", "Illegal(x'abc')"},
		{"x'zz' y", "Illegal(x'zz') Space( ) Word(y)"},
		{"x'ab", "Illegal(x'ab)"},

		// Numbers.
		{"1 1.5 .5 1. 1e10 1E+5 1e-5 0x1F 0XaB", "Number(1) Space( ) Number(1.5) Space( ) Number(.5) Space( ) Number(1.) Space( ) Number(1e10) Space( ) Number(1E+5) Space( ) Number(1e-5) Space( ) Number(0x1F) Space( ) Number(0XaB)"},
		{"1_000 0x_1", "Number(1_000) Space( ) Illegal(0x_1)"},
		{"12abc", "Illegal(12abc)"},
		{"1e", "Illegal(1e)"},
		{"1e+", "Illegal(1e) Punct(+)"},
		{"1e+x", "Illegal(1e) Punct(+) Word(x)"},
		{"0x", "Illegal(0x)"},
		{"1..2", "Number(1.) Number(.2)"},
		{"a.b", "Word(a) Punct(.) Word(b)"},

		// Parameters.
		{"? ?1 ?32767 ?a", "Param(?) Space( ) Param(?1) Space( ) Param(?32767) Space( ) Param(?) Word(a)"},
		{":a @b #c $d", "Param(:a) Space( ) Param(@b) Space( ) Param(#c) Space( ) Param($d)"},
		{":é", "Param(:é)"},
		{"$a::b::c", "Param($a::b::c)"},
		{"$a:b", "Param($a) Param(:b)"},
		{"$::a", "Param($::a)"},
		{"$a(x:y)z", "Param($a(x:y)) Word(z)"},
		{"$a(b c)", "Illegal($a(b) Space( ) Word(c) Punct())"},
		{"$a(", "Illegal($a()"},
		{"$(a)", "Illegal($) Punct(() Word(a) Punct())"},
		{"$", "Illegal($)"},
		{": a", "Illegal(:) Space( ) Word(a)"},
		{"$::", "Illegal($::)"},
		{"a::b", "Word(a) Illegal(:) Param(:b)"},
		{":::a", "Param(:::a)"},
		{"?;", "Param(?) Semicolon(;)"},

		// Operators.
		{"a||b<=c<>d!=e==f>=g<<h>>i->j->>k", "Word(a) Punct(||) Word(b) Punct(<=) Word(c) Punct(<>) Word(d) Punct(!=) Word(e) Punct(==) Word(f) Punct(>=) Word(g) Punct(<<) Word(h) Punct(>>) Word(i) Punct(->) Word(j) Punct(->>) Word(k)"},
		{"(),+*%&~|=<>.", "Punct(() Punct()) Punct(,) Punct(+) Punct(*) Punct(%) Punct(&) Punct(~) Punct(|) Punct(=) Punct(<>) Punct(.)"},
		{"!x", "Illegal(!) Word(x)"},
		{"\x00^{}\\]\x7f", "Illegal(\x00) Illegal(^) Illegal({) Illegal(}) Illegal(\\) Illegal(]) Illegal(\x7f)"},
	}
	for _, tt := range tests {
		if got := render(tt.sql); got != tt.want {
			t.Errorf("tokens of %q:\n got %s\nwant %s", tt.sql, got, tt.want)
		}
	}
}

// After the end, Next keeps returning an empty EOF token at the end.
func TestScanEOF(t *testing.T) {
	s := NewScanner("a")
	s.Next()
	for range 2 {
		if tok := s.Next(); tok != (Token{Kind: EOF, Start: 1, End: 1}) {
			t.Fatalf("after the end: %+v", tok)
		}
	}
	if tok := (&Scanner{}).Next(); tok != (Token{}) {
		t.Fatalf("zero Scanner: %+v", tok)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{EOF: "EOF", Param: "Param", Illegal: "Illegal", Illegal + 1: "Kind(?)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestScanAllocs(t *testing.T) {
	sql := "SELECT a, 'b', x'cd', 1.5e3, :e FROM t /* c */ WHERE f = ?1; -- x"
	if n := testing.AllocsPerRun(100, func() {
		s := NewScanner(sql)
		for s.Next().Kind != EOF {
		}
	}); n != 0 {
		t.Errorf("scanning allocates %v times", n)
	}
}

func BenchmarkScan(b *testing.B) {
	sql := "SELECT id, name, 'a string' FROM users /* comment */ WHERE id = ? AND created > :since ORDER BY name LIMIT 10"
	b.SetBytes(int64(len(sql)))
	for b.Loop() {
		s := NewScanner(sql)
		for s.Next().Kind != EOF {
		}
	}
}
