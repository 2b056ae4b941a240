package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
)

// fileDriver stands in for a local SQLite driver.
type fileDriver struct{ opened []string }

func (d *fileDriver) Open(dsn string) (driver.Conn, error) {
	d.opened = append(d.opened, dsn)
	return nil, errors.New("fileDriver: no real database")
}

var testFileDriver = &fileDriver{}

func init() { sql.Register("libsql-test-file", testFileDriver) }

// TestFileDSN: a file: DSN goes to the first registered local driver, with
// the DSN unchanged; without one, the error names the imports.
func TestFileDSN(t *testing.T) {
	fileDrivers = append(fileDrivers, struct{ name, pkg string }{"libsql-test-file", "example.com/test"})
	defer func() { fileDrivers = fileDrivers[:len(fileDrivers)-1] }()

	_, err := openFile("file:x.db", []string{"libsql", "postgres"})
	var de *DSNError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `_ "github.com/mattn/go-sqlite3"`) || !strings.Contains(err.Error(), `_ "modernc.org/sqlite"`) {
		t.Fatalf("got %v", err)
	}
	c, err := (&Driver{}).OpenConnector("file:test.db?mode=memory")
	if err != nil {
		t.Fatal(err)
	}
	if c.Driver() != testFileDriver {
		t.Fatalf("driver %T", c.Driver())
	}
	if _, err := c.Connect(context.Background()); err == nil || testFileDriver.opened[0] != "file:test.db?mode=memory" {
		t.Fatalf("opened %q, %v", testFileDriver.opened, err)
	}
}

// TestOptionalCodecNotLinked: a known codec whose package the program did
// not import is a DSN error that names the import.
func TestOptionalCodecNotLinked(t *testing.T) {
	optionalCodecs["nolinked"] = "example.com/codec/nolinked"
	defer delete(optionalCodecs, "nolinked")
	cfg := NewConfig()
	cfg.URL = "http://127.0.0.1:1"
	cfg.Codec = "nolinked"
	_, err := NewConnector(cfg)
	var de *DSNError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `_ "example.com/codec/nolinked"`) {
		t.Fatalf("got %v", err)
	}
}
