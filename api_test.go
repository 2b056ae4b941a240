package libsql

// The public API against its golden file (testdata/api.txt): the exported
// names of every public package, which no one source file owns.

import (
	"bytes"
	"flag"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxTransportNames bounds the names transport/ exports: about four dozen
// (the contract, its options and two constructors; TokenSource came with
// tokens that expire, Stream.Shared with transactions on sockets of their
// own; Response.BytesSent, BytesReceived and Options.TraceFetch with
// tracing, which times requests in the session layer and needs from the
// transports only what that layer cannot see; Options.Proxy with proxies,
// which both transports follow; Options.CloseStreams and Error.StreamGone
// with kept HTTP streams, whose expiry the session recovers from). Raise
// it only with a reason.
const maxTransportNames = 60

var updateAPI = flag.Bool("update-api", false, "rewrite testdata/api.txt from the public packages")

// publicPackages are the directories of the packages users may import:
// the driver, the codec layer with its codecs and conformance suite, the
// SQL reader the embedded module shares, and the transport contract with
// its two transports. Everything else is internal (TestEveryPublicPackage).
var publicPackages = []string{
	".",
	"codec",
	"codec/codectest",
	"codec/direct",
	"codec/gojson",
	"codec/protobuf",
	"sqlscan",
	"transport",
	"transport/http",
	"transport/ws",
}

// TestPublicAPI holds the exported API of every public package against
// testdata/api.txt (one line per exported name, as cmd/api writes them), so
// that every change to it is deliberate: run
//
//	go test -run TestPublicAPI -update-api .
//
// and review the diff. It also keeps the transport packages, which the
// driver's users need none of, small.
func TestPublicAPI(t *testing.T) {
	var lines []string
	perDir := map[string]int{}
	for _, dir := range publicPackages {
		pkgAPI := apiOf(t, dir)
		perDir[dir] = len(pkgAPI)
		lines = append(lines, pkgAPI...)
	}
	got := strings.Join(lines, "\n") + "\n"
	const golden = "testdata/api.txt"
	if *updateAPI {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestPublicAPI -update-api . to create it)", err)
	}
	if got != string(want) {
		gotSet, wantSet := lineSet(got), lineSet(string(want))
		for _, l := range lines {
			if !wantSet[l] {
				t.Errorf("new in the public API: %s", l)
			}
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(want), "\n"), "\n") {
			if !gotSet[l] {
				t.Errorf("gone from the public API: %s", l)
			}
		}
		t.Error("the public API changed: if that is meant, run go test -run TestPublicAPI -update-api . and commit testdata/api.txt")
	}
	transportNames := perDir["transport"] + perDir["transport/http"] + perDir["transport/ws"]
	if transportNames > maxTransportNames {
		t.Errorf("transport/ exports %d names, over %d: it is the driver's own layer, not an API for users", transportNames, maxTransportNames)
	}
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[l] = true
	}
	return m
}

// apiOf lists the exported names of the package in dir (its non-test
// files), one per line: "pkg <path>, <kind> <declaration>".
func apiOf(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no package in %s", dir)
	}
	path := "github.com/gohrana/libsql"
	if dir != "." {
		path += "/" + filepath.ToSlash(dir)
	}
	p, err := doc.NewFromFiles(fset, files, path)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "pkg " + path + ", "
	var out []string
	add := func(s string) { out = append(out, prefix+s) }
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			kind := "var "
			if v.Decl.Tok == token.CONST {
				kind = "const "
			}
			for _, spec := range v.Decl.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() {
						add(kind + n.Name)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			add(funcDecl(fset, f.Decl))
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		spec := typ.Decl.Specs[0].(*ast.TypeSpec)
		switch st := spec.Type.(type) {
		case *ast.StructType:
			add("type " + typ.Name + " struct")
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					if n.IsExported() {
						add("type " + typ.Name + " struct, " + n.Name + " " + node(fset, f.Type))
					}
				}
				if len(f.Names) == 0 {
					add("type " + typ.Name + " struct, embedded " + node(fset, f.Type))
				}
			}
		case *ast.InterfaceType:
			add("type " + typ.Name + " interface")
			for _, m := range st.Methods.List {
				for _, n := range m.Names {
					add("type " + typ.Name + " interface, " + n.Name + strings.TrimPrefix(node(fset, m.Type), "func"))
				}
				if len(m.Names) == 0 {
					add("type " + typ.Name + " interface, embedded " + node(fset, m.Type))
				}
			}
		default:
			eq := " "
			if spec.Assign.IsValid() {
				eq = " = "
			}
			add("type " + typ.Name + eq + node(fset, spec.Type))
		}
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
	slices.Sort(out)
	return out
}

// funcDecl prints a function's or method's signature without its body.
func funcDecl(fset *token.FileSet, d *ast.FuncDecl) string {
	s := "func "
	if d.Recv != nil && len(d.Recv.List) > 0 {
		s += "(" + node(fset, d.Recv.List[0].Type) + ") "
	}
	return s + d.Name.Name + strings.TrimPrefix(node(fset, d.Type), "func")
}

// node prints an expression on one line.
func node(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestEveryPublicPackage: every package of the module outside internal/
// (examples aside) is in publicPackages, so that its API is held by the
// golden file, and its doc comment says who imports it and why.
func TestEveryPublicPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}} {{.Name}} {{.Doc}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, name, _ := strings.Cut(line, " ")
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		if strings.Contains("/"+rel+"/", "/internal/") || strings.HasPrefix(rel, "examples/") || strings.HasPrefix(name, "main") {
			continue
		}
		if !slices.Contains(publicPackages, rel) {
			t.Errorf("public package %s is not in publicPackages (testdata/api.txt)", rel)
			continue
		}
		doc, err := exec.Command("go", "doc", "./"+rel).CombinedOutput()
		if err != nil {
			t.Fatalf("go doc %s: %v", rel, err)
		}
		if !strings.Contains(string(doc), "Who imports it:") {
			t.Errorf("the doc comment of %s does not say who imports it and why", rel)
		}
	}
}
