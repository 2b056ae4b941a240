package replica

import (
	"context"
	"errors"
	"fmt"
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

// A sync goes through refusals that applied nothing and that sqld gives
// for a while (a snapshot it is still writing; NO_HELLO while it starts),
// asking again, and gives up with the refusal once the primary goes on
// refusing for longer than it allows: the caller's context, or maxHellos.
func TestSyncThroughRefusals(t *testing.T) {
	tests := []struct {
		name    string
		primary func(t *testing.T) (*httptest.Server, *sync.Map)
		timeout time.Duration
		wantErr error  // nil: the sync goes through
		method  string // the method whose calls are counted
		calls   func(n int) bool
		want    string
	}{
		{"snapshot pending, then served", func(t *testing.T) (*httptest.Server, *sync.Map) { return snapshotPrimary(t, 2) },
			10 * time.Second, nil, "Snapshot", func(n int) bool { return n == 3 }, "3 (two refused, then served)"},
		{"snapshot never ready", func(t *testing.T) (*httptest.Server, *sync.Map) { return snapshotPrimary(t, -1) },
			500 * time.Millisecond, replog.ErrSnapshotPending, "Snapshot", func(n int) bool { return n >= 2 }, "at least 2 (asked again)"},
		{"NO_HELLO three times", func(t *testing.T) (*httptest.Server, *sync.Map) { return noHelloPrimary(t, 3) },
			10 * time.Second, nil, "Hello", func(n int) bool { return n == 4 }, "4 (the first, and one per NO_HELLO)"},
		{"NO_HELLO always", func(t *testing.T) (*httptest.Server, *sync.Map) { return noHelloPrimary(t, -1) },
			10 * time.Second, replog.ErrNoHello, "Hello", func(n int) bool { return n == 1+maxHellos }, fmt.Sprintf("%d (1+maxHellos)", 1+maxHellos)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := tt.primary(t)
			r := openAgainst(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			start := time.Now()
			res, err := r.Sync(ctx)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("sync: %v", err)
			case tt.wantErr == nil && res.Frames == 0:
				t.Error("the sync applied no frames")
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("sync: %v, want %v", err, tt.wantErr)
			}
			if took := time.Since(start); took > tt.timeout+3*time.Second {
				t.Errorf("the sync returned %v after its context's end", took)
			}
			if n := callCount(calls, tt.method); !tt.calls(n) {
				t.Errorf("%d %s calls, want %s", n, tt.method, tt.want)
			}
		})
	}
}
