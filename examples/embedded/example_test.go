package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/internal/exampletest"
)

// TestRun runs the command against the example sqld over each transport
// and codec, each with a replica file of its own, and checks all it
// prints.
func TestRun(t *testing.T) {
	const want = `1: reads are local
2: writes go to the primary
the local file has the primary's log up to a frame: true
`
	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) {
		path := filepath.Join(t.TempDir(), "replica.db")
		exampletest.CheckOutput(t, want, func(w io.Writer) error { return run(dsn, path, w) })
	})
}
