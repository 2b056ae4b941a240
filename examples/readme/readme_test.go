package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, two levels up.
const root = "../.."

// required are the Markdown files (relative to root) that must have ```go
// blocks; every docs/*.md and docs/dev/*.md is checked too, if it has any.
var required = []string{"README.md", "examples/README.md"}

// snippet is one ```go block of a Markdown file.
type snippet struct {
	file string // the file's path, as compiler messages name it
	pkg  string // the start of its package's name, from the file's name
	line int    // of the block's first line in the file
	src  string // its text
}

// docGlobs are the patterns (relative to root) of the other Markdown files
// whose snippets are checked: the user guides in docs/ and the development
// records in docs/dev/.
var docGlobs = []string{"docs/*.md", "docs/dev/*.md"}

// markdownFiles returns the files whose snippets are checked, relative to
// root: the required ones, then those of docGlobs.
func markdownFiles() ([]string, error) {
	files := slices.Clone(required)
	for _, g := range docGlobs {
		docs, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(g)))
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			rel, err := filepath.Rel(root, d)
			if err != nil {
				return nil, err
			}
			files = append(files, filepath.ToSlash(rel))
		}
	}
	return files, nil
}

// TestSnippetsCompile builds and vets every ```go block of README.md,
// examples/README.md, docs/*.md and docs/dev/*.md, each as a package of
// its own in a scratch module with this module's requirements. A snippet is taken as
// written when it parses as the body of a Go file (imports and
// declarations); otherwise its leading imports stay at file level and the
// rest becomes the body of a function that returns an error, so that
// `return err` works. Snippets may use ctx (a context.Context), dsn and
// token (strings) without declaring them. A snippet that imports anything
// must import all it uses; one without imports gets those of the packages
// in knownImports that it names. A snippet that starts with a package
// clause (after comments) is a whole file and is compiled as it is.
// Compiler and vet messages point at the Markdown file (relative to the
// repository's root) and its line.
func TestSnippetsCompile(t *testing.T) {
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := markdownFiles()
	if err != nil {
		t.Fatal(err)
	}
	var snippets []snippet
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		// Positions name the absolute path (a relative one in a //line
		// directive would be taken relative to the scratch package);
		// the output is shortened to the repository-relative path below.
		found := extract(filepath.Join(rootAbs, filepath.FromSlash(f)), string(md))
		if len(found) == 0 && slices.Contains(required, f) {
			t.Errorf("%s has no ```go blocks", f)
		}
		for i := range found {
			found[i].pkg = packagePrefix(f)
		}
		if len(found) > 0 {
			t.Logf("%s: %d snippets", f, len(found))
		}
		snippets = append(snippets, found...)
	}
	if out, err := check(t.TempDir(), snippets); err != nil {
		out = bytes.ReplaceAll(out, []byte(rootAbs+string(filepath.Separator)), nil)
		t.Errorf("%v\n%s", err, out)
	}
}

// TestCheckFails makes sure that check fails on snippets that do not
// compile, at the snippet's line.
func TestCheckFails(t *testing.T) {
	tests := []struct {
		name string
		md   string
		line int    // in md, where the error is
		want string // in the message
	}{
		{
			"blank import of a package used by name",
			"```go\nimport (\n\t\"errors\"\n\n\t_ \"github.com/gohrana/libsql\"\n)\n\nvar err error\n_ = errors.Is(err, libsql.ErrConstraint)\n```\n",
			9, "undefined: libsql",
		},
		{
			"imports are not completed",
			"```go\nimport \"github.com/gohrana/libsql\"\n\nvar err error\nif errors.Is(err, libsql.ErrConstraint) {\n}\n```\n",
			5, "undefined: errors",
		},
		{
			"unused variable",
			"some text\n\n```go\ncfg := libsql.NewConfig()\nconnector, err := libsql.NewConnector(cfg)\n_ = connector\n```\n",
			5, "declared and not used: err",
		},
		{
			"whole file",
			"```go\n// Command x.\npackage main\n\nimport \"os\"\n\nfunc main() {\n\tos.Exit(\"one\")\n}\n```\n",
			8, "cannot use \"one\"",
		},
		{
			"vet finding",
			"```go\nimport \"fmt\"\n\nfunc f() { fmt.Printf(\"%d\\n\", \"not a number\") }\n```\n",
			4, "fmt.Printf format %d has arg",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snippets := extract("README.md", tt.md)
			if len(snippets) != 1 {
				t.Fatalf("%d snippets in %q, want 1", len(snippets), tt.md)
			}
			out, err := check(t.TempDir(), snippets)
			if err == nil {
				t.Fatalf("check passed, want %q", tt.want)
			}
			if want := fmt.Sprintf("README.md:%d:", tt.line); !bytes.Contains(out, []byte(want)) || !bytes.Contains(out, []byte(tt.want)) {
				t.Errorf("output does not say %s ... %s:\n%s", want, tt.want, out)
			}
		})
	}
}

