// Command e2e-peer runs one bench/e2e workload through
// github.com/tursodatabase/libsql-client-go and prints its result as one
// JSON line. It is a separate program because that driver registers the
// same database/sql name, "libsql", as this repository's. The DSN is the
// server's URL, e.g. http://127.0.0.1:8080, or ws://127.0.0.1:8080 for its
// WebSocket client (sqld without auth). The driver is used as it comes:
// over HTTP its requests go through http.DefaultClient.
package main

import (
	"github.com/gohrana/libsql/bench/e2e/internal/worker"
	_ "github.com/tursodatabase/libsql-client-go/libsql"
)

func main() {
	worker.Main(worker.Program{Name: "e2e-peer", Driver: "libsql"})
}
