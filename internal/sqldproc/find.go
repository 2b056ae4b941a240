package sqldproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Find returns the path of the sqld binary: $env if env names a variable
// that is set, else what the repository's scripts/sqld.sh prints (it
// fetches and caches the binary on first use), looked for from the working
// directory upwards. The script's stderr is part of its error.
func Find(ctx context.Context, env string) (string, error) {
	if env != "" {
		if p := os.Getenv(env); p != "" {
			return p, nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "scripts", "sqld.sh")
		if _, err := os.Stat(script); err == nil {
			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, script)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return "", fmt.Errorf("%s: %w: %s", script, err, strings.TrimSpace(stderr.String()))
			}
			return strings.TrimSpace(string(out)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no scripts/sqld.sh above the working directory" + orSet(env))
		}
		dir = parent
	}
}

// orSet is the hint ", or set $env" for an error message.
func orSet(env string) string {
	if env == "" {
		return ""
	}
	return "; set " + env + " to the sqld binary"
}

// Version returns what bin --version prints, or "?" if that fails.
func Version(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// lookups holds Binary's answer per variable name: scripts/sqld.sh runs
// once per test binary, not once per test.
var lookups sync.Map // env → *lookup

type lookup struct {
	once sync.Once
	path string
	err  error
}

// Binary returns Find(env)'s answer, looked up once per test binary, and
// fails the test if there is none.
func Binary(t testing.TB, env string) string {
	t.Helper()
	v, _ := lookups.LoadOrStore(env, &lookup{})
	l := v.(*lookup)
	l.once.Do(func() { l.path, l.err = Find(context.Background(), env) })
	if l.err != nil {
		t.Fatalf("the sqld binary is needed%s: %v", orSet(env), l.err)
	}
	return l.path
}
