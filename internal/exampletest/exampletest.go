// Package exampletest runs the tool examples' tests (examples/*, modules of
// their own) once per transport and codec against a running sqld:
//
//	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) { ... })
//
// The server is the one $LIBSQL_EXAMPLE_URL names (http://host:port);
// scripts/examples.sh (make examples) starts one and sets it. Without it
// the test is skipped.
package exampletest

import (
	"os"
	"testing"

	"github.com/gohrana/libsql/internal/testmatrix"
)

// URLEnv names the sqld the example tests run against.
const URLEnv = "LIBSQL_EXAMPLE_URL"

// ForEachDSN runs f as a subtest per variant of testmatrix.All (named as
// the integration tests name them: "direct", ..., "ws_protobuf"), with the
// variant's DSN of $LIBSQL_EXAMPLE_URL. The subtests run one after the
// other, since they share the example's tables.
func ForEachDSN(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	base := os.Getenv(URLEnv)
	if base == "" {
		t.Skipf("%s is not set: set it to a running sqld (e.g. http://127.0.0.1:8080), or run make examples", URLEnv)
	}
	for _, variant := range testmatrix.All() {
		t.Run(variant.Name, func(t *testing.T) { f(t, variant.DSN(base)) })
	}
}
