package embedded_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/embedded"
)

// unreachable is a primary nothing listens on (port 1 of loopback, never
// handed out by loopback.Port): connections are refused.
const unreachable = "http://127.0.0.1:1"

// TestConnectorWithoutPrimary: a Connector opens without contacting the
// primary; its replica answers locally, writes fail saying they did not
// run, and after Close everything is ErrClosed.
func TestConnectorWithoutPrimary(t *testing.T) {
	c, err := embedded.NewConnector(filepath.Join(t.TempDir(), "sub", "r.db"), unreachable, embedded.WithSyncInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	ctx := context.Background()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil || n != 0 {
		t.Errorf("local read of a new replica: %d, %v", n, err)
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE x (y)")
	var pe *embedded.PrimaryError
	if !errors.As(err, &pe) || pe.MayHaveRun {
		t.Errorf("write: %v, want a PrimaryError that did not run", err)
	}
	if _, err := c.Sync(ctx); err == nil {
		t.Error("Sync succeeded")
	}
	if _, err := c.Driver().Open("anything"); err == nil {
		t.Error("Driver().Open succeeded")
	}
	db.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(ctx); !errors.Is(err, embedded.ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	if _, err := c.Connect(ctx); !errors.Is(err, embedded.ErrClosed) {
		t.Errorf("Connect after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNewConnectorRefuses(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	fdb, err := sql.Open("sqlite", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, fdb, "CREATE TABLE mine (v)")
	fdb.Close()
	tests := []struct {
		name, path, dsn string
	}{
		{"no path", "", unreachable},
		{"bad DSN", filepath.Join(dir, "a.db"), "ftp://example.com"},
		{"unknown DSN parameter", filepath.Join(dir, "b.db"), unreachable + "?colour=blue"},
		{"a file no replica wrote", foreign, unreachable},
	}
	for _, tt := range tests {
		c, err := embedded.NewConnector(tt.path, tt.dsn, embedded.WithSyncInterval(0))
		if err == nil {
			c.Close()
			t.Errorf("%s: NewConnector succeeded", tt.name)
		}
	}
}
