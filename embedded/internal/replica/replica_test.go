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

// noHelloPrimary answers Hello with the recorded hello, the first refused
// BatchLogEntries calls with NO_HELLO (a stale session token; refused < 0:
// always), then with the recorded batch and no more frames; it counts the
// Hello calls.
func noHelloPrimary(t *testing.T, refused int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	hello, err := os.ReadFile("../replog/testdata/hello.body")
	if err != nil {
		t.Fatal(err)
	}
	batch := recordedBatch(t)
	var hellos, batches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", grpcweb.ContentType)
		switch {
		case strings.HasSuffix(r.URL.Path, "/Hello"):
			hellos.Add(1)
			w.Write(hello)
		case strings.HasSuffix(r.URL.Path, "/BatchLogEntries"):
			n := int(batches.Add(1))
			switch {
			case refused < 0 || n <= refused:
				w.Header().Set("Grpc-Status", "9")
				w.Header().Set("Grpc-Message", "NO_HELLO")
			case n == refused+1:
				w.Write(grpcweb.Frame(batch))
			default:
				w.Write(grpcweb.Frame(nil))
			}
		default:
			w.Header().Set("Grpc-Status", "12")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hellos
}

// A primary that refuses several pulls in a row with NO_HELLO (its
// session token moved more than once while it started) is greeted again
// each time, and the sync goes through.
func TestNoHelloGreetedAgain(t *testing.T) {
	srv, hellos := noHelloPrimary(t, 3)
	r := openAgainst(t, srv)
	res, err := r.Sync(testContext(t))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if res.Frames == 0 {
		t.Error("the sync applied no frames")
	}
	if got := hellos.Load(); got != 4 {
		t.Errorf("%d hellos, want 4 (the first, and one per NO_HELLO)", got)
	}
}

// One that never takes the token fails the sync with ErrNoHello after
// maxHellos more hellos.
func TestNoHelloBounded(t *testing.T) {
	srv, hellos := noHelloPrimary(t, -1)
	r := openAgainst(t, srv)
	_, err := r.Sync(testContext(t))
	if !errors.Is(err, replog.ErrNoHello) {
		t.Fatalf("sync: %v, want ErrNoHello", err)
	}
	if got := hellos.Load(); got != 1+maxHellos {
		t.Errorf("%d hellos, want %d", got, 1+maxHellos)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
