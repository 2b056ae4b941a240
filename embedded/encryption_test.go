package embedded_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded"
)

// encMarker is a string written on the primary that an encrypted
// replica's directory must never hold in the clear.
const encMarker = "enc-marker-5b1e0d7c"

// markerFiles returns the files under dir that hold encMarker.
func markerFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil // a spool removed meanwhile
		}
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(encMarker)) {
			found = append(found, filepath.Base(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// assertNoMarker fails if a file under dir holds encMarker, and lists
// the files it checked.
func assertNoMarker(t *testing.T, step, dir string) {
	t.Helper()
	if found := markerFiles(t, dir); len(found) > 0 {
		t.Fatalf("%s: the marker is in the clear in %v", step, found)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	t.Logf("%s: no marker in %v", step, names)
}

// TestEncryptionAtRest: with WithEncryption, no file under the replica's
// directory holds the primary's data in the clear, after a sync, a
// snapshot of a compacted log (NEED_SNAPSHOT, through a spool), and a
// rebuild after the primary's log was reset (through a bootstrap file);
// reads return the rows, and the file reopens with the key. The same
// steps in the clear find the marker, so the check can fail.
func TestEncryptionAtRest(t *testing.T) {
	const key = "correct horse battery staple"
	p, prim := startPrimary(t, "--max-log-size", "1")
	fill(t, prim, "t", 100)
	mustExec(t, prim, "UPDATE t SET v = ? || id", encMarker)

	plainDir := t.TempDir()
	plain := openReplica(t, filepath.Join(plainDir, "replica.db"), p.URL(), embedded.WithSyncInterval(0))
	plain.sync(t)
	if len(markerFiles(t, plainDir)) == 0 {
		t.Fatal("a replica in the clear holds no marker: the check cannot fail")
	}
	plain.close()

	dir := t.TempDir()
	path := filepath.Join(dir, "replica.db")
	var log logRecorder
	open := func() *replica {
		return openReplica(t, path, p.URL(), embedded.WithSyncInterval(0), embedded.WithEncryption(key), embedded.WithLogger(slog.New(&log)))
	}
	r := open()
	// synced syncs r, fails step unless the replica logged logged (if not
	// ""), the sign that the sync took the path step is about, and checks
	// that r holds the primary's rows and that no file holds the marker.
	synced := func(step, logged string) {
		t.Helper()
		r.sync(t)
		if logged != "" && log.count(logged) == 0 {
			t.Fatalf("%s: %q never logged: %q", step, logged, log.msgs)
		}
		sameContentKey(t, step, r, prim, key)
		assertNoMarker(t, step, dir)
	}
	synced("first sync", "")

	// About 4 MB of frames over a few pages: the log compacts, and the
	// replica left behind loads a snapshot.
	for i := range 40 {
		mustExec(t, prim, "UPDATE t SET v = ? || printf('%.*c', 3000, 'x'), n = n + ? WHERE id <= 10", encMarker, i)
	}
	time.Sleep(500 * time.Millisecond) // compaction runs in the background
	synced("snapshot", "snapshot applied")

	// A primary killed and started again starts a new log: the replica
	// builds a new file beside the old one and swaps it in.
	p.Kill()
	restartSqld(t, p)
	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (5000, ?, 7)", encMarker+"-new-log")
	synced("new log", "swapped in the new file")
	r.close()

	// Reopened with the key: the rows, and the sync goes on.
	r = open()
	if got := one[int](t, r.db, "SELECT count(*) FROM t WHERE v LIKE ?", encMarker+"%"); got != 101 {
		t.Fatalf("reopened: %d rows with the marker, want 101", got)
	}
	mustExec(t, prim, "INSERT INTO t (id, v, n) VALUES (5001, ?, 1)", encMarker+"-after")
	synced("reopened", "")
}

// TestEncryptionKeyErrors: each kind of key that does not fit the replica
// fails NewConnector with ErrEncryptionKey and says which, before reading
// a page; none of them harms the file, which then opens with the right
// key and checks ok.
func TestEncryptionKeyErrors(t *testing.T) {
	p, prim := startPrimary(t)
	fill(t, prim, "t", 500)
	dir := t.TempDir()
	encPath, plainPath := filepath.Join(dir, "enc.db"), filepath.Join(dir, "plain.db")
	r := openReplica(t, encPath, p.URL(), embedded.WithSyncInterval(0), embedded.WithEncryption("right"))
	r.sync(t)
	r.close()
	r = openReplica(t, plainPath, p.URL(), embedded.WithSyncInterval(0))
	r.sync(t)
	r.close()
	// A copy of the encrypted file without its key file.
	lostPath := filepath.Join(dir, "lost.db")
	b, err := os.ReadFile(encPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lostPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(encPath)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		opts       []embedded.Option
		says       string
	}{
		{"wrong key", encPath, []embedded.Option{embedded.WithEncryption("wrong")}, "wrong key"},
		{"no key", encPath, nil, "no key was given"},
		{"key for plaintext", plainPath, []embedded.Option{embedded.WithEncryption("right")}, "written without encryption"},
		{"empty key", encPath, []embedded.Option{embedded.WithEncryption("")}, "key is empty"},
		{"key file missing", lostPath, []embedded.Option{embedded.WithEncryption("right")}, "key file is missing"},
		{"key file missing, no key", lostPath, nil, "not plaintext SQLite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := embedded.NewConnector(tc.path, p.URL(), append(tc.opts, embedded.WithSyncInterval(0))...)
			if err == nil {
				c.Close()
				t.Fatal("NewConnector succeeded")
			}
			if !errors.Is(err, embedded.ErrEncryptionKey) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("NewConnector: %v; want ErrEncryptionKey saying %q", err, tc.says)
			}
		})
	}
	after, err := os.ReadFile(encPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("a refused open changed the encrypted file")
	}
	r = openReplica(t, encPath, p.URL(), embedded.WithSyncInterval(0), embedded.WithEncryption("right"))
	sameContentKey(t, "after the refusals", r, prim, "right")
	r = openReplica(t, plainPath, p.URL(), embedded.WithSyncInterval(0))
	sameContent(t, "plaintext after the refusals", r, prim)
}

// TestEncryptionVectors: libSQL's vector SQL runs on an encrypted replica
// as on one in the clear: vector_top_k (its TEMP table in memory) and the
// distance functions.
func TestEncryptionVectors(t *testing.T) {
	p, _ := axesPrimary(t)
	r := openReplica(t, "", p.URL(), embedded.WithSyncInterval(0), embedded.WithEncryption("vector key"))
	r.sync(t)
	p.Kill() // local answers only
	if got := one[int](t, r.db, "SELECT id FROM vector_top_k('items_idx', vector32('[0.1,0.9,0]'), 1)"); got != 2 {
		t.Errorf("vector_top_k: %d, want 2", got)
	}
	if got := one[float64](t, r.db, "SELECT vector_distance_cos(e, vector32('[1,0,0]')) FROM items WHERE id = 1"); got != 0 {
		t.Errorf("vector_distance_cos: %v, want 0", got)
	}
}

// TestEncryptionOfflineWrites: with offline writes, the local writes in
// the WAL, the base file kept when the replica closes with writes
// pending, and the files after the push and the restore hold no data in
// the clear; the writes reach the primary once.
func TestEncryptionOfflineWrites(t *testing.T) {
	const key = "offline key"
	p, prim := startPrimary(t)
	fill(t, prim, "t", 200)
	mustExec(t, prim, "UPDATE t SET v = ? || id", encMarker)
	dir := t.TempDir()
	path := filepath.Join(dir, "replica.db")
	r, _ := openOffline(t, path, p.URL(), embedded.WithEncryption(key))
	r.sync(t)
	for i := range 20 {
		mustExec(t, r.db, "INSERT INTO t (id, v, n) VALUES (?, ?, 1)", 1000+i, encMarker+"-local")
	}
	mustExec(t, r.db, "UPDATE t SET v = ? WHERE id <= 50", encMarker+"-changed")
	assertNoMarker(t, "local writes", dir)
	r.close() // writes pending: the base file is saved
	if _, err := os.Stat(filepath.Join(dir, "replica.db-base")); err != nil {
		t.Fatalf("no base file: %v", err)
	}
	assertNoMarker(t, "closed with writes pending", dir)

	r, _ = openOffline(t, path, p.URL(), embedded.WithEncryption(key))
	if got := one[int](t, r.db, "SELECT count(*) FROM t WHERE v LIKE ?", encMarker+"-%"); got != 70 {
		t.Fatalf("reopened: %d local rows, want 70", got)
	}
	r.sync(t) // push, restore from the base, pull
	if got := one[int](t, prim, "SELECT count(*) FROM t WHERE v LIKE ?", encMarker+"-%"); got != 70 {
		t.Fatalf("primary: %d rows written locally, want 70", got)
	}
	sameContentKey(t, "pushed", r, prim, key)
	assertNoMarker(t, "pushed", dir)
}