// TestCheckNamesFile makes sure that a failing snippet is reported at its
// own file's line when several files' snippets are checked together.
func TestCheckNamesFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "README.md")
	bad := filepath.Join(dir, "docs", "GUIDE.md")
	snippets := append(extract(good, "```go\nvar x = 1\n```\n"),
		extract(bad, "# Guide\n\n```go\nvar y int = \"one\"\n```\n")...)
	for i, f := range []string{"README.md", "docs/GUIDE.md"} {
		snippets[i].pkg = packagePrefix(f)
	}
	out, err := check(t.TempDir(), snippets)
	if err == nil {
		t.Fatal("check passed, want a failure in docs/GUIDE.md")
	}
	// The go command prints a path relative to its directory where that
	// is shorter, so only the path's end is certain.
	if want := "docs/GUIDE.md:4:"; !bytes.Contains(out, []byte(want)) {
		t.Errorf("output does not say %s:\n%s", want, out)
	}
	if bytes.Contains(out, []byte("README.md:")) {
		t.Errorf("output names README.md, whose snippet compiles:\n%s", out)
	}
	if !bytes.Contains(out, []byte("docs_guide_01")) {
		t.Errorf("output does not name package docs_guide_01:\n%s", out)
	}
}

// check builds and vets snippets in a scratch module in dir, each in a
// package of its own named after its file; it returns the go command's
// output.
func check(dir string, snippets []snippet) ([]byte, error) {
	if err := scratchModule(dir); err != nil {
		return nil, err
	}
	seen := map[string]int{} // snippets per package prefix
	for _, s := range snippets {
		prefix := s.pkg
		if prefix == "" {
			prefix = "snippet"
		}
		seen[prefix]++
		pkg := fmt.Sprintf("%s_%02d", prefix, seen[prefix])
		src, err := wrap(pkg, s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", s.file, s.line, err)
		}
		if err := writePackage(filepath.Join(dir, pkg), pkg, src); err != nil {
			return nil, err
		}
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return out, fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
		}
	}
	return nil, nil
}

// packagePrefix makes the start of a package's name from a Markdown file's
// repository-relative path: lower case, with every character other than a
// letter or digit as '_' (examples/README.md gives examples_readme).
func packagePrefix(file string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, strings.TrimSuffix(file, path.Ext(file)))
}

// extract returns the ```go blocks of a Markdown text, from file.
func extract(file, md string) []snippet {
	var (
		snippets []snippet
		cur      *snippet
		body     strings.Builder
	)
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{file: file, line: n + 1}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.src = body.String()
			snippets = append(snippets, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	return snippets
}

// knownImports are the packages a snippet without imports may name.
var knownImports = map[string]string{
	"context": "context",
	"errors":  "errors",
	"fmt":     "fmt",
	"libsql":  "github.com/gohrana/libsql",
	"os":      "os",
	"sql":     "database/sql",
	"time":    "time",
}

// wrap turns a snippet into the source of a Go file of package pkg whose
// positions are those of its Markdown file.
func wrap(pkg string, s snippet) (string, error) {
	lineDirective := func(line int) string { return fmt.Sprintf("//line %s:%d\n", s.file, line) }
	header := "package " + pkg + "\n"

	// A whole file, package clause and all: compiled as it is, its
	// package renamed to pkg (a main package's func main is then a plain
	// function).
	fset := token.NewFileSet()
	if f, err := parser.ParseFile(fset, "", s.src, parser.PackageClauseOnly); err == nil {
		start, end := fset.Position(f.Name.Pos()).Offset, fset.Position(f.Name.End()).Offset
		return lineDirective(s.line) + s.src[:start] + pkg + s.src[end:], nil
	}

	// Declarations only: the snippet is a file as it stands.
	if _, err := parser.ParseFile(fset, "", header+s.src, parser.SkipObjectResolution); err == nil {
		return header + lineDirective(s.line) + s.src, nil
	}

	// Imports, then statements: split after the last import.
	f, err := parser.ParseFile(fset, "", header+s.src, parser.ImportsOnly)
	if err != nil {
		return "", err
	}
	split := 0
	if n := len(f.Decls); n > 0 {
		split = fset.Position(f.Decls[n-1].End()).Offset - len(header)
	}
	imports, stmts := s.src[:split], s.src[split:]
	bodyLine := s.line + strings.Count(imports, "\n")

	body := "func snippet() error {\n" + lineDirective(bodyLine) + stmts + "}\n"
	fn, err := parser.ParseFile(token.NewFileSet(), "", header+body, 0)
	if err != nil {
		return "", err
	}
	if !endsInReturn(fn) {
		body = strings.TrimSuffix(body, "}\n") + "return nil\n}\n"
	}

	if len(f.Imports) == 0 {
		var paths []string
		for _, id := range fn.Unresolved {
			if p, ok := knownImports[id.Name]; ok && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		slices.Sort(paths)
		for _, p := range paths {
			imports += fmt.Sprintf("import %q\n", p)
		}
		return header + imports + body, nil
	}
	return header + lineDirective(s.line) + imports + "\n" + body, nil
}

// endsInReturn reports whether the function snippet in f ends with a
// return statement (then a "return nil" after it would be unreachable).
func endsInReturn(f *ast.File) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "snippet" {
			list := fd.Body.List
			if len(list) == 0 {
				return false
			}
			_, ok := list[len(list)-1].(*ast.ReturnStmt)
			return ok
		}
	}
	return false
}

