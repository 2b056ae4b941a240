//go:build linux

package loopback

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// listenHere listens on 127.0.0.1 in this process, serving GET /health
// with status, until the test ends, and returns the port.
func listenHere(t *testing.T, port string, reuse bool, status int) int {
	t.Helper()
	l, err := listen(port, reuse)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: healthHandler(status)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

func TestHeldBy(t *testing.T) {
	t.Parallel()
	self := os.Getpid()
	mine := listenHere(t, "0", false, http.StatusOK)
	foreign := startHelper(t, "serve 0")
	theirs := foreign.port(t)
	nobody, err := Port()
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		pid   int
		ports []int
		want  error // nil, ErrNotListening or ErrForeign
	}{
		{"own listener", self, []int{mine}, nil},
		{"the other process's listener", foreign.Pid(), []int{theirs}, nil},
		{"a foreign listener", self, []int{theirs}, ErrForeign},
		{"one of two ports foreign", self, []int{mine, theirs}, ErrForeign},
		{"nothing listening", self, []int{nobody}, ErrNotListening},
	} {
		err := HeldBy(tc.pid, tc.ports...)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: HeldBy(%d, %v) = %v, want %v", tc.name, tc.pid, tc.ports, err, tc.want)
		}
	}
}

// With SO_REUSEPORT two processes can listen on one port, and a
// connection may reach either: neither holds it.
func TestHeldByReusePort(t *testing.T) {
	t.Parallel()
	port := listenHere(t, "0", true, http.StatusOK)
	other := startHelper(t, "serve "+strconv.Itoa(port)+" reuseport")
	for _, pid := range []int{os.Getpid(), other.Pid()} {
		if err := HeldBy(pid, port); !errors.Is(err, ErrForeign) {
			t.Errorf("HeldBy(%d, %d) = %v, want ErrForeign", pid, port, err)
		}
	}
}

func TestHeldByIPv6(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if err := HeldBy(os.Getpid(), port); err != nil {
		t.Errorf("HeldBy on [::1]:%d: %v", port, err)
	}
}

func TestHeldByExitedProcess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	port := listenHere(t, "0", false, http.StatusOK)
	if err := HeldBy(cmd.Process.Pid, port); err == nil {
		t.Errorf("HeldBy(%d) of a process that has exited = nil", cmd.Process.Pid)
	}
}

func alwaysAlive(context.Context) error { return nil }

// The race that failed CI: the started server lost its port and another
// server answers /health there. WaitHealthy does not take that answer.
func TestWaitHealthyForeignServer(t *testing.T) {
	t.Parallel()
	foreign := startHelper(t, "serve 0")
	port := foreign.port(t)
	ours := startHelper(t, "idle") // alive, listening nowhere
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := WaitHealthy(ctx, ours.Pid(), alwaysAlive, port)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrForeign) {
		t.Fatalf("WaitHealthy = %v, want the deadline, last ErrForeign", err)
	}
}

// A server that bound its HTTP port but lost another one (sqld binds
// --grpc-listen-addr after the HTTP port, then exits) is not ready.
func TestWaitHealthyOtherPortForeign(t *testing.T) {
	t.Parallel()
	port := listenHere(t, "0", false, http.StatusOK)
	other := startHelper(t, "serve 0")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := WaitHealthy(ctx, os.Getpid(), alwaysAlive, port, other.port(t)); !errors.Is(err, ErrForeign) {
		t.Fatalf("WaitHealthy = %v, want ErrForeign", err)
	}
}

func TestWaitHealthyOwnServer(t *testing.T) {
	t.Parallel()
	port := listenHere(t, "0", false, http.StatusOK)
	other := listenHere(t, "0", false, http.StatusOK)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitHealthy(ctx, os.Getpid(), alwaysAlive, port, other); err != nil {
		t.Fatal(err)
	}
}

func TestWaitHealthyUnhealthy(t *testing.T) {
	t.Parallel()
	port := listenHere(t, "0", false, http.StatusServiceUnavailable)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := WaitHealthy(ctx, os.Getpid(), alwaysAlive, port); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitHealthy = %v, want the deadline", err)
	}
}

func TestWaitHealthyNotAlive(t *testing.T) {
	t.Parallel()
	port := listenHere(t, "0", false, http.StatusOK)
	gone := errors.New("exited")
	err := WaitHealthy(context.Background(), os.Getpid(), func(context.Context) error { return gone }, port)
	if err != gone {
		t.Fatalf("WaitHealthy = %v, want alive's error", err)
	}
}
