package encrypt

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

const marker = "MARKER-7f3a9c-clear-text"

func openEnc(t *testing.T, path string, k *Key, pragmas ...string) *sql.DB {
	t.Helper()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	q := "?vfs=" + VFSName + "&" + k.URIParam()
	for _, p := range pragmas {
		q += "&_pragma=" + p
	}
	db, err := sql.Open("sqlite", "file:"+path+q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// assertNoMarker fails if any file under dir holds marker.
func assertNoMarker(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			t.Errorf("%s holds the marker in the clear", p)
		}
		return nil
	})
}

func TestVFSRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.db")
	k, err := Load(path, "secret", true)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	db := openEnc(t, path, k, "journal_mode(WAL)", "page_size(4096)")
	if _, err := db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin()
	for i := range 3000 {
		if _, err := tx.Exec("INSERT INTO t(v) VALUES (?)", marker+strings.Repeat("x", i%50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatal("no WAL:", err)
	}
	assertNoMarker(t, dir)
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	// A sort larger than the cache spills to a temporary file.
	var n int
	if err := db.QueryRow("SELECT count(*) FROM (SELECT v FROM t ORDER BY v DESC)").Scan(&n); err != nil || n != 3000 {
		t.Fatal(n, err)
	}
	assertNoMarker(t, dir)
	db.Close()

	db = openEnc(t, path, k)
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatal(ok, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM t WHERE v LIKE ?", marker+"%").Scan(&n); err != nil || n != 3000 {
		t.Fatal(n, err)
	}
}

func TestLoadKeyErrors(t *testing.T) {
	dir := t.TempDir()
	enc := filepath.Join(dir, "enc.db")
	k, err := Load(enc, "right", true)
	if err != nil {
		t.Fatal(err)
	}
	db := openEnc(t, enc, k, "journal_mode(WAL)")
	if _, err := db.Exec("CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	k.Close()

	plain := filepath.Join(dir, "plain.db")
	pdb, err := sql.Open("sqlite", "file:"+plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pdb.Exec("CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	pdb.Close()

	lostKeyFile := filepath.Join(dir, "lost.db")
	b, _ := os.ReadFile(enc)
	os.WriteFile(lostKeyFile, b, 0o644)
	damaged := filepath.Join(dir, "damaged.db")
	os.WriteFile(damaged, b, 0o644)
	kb, _ := os.ReadFile(KeyFilePath(enc))
	kb[len(keyFileMagic)+4] = 0xff // Argon2id's memory: gigabytes
	os.WriteFile(KeyFilePath(damaged), kb, 0o644)

	for _, tc := range []struct {
		name, path, pass string
		encrypted        bool
		reason           string
	}{
		{"wrong key", enc, "wrong", true, ReasonWrongKey},
		{"missing key", enc, "", false, ReasonNoKey},
		{"key for plaintext", plain, "right", true, ReasonPlaintext},
		{"empty key", enc, "", true, ReasonEmptyKey},
		{"key file lost", lostKeyFile, "right", true, ReasonNoKeyFile},
		{"key file lost, no key", lostKeyFile, "", false, ReasonUnknownFile},
		{"key file damaged", damaged, "right", true, ReasonBadKeyFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Load(tc.path, tc.pass, tc.encrypted)
			var ke *KeyError
			if !errors.Is(err, ErrKey) || !errors.As(err, &ke) || ke.Reason != tc.reason {
				k.Close()
				t.Fatalf("Load: %v, want reason %q", err, tc.reason)
			}
		})
	}
	if k, err := Load(enc, "right", true); err != nil {
		t.Fatal(err)
	} else {
		k.Close()
	}
	if k, err := Load(plain, "", false); err != nil || k != nil {
		t.Fatal(k, err)
	}
}

func TestPages(t *testing.T) {
	ps := NewPages()
	p := bytes.Repeat([]byte(marker), BlockSize/len(marker)+1)[:BlockSize]
	orig := bytes.Clone(p)
	ps.Seal(p, 7)
	if bytes.Contains(p, []byte(marker)) {
		t.Fatal("sealed page holds the marker")
	}
	q := bytes.Clone(p)
	ps.Open(q, 8)
	if bytes.Equal(q, orig) {
		t.Fatal("page opened under another number")
	}
	ps.Open(p, 7)
	if !bytes.Equal(p, orig) {
		t.Fatal("round trip")
	}
}

// TestVFSSharedWAL: a connection reads what another wrote over the units
// it wrote itself. Connection a writes a frame of page 2; b checkpoints,
// and its next write restarts the WAL and puts its own page 2 in the same
// frame; a then reads b's page, not the plaintext it wrote there (a
// cache of the unit last written once served reads too, and a read the
// stale page: wrong rows, then a corrupt file).
func TestVFSSharedWAL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.db")
	k, err := Load(path, "secret", true)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	a := openEnc(t, path, k, "journal_mode(WAL)", "page_size(4096)")
	a.SetMaxOpenConns(1)
	b := openEnc(t, path, k)
	b.SetMaxOpenConns(1)
	if _, err := a.Exec("CREATE TABLE t(v TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		if _, err := a.Exec("INSERT INTO t VALUES ('a')"); err != nil {
			t.Fatal(err)
		}
		var busy, frames, done int
		if err := b.QueryRow("PRAGMA wal_checkpoint(FULL)").Scan(&busy, &frames, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: %v, busy %d", err, busy)
		}
		if _, err := b.Exec("INSERT INTO t VALUES ('b')"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := a.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 2*(round+1) {
			t.Fatalf("round %d: a counts %d rows (%v), want %d", round, n, err, 2*(round+1))
		}
	}
}
