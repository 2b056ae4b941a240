package libsql

// What the driver links and which packages import which: rules of the
// module's dependency graph, which no one source file owns.

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDriverLinksNoBaselineCodec: a program that imports only the driver
// must not link the gojson codec or goccy/go-json (they are for
// codec=gojson, once its package is imported).
func TestDriverLinksNoBaselineCodec(t *testing.T) {
	for _, p := range goListDeps(t, ".") {
		if strings.Contains(p, "goccy") || strings.HasSuffix(p, "/codec/gojson") {
			t.Errorf("the driver package depends on %s", p)
		}
	}
}

// TestDriverLinksNoSQLite: a program that imports only the driver links
// no SQLite engine; the embedded replica (module embedded) brings
// modernc.org/sqlite only to programs that import it.
func TestDriverLinksNoSQLite(t *testing.T) {
	for _, p := range goListDeps(t, ".") {
		for _, engine := range []string{"modernc.org/sqlite", "modernc.org/libc", "github.com/mattn/go-sqlite3"} {
			if p == engine || strings.HasPrefix(p, engine+"/") {
				t.Errorf("the driver package depends on %s", p)
			}
		}
	}
}

// TestDriverLinksNoTestHelpers: the helpers that run sqld for the tests and
// tools (internal/sqldproc, internal/loopback) are part of no program that
// imports only the module's public packages.
func TestDriverLinksNoTestHelpers(t *testing.T) {
	var public []string
	for _, p := range goList(t, "./...") {
		if !strings.Contains(p, "/internal/") {
			public = append(public, p)
		}
	}
	for _, p := range goListDeps(t, public...) {
		if strings.HasSuffix(p, "/internal/sqldproc") || strings.HasSuffix(p, "/internal/loopback") {
			t.Errorf("a public package depends on %s", p)
		}
	}
}

// TestTransportsReadNoSQL: the SQL rules live in sqlscan, and the layers
// below the driver's root package read no SQL: the session and the
// transports carry statements, and the root tells them what they need
// (transport.Stream.Send's end).
func TestTransportsReadNoSQL(t *testing.T) {
	for _, p := range goListDeps(t, "./transport/...", "./internal/session") {
		if strings.HasSuffix(p, "/sqlscan") {
			t.Errorf("the transports or the session depend on %s", p)
		}
	}
}

// TestTransportsIndependent: no transport imports another (issue 34); what
// one needs of the other (a side cursor over HTTP for a WebSocket
// connection) the session layer composes.
func TestTransportsIndependent(t *testing.T) {
	const root = "github.com/gohrana/libsql/transport/"
	for _, tp := range []string{"http", "ws"} {
		for _, p := range goListDeps(t, "./transport/"+tp) {
			if other, ok := strings.CutPrefix(p, root); ok && other != tp && !strings.HasPrefix(other, "internal/") {
				t.Errorf("transport/%s depends on transport/%s", tp, other)
			}
		}
	}
}

// goList returns the import paths of the packages go list finds for args;
// it skips the test in -short mode, since it runs go.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// goListDeps returns the import paths of pkgs and of every package they
// depend on.
func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	return goList(t, append([]string{"-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
}
