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
	"net/url"
	"os"
	"testing"
)

// URLEnv names the sqld the example tests run against.
const URLEnv = "LIBSQL_EXAMPLE_URL"

// Transports and Codecs are the combinations every example runs with.
var (
	Transports = []string{"http", "ws"}
	Codecs     = []string{"direct", "gojson", "protobuf"}
)

// ForEachDSN runs f as a subtest ("http_direct", "ws_protobuf", ...) once
// per transport and codec, with the DSN of $LIBSQL_EXAMPLE_URL for it. The
// subtests run one after the other, since they share the example's tables.
func ForEachDSN(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	base := os.Getenv(URLEnv)
	if base == "" {
		t.Skipf("%s is not set: set it to a running sqld (e.g. http://127.0.0.1:8080), or run make examples", URLEnv)
	}
	for _, transport := range Transports {
		for _, codec := range Codecs {
			t.Run(transport+"_"+codec, func(t *testing.T) {
				u, err := url.Parse(base)
				if err != nil {
					t.Fatalf("%s: %v", URLEnv, err)
				}
				if transport == "ws" {
					u.Scheme = "ws" // the server's http:// URL, over WebSocket
				}
				q := u.Query()
				q.Set("codec", codec)
				u.RawQuery = q.Encode()
				f(t, u.String())
			})
		}
	}
}