// harness declares the names snippets may use without declaring them, in a
// file of its own so that its imports cannot clash with a snippet's.
const harness = `package %s

import readmecontext "context"

var (
	ctx   = readmecontext.Background()
	dsn   = "http://127.0.0.1:8080"
	token = "token"
)

var _, _, _ = ctx, dsn, token
`

var embedRE = regexp.MustCompile(`(?m)^//go:embed (.+)$`)

// writePackage writes the snippet's file, the harness beside it and a file
// for each //go:embed pattern of the snippet.
func writePackage(dir, pkg, src string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(src), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "harness.go"), []byte(fmt.Sprintf(harness, pkg)), 0o644); err != nil {
		return err
	}
	for _, m := range embedRE.FindAllStringSubmatch(src, -1) {
		for _, pattern := range strings.Fields(m[1]) {
			name := strings.ReplaceAll(pattern, "*", "example")
			if path.Ext(name) == "" {
				name = path.Join(name, "example")
			}
			file := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// scratchModule makes dir a module with this module's go.mod and go.sum,
// the driver replaced by the repository's root.
func scratchModule(dir string) error {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		return err
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	mod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(mod, []byte("module readmesnippets"))
	mod = bytes.ReplaceAll(mod, []byte("=> ../.."), []byte("=> "+root))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// TestMarkdownLinks checks every relative link of every Markdown file in
// the repository (hidden directories aside): the file or directory it
// names exists, and a #fragment into a Markdown file names one of its
// headings as GitHub makes their anchors. Links inside code blocks and
// code spans are not links.
func TestMarkdownLinks(t *testing.T) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // per file, read on first use
	links := 0
	for _, f := range files {
		md, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for n, line := range proseLines(string(md)) {
			if line == "" {
				continue
			}
			line = codeSpanRE.ReplaceAllString(line, "")
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if schemeRE.MatchString(target) {
					continue
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				dest := f
				if file != "" {
					dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: %s: no such file", filepath.ToSlash(rel), n+1, target)
					continue
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if anchors[dest] == nil {
					b, err := os.ReadFile(dest)
					if err != nil {
						t.Fatal(err)
					}
					anchors[dest] = headingAnchors(string(b))
				}
				if !anchors[dest][frag] {
					t.Errorf("%s:%d: %s: no such heading", filepath.ToSlash(rel), n+1, target)
				}
			}
		}
	}
	t.Logf("%d relative links in %d Markdown files", links, len(files))
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	headingRE  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	// a link's text stands for the link in a heading's anchor
	headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines returns md's lines with those of fenced code blocks (fences
// included) blanked, so that line numbers stay those of the file.
func proseLines(md string) []string {
	lines := strings.Split(md, "\n")
	fenced := false
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives md's headings: the text
// in lower case, without punctuation other than '-' and '_', spaces as
// '-', and "-1", "-2", ... after a repeated one.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(md) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := headingLinkRE.ReplaceAllString(m[2], "$1")
		slug := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, strings.ToLower(text))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}
