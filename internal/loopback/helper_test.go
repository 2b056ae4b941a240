//go:build linux

package loopback

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gohrana/libsql/internal/helperproc"
)

// The test binary doubles as the other process of the tests (another
// test's server, another test binary): run with helperEnv set, it does
// what that names, prints one line (a port) and then waits until its stdin
// closes.
const helperEnv = "LOOPBACK_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runHelper does one of:
//
//	idle                     print 0
//	serve PORT [reuseport]   serve GET /health 200 on 127.0.0.1:PORT (0: any), print the port
//	claim DIR FIRST LAST     claim a block of 2 in FIRST-LAST with lock files in DIR, print its start
func runHelper(mode string) error {
	f := strings.Fields(mode)
	var line string
	switch {
	case mode == "idle":
		line = "0"
	case len(f) >= 2 && f[0] == "serve":
		l, err := listen(f[1], len(f) > 2 && f[2] == "reuseport")
		if err != nil {
			return err
		}
		go http.Serve(l, healthHandler(http.StatusOK))
		line = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	case len(f) == 4 && f[0] == "claim":
		first, _ := strconv.Atoi(f[2])
		last, _ := strconv.Atoi(f[3])
		a := testAllocator(f[1], first, last, nil)
		if err := a.claim(); err != nil {
			return err
		}
		line = strconv.Itoa(a.next)
	default:
		return fmt.Errorf("unknown helper mode %q", mode)
	}
	fmt.Println(line)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// listen listens on 127.0.0.1:port, with SO_REUSEPORT if reuse is set.
func listen(port string, reuse bool) (net.Listener, error) {
	var lc net.ListenConfig
	if reuse {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(context.Background(), "tcp", "127.0.0.1:"+port)
}

// healthHandler answers GET /health with status.
func healthHandler(status int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
	return mux
}

// helper is a helper process: another process than the test's.
type helper struct{ *helperproc.Process }

// startHelper runs the test binary as a helper in mode; it is stopped when
// the test ends.
func startHelper(t *testing.T, mode string) helper {
	t.Helper()
	return helper{helperproc.Start(t, []string{helperEnv + "=" + mode}, "-test.run=^$")}
}

// port is the port the helper printed.
func (h helper) port(t *testing.T) int {
	t.Helper()
	p, err := strconv.Atoi(h.Line)
	if err != nil {
		t.Fatalf("helper printed %q, not a port", h.Line)
	}
	return p
}

// testAllocator returns an allocator of blocks of 2 in first-last with its
// lock files in dir, no ephemeral range in the way and, unless busy is nil,
// the ports of busy taken.
func testAllocator(dir string, first, last int, busy map[int]bool) *allocator {
	return &allocator{
		dir: dir, first: first, last: last, size: 2,
		ephemeral: func() (int, int) { return 0, -1 },
		free:      func(p int) bool { return !busy[p] },
	}
}
