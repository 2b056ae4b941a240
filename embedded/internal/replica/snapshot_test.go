package replica

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// snapshotPrimary answers the first BatchLogEntries with NEED_SNAPSHOT,
// the first pending Snapshot calls with UNAVAILABLE "snapshot not found"
// (sqld still writing a compaction's snapshot; pending < 0: always), then
// with the snapshot recorded from sqld 0.24.32; it counts the Snapshot
// calls.
func snapshotPrimary(t *testing.T, pending int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	hello, err := os.ReadFile("../replog/testdata/hello.body")
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile("../replog/testdata/snapshot.body")
	if err != nil {
		t.Fatal(err)
	}
	var batches, snapshots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", grpcweb.ContentType)
		switch {
		case strings.HasSuffix(r.URL.Path, "/Hello"):
			w.Write(hello)
		case strings.HasSuffix(r.URL.Path, "/BatchLogEntries"):
			if batches.Add(1) == 1 {
				w.Header().Set("Grpc-Status", "9")
				w.Header().Set("Grpc-Message", "NEED_SNAPSHOT")
				return
			}
			w.Write(grpcweb.Frame(nil))
		case strings.HasSuffix(r.URL.Path, "/Snapshot"):
			if n := int(snapshots.Add(1)); pending < 0 || n <= pending {
				w.Header().Set("Grpc-Status", "14")
				w.Header().Set("Grpc-Message", "snapshot not found")
				return
			}
			w.Write(snapshot)
		default:
			w.Header().Set("Grpc-Status", "12")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &snapshots
}

func openAgainst(t *testing.T, srv *httptest.Server) *Replicator {
	t.Helper()
	r, err := Open(context.Background(), Config{
		Path:    filepath.Join(t.TempDir(), "r.db"),
		Client:  replog.NewClient(replog.Config{URL: srv.URL, Client: srv.Client()}),
		Readers: noReaders{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A snapshot the primary is still writing is asked for again until it is
// there, as sqld's own replicas do; the sync then succeeds.
func TestSnapshotPendingAskedAgain(t *testing.T) {
	srv, snapshots := snapshotPrimary(t, 2)
	r := openAgainst(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.Sync(ctx)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if res.Frames == 0 {
		t.Error("the sync applied no frames")
	}
	if got := snapshots.Load(); got != 3 {
		t.Errorf("%d Snapshot calls, want 3 (two refused, then served)", got)
	}
}

// A snapshot that never comes ends with the caller's context, with the
// primary's refusal as the error.
func TestSnapshotPendingUntilContext(t *testing.T) {
	srv, snapshots := snapshotPrimary(t, -1)
	r := openAgainst(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Sync(ctx)
	if !errors.Is(err, replog.ErrSnapshotPending) {
		t.Fatalf("sync: %v, want ErrSnapshotPending", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the sync returned %v after its context's end", took)
	}
	if got := snapshots.Load(); got < 2 {
		t.Errorf("%d Snapshot calls, want it asked again", got)
	}
}
