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
)

// The README is read from the repository's root, two levels up.
const readmePath = "../../README.md"

// snippet is one ```go block of the README.
type snippet struct {
	line int    // of its first line in the README
	src  string // its text
}

// TestSnippetsCompile builds and vets every ```go block of README.md, each
// as a package of its own in a scratch module with this module's
// requirements. A snippet is taken as written when it parses as the body of
// a Go file (imports and declarations); otherwise its leading imports stay
// at file level and the rest becomes the body of a function that returns an
// error, so that `return err` works. Snippets may use ctx (a
// context.Context), dsn and token (strings) without declaring them. A
// snippet that imports anything must import all it uses; one without
// imports gets those of the packages in knownImports that it names.
// Compiler and vet messages point at README.md's lines.
func TestSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	snippets := extract(string(readme))
	if len(snippets) == 0 {
		t.Fatal("README.md has no ```go blocks")
	}
	readmeAbs, err := filepath.Abs(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := check(t.TempDir(), readmeAbs, snippets); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	t.Logf("%d snippets", len(snippets))
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
			"vet finding",
			"```go\nimport \"fmt\"\n\nfunc f() { fmt.Printf(\"%d\\n\", \"not a number\") }\n```\n",
			4, "fmt.Printf format %d has arg",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snippets := extract(tt.md)
			if len(snippets) != 1 {
				t.Fatalf("%d snippets in %q, want 1", len(snippets), tt.md)
			}
			out, err := check(t.TempDir(), "README.md", snippets)
			if err == nil {
				t.Fatalf("check passed, want %q", tt.want)
			}
			if want := fmt.Sprintf("README.md:%d:", tt.line); !bytes.Contains(out, []byte(want)) || !bytes.Contains(out, []byte(tt.want)) {
				t.Errorf("output does not say %s ... %s:\n%s", want, tt.want, out)
			}
		})
	}
}

// check builds and vets snippets (from the file at readme) in a scratch
// module in dir, each in a package of its own; it returns the go command's
// output.
func check(dir, readme string, snippets []snippet) ([]byte, error) {
	if err := scratchModule(dir); err != nil {
		return nil, err
	}
	for i, s := range snippets {
		pkg := fmt.Sprintf("s%02d", i+1)
		src, err := wrap(pkg, readme, s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", readme, s.line, err)
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

// extract returns the ```go blocks of a Markdown text.
func extract(md string) []snippet {
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
			cur = &snippet{line: n + 1}
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
// positions are those of the README (at readme).
func wrap(pkg, readme string, s snippet) (string, error) {
	lineDirective := func(line int) string { return fmt.Sprintf("//line %s:%d\n", readme, line) }
	header := "package " + pkg + "\n"

	// Declarations only: the snippet is a file as it stands.
	fset := token.NewFileSet()
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
