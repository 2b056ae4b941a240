package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatalf("SyncDir(%s): %v", dir, err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("SyncDir of a missing directory: %v", err)
	}
}

// TestReplace: a written temporary file replaces the file at path; after
// a failed write the error is returned and path keeps what it held.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(data string, werr error) (tmp *os.File, err error) {
		t.Helper()
		tmp, err = os.CreateTemp(dir, "f-*")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tmp.WriteString(data); err != nil {
			t.Fatal(err)
		}
		return tmp, Replace(tmp, path, werr)
	}
	failed := errors.New("write failed")
	tmp, err := write("partial", failed)
	if err != failed {
		t.Fatalf("Replace after a failed write: %v", err)
	}
	if err := tmp.Close(); err == nil {
		t.Error("the temporary file was left open")
	}
	os.Remove(tmp.Name())
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("after a failed write the file holds %q", b)
	}
	tmp, err = write("new", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("the file holds %q, want \"new\"", b)
	}
	if _, err := os.Stat(tmp.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}
