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

// loadKey loads the key of the encrypted file at path under pass,
// creating its key file if there is none; it is closed at the end of the
// test, after the databases opened on it.
func loadKey(t *testing.T, path, pass string) *Key {
	t.Helper()
	k, err := Load(path, pass, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// mustExec runs q on db and fails the test if it fails.
func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
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
	k := loadKey(t, path, "secret")
	db := openEnc(t, path, k, "journal_mode(WAL)", "page_size(4096)")
	mustExec(t, db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
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
	mustExec(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
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
	k := loadKey(t, enc, "right")
	db := openEnc(t, enc, k, "journal_mode(WAL)")
	mustExec(t, db, "CREATE TABLE t(x)")
	db.Close()
	k.Close()

	plain := filepath.Join(dir, "plain.db")
	pdb, err := sql.Open("sqlite", "file:"+plain)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, pdb, "CREATE TABLE t(x)")
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
			if msg := err.Error(); !strings.Contains(msg, tc.path) || !strings.Contains(msg, tc.reason) {
				t.Errorf("the error %q names not the file or not the reason", msg)
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

// checkSealOpen checks a cipher that works in place on a block at a
// position (a page number, an offset): a block sealed at at holds none of
// its clear text, opens back to it at at, and not at other.
func checkSealOpen[P any](t *testing.T, seal, open func(p []byte, pos P), at, other P) {
	t.Helper()
	p := bytes.Repeat([]byte(marker), BlockSize/len(marker)+1)[:BlockSize]
	orig := bytes.Clone(p)
	seal(p, at)
	if bytes.Contains(p, []byte(marker)) {
		t.Fatal("sealed block holds the marker")
	}
	q := bytes.Clone(p)
	open(q, other)
	if bytes.Equal(q, orig) {
		t.Fatal("block opened at another position")
	}
	open(p, at)
	if !bytes.Equal(p, orig) {
		t.Fatal("round trip")
	}
}

func TestPages(t *testing.T) {
	ps := NewPages()
	checkSealOpen(t, ps.Seal, ps.Open, 7, 8)
}

// TestUnits: a unit sealed under its offset holds none of its clear text
// and opens back to it only under that offset; a unit of zeros (a hole)
// opens as zeros.
func TestUnits(t *testing.T) {
	k := loadKey(t, filepath.Join(t.TempDir(), "r.db"), "secret")
	u := k.Units(KindBase)
	checkSealOpen(t, u.Seal, u.Open, 4096, 8192)
	hole := make([]byte, BlockSize)
	u.Open(hole, 0)
	if !allZero(hole) {
		t.Fatal("a hole did not open as zeros")
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
	k := loadKey(t, path, "secret")
	a := openEnc(t, path, k, "journal_mode(WAL)", "page_size(4096)")
	a.SetMaxOpenConns(1)
	b := openEnc(t, path, k)
	b.SetMaxOpenConns(1)
	mustExec(t, a, "CREATE TABLE t(v TEXT)")
	mustExec(t, a, "PRAGMA wal_checkpoint(TRUNCATE)")
	for round := range 5 {
		mustExec(t, a, "INSERT INTO t VALUES ('a')")
		var busy, frames, done int
		if err := b.QueryRow("PRAGMA wal_checkpoint(FULL)").Scan(&busy, &frames, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: %v, busy %d", err, busy)
		}
		mustExec(t, b, "INSERT INTO t VALUES ('b')")
		var n int
		if err := a.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 2*(round+1) {
			t.Fatalf("round %d: a counts %d rows (%v), want %d", round, n, err, 2*(round+1))
		}
	}
}
