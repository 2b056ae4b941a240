package harness

import (
	"context"
	"database/sql"
	"flag"
	"log"
	"os"
	"strings"
)

// URLFlag defines -url, the base URL of the running sqld that a program
// measures against; Main refuses to start without it.
func URLFlag(example string) *string {
	return flag.String("url", "", "base URL of a running sqld ("+example+")")
}

// Main is a program's main after its flags are defined: it parses them,
// refuses to go on without -url (url), and runs run, exiting with its
// error, prefixed with the program's name.
func Main(name string, url *string, run func() error) {
	flag.Parse()
	if *url == "" {
		log.Fatalf("%s: give -url", name)
	}
	if err := run(); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
}

// LoadAvg returns /proc/loadavg's first three fields (the load averages
// over 1, 5 and 15 minutes), or "" where it cannot be read, for a report
// to say how busy the machine was.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Workspace is what a measurement against a running sqld starts with: a
// temporary directory for its local files and a *sql.DB on the server
// through the driver registered as "libsql".
type Workspace struct {
	Dir     string
	Primary *sql.DB
}

// NewWorkspace makes a Workspace for the program name against base; Close
// removes it.
func NewWorkspace(ctx context.Context, name, base string) (*Workspace, error) {
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("libsql", base)
	if err == nil {
		err = db.PingContext(ctx)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Workspace{Dir: dir, Primary: db}, nil
}

// Close closes the DB and removes the directory.
func (w *Workspace) Close() {
	w.Primary.Close()
	os.RemoveAll(w.Dir)
}
