package replica

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// An answer is what a scripted primary does with call n (from 1) of a
// method.
type answer func(w http.ResponseWriter, n int)

// scriptedPrimary is a fake primary that serves each method of the
// replication service its answer: Hello, unless given, with the recorded
// hello of sqld 0.24.32, any other method with UNIMPLEMENTED. It counts
// the calls of each method (keyed by its name).
func scriptedPrimary(t testing.TB, answers map[string]answer) (*httptest.Server, *sync.Map) {
	t.Helper()
	if answers["Hello"] == nil {
		hello := recorded(t, "hello.body")
		answers["Hello"] = func(w http.ResponseWriter, _ int) { w.Write(hello) }
	}
	var calls sync.Map // method -> *atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", grpcweb.ContentType)
		method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		c, _ := calls.LoadOrStore(method, new(atomic.Int32))
		n := int(c.(*atomic.Int32).Add(1))
		if a := answers[method]; a != nil {
			a(w, n)
			return
		}
		grpcStatus(w, grpcweb.Unimplemented, "")
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// callCount returns how many times method was called on a scriptedPrimary.
func callCount(calls *sync.Map, method string) int {
	if c, ok := calls.Load(method); ok {
		return int(c.(*atomic.Int32).Load())
	}
	return 0
}

// grpcStatus answers with gRPC status code and message ("" for none).
func grpcStatus(w http.ResponseWriter, code grpcweb.Code, message string) {
	w.Header().Set("Grpc-Status", strconv.Itoa(int(code)))
	if message != "" {
		w.Header().Set("Grpc-Message", message)
	}
}

// recorded reads a recording of sqld 0.24.32 from replog's testdata.
func recorded(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "replog", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshotPrimary answers the first BatchLogEntries with NEED_SNAPSHOT,
// the first pending Snapshot calls with UNAVAILABLE "snapshot not found"
// (sqld still writing a compaction's snapshot; pending < 0: always), then
// with the snapshot recorded from sqld 0.24.32.
func snapshotPrimary(t *testing.T, pending int) (*httptest.Server, *sync.Map) {
	t.Helper()
	snapshot := recorded(t, "snapshot.body")
	return scriptedPrimary(t, map[string]answer{
		"BatchLogEntries": func(w http.ResponseWriter, n int) {
			if n == 1 {
				grpcStatus(w, grpcweb.FailedPrecondition, "NEED_SNAPSHOT")
				return
			}
			w.Write(grpcweb.Frame(nil))
		},
		"Snapshot": func(w http.ResponseWriter, n int) {
			if pending < 0 || n <= pending {
				grpcStatus(w, grpcweb.Unavailable, "snapshot not found")
				return
			}
			w.Write(snapshot)
		},
	})
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
	srv, calls := snapshotPrimary(t, 2)
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
	if got := callCount(calls, "Snapshot"); got != 3 {
		t.Errorf("%d Snapshot calls, want 3 (two refused, then served)", got)
	}
}

// A snapshot that never comes ends with the caller's context, with the
// primary's refusal as the error.
func TestSnapshotPendingUntilContext(t *testing.T) {
	srv, calls := snapshotPrimary(t, -1)
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
	if got := callCount(calls, "Snapshot"); got < 2 {
		t.Errorf("%d Snapshot calls, want it asked again", got)
	}
}

// noHelloPrimary answers the first refused BatchLogEntries calls with
// NO_HELLO (a stale session token; refused < 0: always), then with the
// recorded batch and no more frames.
func noHelloPrimary(t *testing.T, refused int) (*httptest.Server, *sync.Map) {
	t.Helper()
	batch := recordedBatch(t)
	return scriptedPrimary(t, map[string]answer{
		"BatchLogEntries": func(w http.ResponseWriter, n int) {
			switch {
			case refused < 0 || n <= refused:
				grpcStatus(w, grpcweb.FailedPrecondition, "NO_HELLO")
			case n == refused+1:
				w.Write(grpcweb.Frame(batch))
			default:
				w.Write(grpcweb.Frame(nil))
			}
		},
	})
}

// A primary that refuses several pulls in a row with NO_HELLO (its
// session token moved more than once while it started) is greeted again
// each time, and the sync goes through.
func TestNoHelloGreetedAgain(t *testing.T) {
	srv, calls := noHelloPrimary(t, 3)
	r := openAgainst(t, srv)
	res, err := r.Sync(testContext(t))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if res.Frames == 0 {
		t.Error("the sync applied no frames")
	}
	if got := callCount(calls, "Hello"); got != 4 {
		t.Errorf("%d hellos, want 4 (the first, and one per NO_HELLO)", got)
	}
}

// One that never takes the token fails the sync with ErrNoHello after
// maxHellos more hellos.
func TestNoHelloBounded(t *testing.T) {
	srv, calls := noHelloPrimary(t, -1)
	r := openAgainst(t, srv)
	_, err := r.Sync(testContext(t))
	if !errors.Is(err, replog.ErrNoHello) {
		t.Fatalf("sync: %v, want ErrNoHello", err)
	}
	if got := callCount(calls, "Hello"); got != 1+maxHellos {
		t.Errorf("%d hellos, want %d", got, 1+maxHellos)
	}
}

// testContext is a context that ends with the test, or after 10 s.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
