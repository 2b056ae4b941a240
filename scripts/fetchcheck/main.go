// Command fetchcheck proves that the repository's published modules build
// as dependencies of a program outside the repository, where replace
// directives do not apply: every version a module requires of another
// must exist. It serves the modules of a commit from a file-based module
// proxy (GOPROXY=file://..., laid out as the module proxy protocol says),
// then builds, in a throwaway module in a temporary directory, a program
// that requires github.com/gohrana/libsql/embedded and
// github.com/gohrana/libsql/otel, and runs it: it writes through an
// embedded replica to a sqld of its own and reads the row back locally.
//
//	go run . -repo ../.. -sqld "$(../sqld.sh)"
//
// The root module is served at the version embedded/go.mod and otel/go.mod
// require: from the git tag of that name if the repository has one (the
// release that users fetch), else from the commit checked (the release
// that is to be tagged from it; see docs/dev/RELEASING.md). A requirement
// of a version that cannot exist (the zero pseudo-version that only a
// replace directive makes work) fails the check.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"

	"github.com/gohrana/libsql/internal/sqldproc"
)

const rootPath = "github.com/gohrana/libsql"

// published are the modules besides the root that users require, by
// directory in the repository.
var published = []string{"embedded", "otel"}

func main() {
	repo := flag.String("repo", "../..", "the repository's root directory")
	rev := flag.String("rev", "HEAD", "the commit whose modules are served")
	sqld := flag.String("sqld", "", "the sqld binary (scripts/sqld.sh prints its path)")
	keep := flag.Bool("keep", false, "keep the temporary directory (its path is logged)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fetchcheck: ")
	if *sqld == "" {
		log.Fatal("-sqld is required")
	}
	if err := run(*repo, *rev, *sqld, *keep); err != nil {
		log.Fatal(err)
	}
}

func run(repo, rev, sqld string, keep bool) error {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fetchcheck-")
	if err != nil {
		return err
	}
	if keep {
		log.Printf("temporary directory %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	proxy := filepath.Join(tmp, "proxy")

	rootVersion, err := requiredRoot(repo)
	if err != nil {
		return err
	}
	rootRev := rev
	if tagged(repo, rootVersion) {
		rootRev = rootVersion
	}
	log.Printf("root module %s@%s from %s", rootPath, rootVersion, rootRev)
	if err := serve(proxy, repo, rootRev, "", module.Version{Path: rootPath, Version: rootVersion}); err != nil {
		return err
	}
	// The published modules are served at the root's version: the program
	// requires them at it, and nothing else reads their version.
	var requires []module.Version
	for _, dir := range published {
		m := module.Version{Path: rootPath + "/" + dir, Version: rootVersion}
		if err := serve(proxy, repo, rev, dir, m); err != nil {
			return err
		}
		requires = append(requires, m)
	}

	app := filepath.Join(tmp, "app")
	if err := writeApp(app, requires); err != nil {
		return err
	}
	// A module cache of its own: the shared one may hold these versions
	// from an earlier run, made of another commit. The shared cache's
	// downloads serve the other modules, as a second file proxy.
	// -trimpath keeps the build cache's entries of the other modules
	// valid whatever the cache's directory.
	env := append(os.Environ(),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(goEnv("GOMODCACHE"), "cache", "download"))+","+goEnv("GOPROXY"),
		"GONOSUMDB="+rootPath, // served here, not in the checksum database
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOWORK=off",
	)
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "app", "."}} {
		if out, err := command(app, env, "go", args...); err != nil {
			return fmt.Errorf("go %s in a module outside the repository: %w\n%s", strings.Join(args, " "), err, out)
		}
	}

	if err := noInternals(app, env); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: sqld})
	if err != nil {
		return err
	}
	defer srv.Close()
	out, err := command(app, env, filepath.Join(app, "app"), srv.URL(), filepath.Join(tmp, "replica.db"))
	if err != nil {
		return fmt.Errorf("the program: %w\n%s", err, out)
	}
	const want = "rows 2, sum 42, spans 2\n"
	if out != want {
		return fmt.Errorf("the program printed %q, want %q", out, want)
	}
	log.Printf("ok: a module outside the repository built and ran against %s@%s, %s and %s", rootPath, rootVersion, requires[0], requires[1])
	return nil
}

