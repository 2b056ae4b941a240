package libsql

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDSNParamsInREADME: the README's DSN reference lists every parameter
// of dsnParamTable, with its aliases, and no other.
func TestDSNParamsInREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## DSN reference")
	end := strings.Index(s[start:], "### Defaults and why")
	if start < 0 || end < 0 {
		t.Fatal("README.md: no DSN reference section")
	}
	name := regexp.MustCompile("`([A-Za-z_]+)`")
	documented := map[string]bool{}
	for _, line := range strings.Split(s[start:start+end], "\n") {
		cell, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		cell, _, _ = strings.Cut("`"+cell, " |")
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			documented[m[1]] = true
		}
	}
	known := map[string]bool{}
	for _, n := range dsnParamNames() {
		known[n] = true
		if !documented[n] {
			t.Errorf("README.md's DSN reference does not list %s", n)
		}
	}
	for n := range documented {
		if !known[n] {
			t.Errorf("README.md's DSN reference lists %s, which ParseDSN does not know", n)
		}
	}
}

// TestDSNParamDefaultsOmitted: FormatDSN writes no parameter for a field
// that holds its default (NewConfig's).
func TestDSNParamDefaultsOmitted(t *testing.T) {
	for _, p := range dsnParamTable {
		if p.format == nil {
			continue
		}
		t.Run(p.names[0], func(t *testing.T) {
			cfg := NewConfig()
			cfg.URL = "http://h"
			if v := p.format(cfg); len(v) != 0 {
				t.Fatalf("a new Config writes %s=%q", p.names[0], v)
			}
		})
	}
}
