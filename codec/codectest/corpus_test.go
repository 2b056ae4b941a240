package codectest_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohrana/libsql/codec/codectest"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the fixture files of testdata/fuzz/FuzzDifferential")

// maxSeedFile bounds the inputs written as seed files; larger fixtures are
// still seeds through f.Add.
const maxSeedFile = 16 << 10

const corpusDir = "testdata/fuzz/FuzzDifferential"

// seedFiles returns the seed corpus files made from the fixtures, by name.
func seedFiles() map[string][]byte {
	files := map[string][]byte{}
	for _, f := range codectest.Fixtures() {
		if len(f.Input) > maxSeedFile {
			continue
		}
		name := "fixture-" + strings.NewReplacer("/", "_", " ", "_").Replace(f.Name)
		files[name] = fmt.Appendf(nil, "go test fuzz v1\nuint8(%d)\n[]byte(%q)\n", f.Kind, f.Input)
	}
	return files
}

// TestSeedCorpus checks that testdata/fuzz/FuzzDifferential holds the
// fixtures; run it with -update-corpus to rewrite them. Files that do not
// start with "fixture-" (inputs the fuzzer found) are left alone.
func TestSeedCorpus(t *testing.T) {
	want := seedFiles()
	if *updateCorpus {
		old, _ := filepath.Glob(filepath.Join(corpusDir, "fixture-*"))
		for _, p := range old {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(corpusDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range want {
			if err := os.WriteFile(filepath.Join(corpusDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have, _ := filepath.Glob(filepath.Join(corpusDir, "fixture-*"))
	if len(have) != len(want) {
		t.Errorf("%s has %d fixture files, want %d: run go test -run TestSeedCorpus -update-corpus", corpusDir, len(have), len(want))
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s/%s is missing or stale: run go test -run TestSeedCorpus -update-corpus", corpusDir, name)
			return
		}
	}
}