// noInternals checks that no package of a published module that the
// program links imports the root module's internal packages: those tie
// the module's releases to the root's internals, which may change in any
// release.
func noInternals(app string, env []string) error {
	out, err := command(app, env, "go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".")
	if err != nil {
		return fmt.Errorf("go list: %w\n%s", err, out)
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, dir := range published {
			mod := rootPath + "/" + dir
			if pkg != mod && !strings.HasPrefix(pkg, mod+"/") {
				continue
			}
			for _, imp := range strings.Fields(imports) {
				if strings.HasPrefix(imp, rootPath+"/internal/") {
					bad = append(bad, pkg+" imports "+imp)
				}
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("published modules import the root module's internal packages:\n%s", strings.Join(bad, "\n"))
	}
	return nil
}

// requiredRoot returns the version of the root module that every
// published module requires, which must be one and a release's.
func requiredRoot(repo string) (string, error) {
	var version string
	for _, dir := range published {
		path := filepath.Join(repo, dir, "go.mod")
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		f, err := modfile.ParseLax(path, data, nil)
		if err != nil {
			return "", err
		}
		var v string
		for _, r := range f.Require {
			if r.Mod.Path == rootPath {
				v = r.Mod.Version
			}
		}
		switch {
		case v == "":
			return "", fmt.Errorf("%s/go.mod does not require %s", dir, rootPath)
		case !semver.IsValid(v) || semver.Prerelease(v) != "" || module.IsPseudoVersion(v):
			return "", fmt.Errorf("%s/go.mod requires %s %s: not a release, so no program outside the repository can fetch it (a replace directive applies only inside)", dir, rootPath, v)
		case version != "" && v != version:
			return "", fmt.Errorf("%s/go.mod requires %s %s, %s/go.mod %s: the published modules move together", dir, rootPath, v, published[0], version)
		}
		version = v
	}
	return version, nil
}

// tagged reports whether the repository has the tag name.
func tagged(repo, name string) bool {
	_, err := command(repo, nil, "git", "rev-parse", "-q", "--verify", "refs/tags/"+name)
	return err == nil
}

// serve adds module m, made of directory dir of the repository at
// revision rev, to the file proxy at proxy: its .info, .mod, .zip and
// its line in the list.
func serve(proxy, repo, rev, dir string, m module.Version) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromVCS(&zip, m, repo, rev, dir); err != nil {
		return fmt.Errorf("zip %s from %s:%s: %w", m, rev, dir, err)
	}
	gomod, err := command(repo, nil, "git", "show", rev+":"+filepath.ToSlash(filepath.Join(dir, "go.mod")))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		m.Version + ".info": info,
		m.Version + ".mod":  []byte(gomod),
		m.Version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	list, err := os.OpenFile(filepath.Join(at, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(list, m.Version)
	return errors.Join(err, list.Close())
}

// appSource is the program: a write through an embedded replica to the
// primary, traced by the otel module, and a local read that sees it.
const appSource = `package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded"
	otellibsql "github.com/gohrana/libsql/otel"
)

func main() {
	spans := tracetest.NewSpanRecorder()
	tracer := otellibsql.NewTracer(otellibsql.WithTracerProvider(trace.NewTracerProvider(trace.WithSpanProcessor(spans))))
	c, err := embedded.NewConnector(os.Args[2], os.Args[1], embedded.WithPrimaryOptions(libsql.WithTracer(tracer)))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	db := sql.OpenDB(c)
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (v INTEGER)"); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?), (?)", 40, 2); err != nil {
		log.Fatal(err)
	}
	var rows, sum int
	if err := db.QueryRowContext(ctx, "SELECT count(*), sum(v) FROM t").Scan(&rows, &sum); err != nil {
		log.Fatal(err)
	}
	n := 0
	for _, s := range spans.Ended() {
		if s.SpanKind().String() == "client" {
			n++
		}
	}
	fmt.Printf("rows %d, sum %d, spans %d\n", rows, sum, n)
}
`

// writeApp writes the throwaway module that requires mods.
func writeApp(dir string, mods []module.Version) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := &modfile.File{}
	if err := f.AddModuleStmt("fetchcheck.example/app"); err != nil {
		return err
	}
	if err := f.AddGoStmt(strings.TrimPrefix(goEnv("GOVERSION"), "go")); err != nil {
		return err
	}
	for _, m := range mods {
		if err := f.AddRequire(m.Path, m.Version); err != nil {
			return err
		}
	}
	gomod, err := f.Format()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), gomod, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(appSource), 0o644)
}

// goEnv returns the go command's setting of name.
func goEnv(name string) string {
	out, err := command("", nil, "go", "env", name)
	if err != nil {
		log.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(out)
}

// command runs name with args in dir (env nil: this process's) and
// returns its output, stdout and stderr together.
func command(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
