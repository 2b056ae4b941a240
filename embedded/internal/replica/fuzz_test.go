package replica

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// fakePrimary answers Hello with the recorded hello of sqld 0.24.32 and
// the first BatchLogEntries with batch (then no more frames).
func fakePrimary(t testing.TB, batch []byte) *httptest.Server {
	return fakePrimaryOf(t, [][]byte{batch})
}

// fakePrimaryOf answers the BatchLogEntries calls with batches in turn,
// then with no frames.
func fakePrimaryOf(t testing.TB, batches [][]byte) *httptest.Server {
	srv, _ := scriptedPrimary(t, map[string]answer{
		"BatchLogEntries": func(w http.ResponseWriter, n int) {
			if n <= len(batches) {
				w.Write(grpcweb.Frame(batches[n-1]))
				return
			}
			w.Write(grpcweb.Frame(nil))
		},
	})
	return srv
}

type noReaders struct{}

func (noReaders) Detach(context.Context) error { return nil }
func (noReaders) Attach() error                { return nil }

// syncOnce syncs a new replica against a fake primary serving batch.
func syncOnce(t testing.TB, batch []byte) (string, error) {
	srv := fakePrimary(t, batch)
	path := filepath.Join(t.TempDir(), "r.db")
	r, err := Open(context.Background(), Config{
		Path:    path,
		Client:  replog.NewClient(replog.Config{URL: srv.URL, Client: srv.Client()}),
		Readers: noReaders{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Sync(context.Background())
	if err != nil && r.file.Position() != (localdb.Position{}) {
		t.Fatalf("a failed sync moved the file to %+v: %v", r.file.Position(), err)
	}
	return path, err
}

func recordedBatch(t testing.TB) []byte {
	msg, err := grpcweb.NewReader(bytes.NewReader(recorded(t, "batch.body")), 0).Next(nil)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestSyncRecordedBatch: the recorded batch (CREATE TABLE, INSERT, UPDATE)
// makes a file with that table and rows.
func TestSyncRecordedBatch(t *testing.T) {
	path, err := syncOnce(t, recordedBatch(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", localdb.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("SELECT group_concat(k || '=' || v) FROM kv").Scan(&got); err != nil || got != "1=uno,2=two" {
		t.Errorf("kv: %q, %v", got, err)
	}
}

// FuzzSyncGarbage: whatever the primary answers to BatchLogEntries, a
// sync either applies a valid chain of whole commits or fails with a
// clear error, never panics, and a failed sync writes no page.
func FuzzSyncGarbage(f *testing.F) {
	batch := recordedBatch(f)
	f.Add(batch)
	f.Add(batch[:len(batch)-1])
	f.Add(append(bytes.Clone(batch[:len(batch)/2]), batch[len(batch)/2:]...))
	flipped := bytes.Clone(batch)
	flipped[len(flipped)/3] ^= 0xff
	f.Add(flipped)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := syncOnce(t, b)
		if err == nil {
			return
		}
		var pe *ProtocolError
		var bad = errors.Is(err, localdb.ErrBadCommit)
		if !errors.As(err, &pe) && !bad {
			t.Fatalf("sync of garbage: %T %v", err, err)
		}
	})
}
