package otellibsql_test

// The spans against a real sqld of the tests' own, over HTTP and
// WebSocket: the binary of scripts/sqld.sh (or $LIBSQL_OTEL_SQLD), on a
// port from loopback.Port, taken as started once loopback.WaitHealthy has
// seen /health answered by that process; killed with the test (and with
// the test binary, through Pdeathsig).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/loopback"
)

var (
	sqldOnce sync.Once
	sqldPath string
	sqldErr  error
)

// sqldBinary returns the path of the sqld binary.
func sqldBinary(t testing.TB) string {
	t.Helper()
	sqldOnce.Do(func() {
		if p := os.Getenv("LIBSQL_OTEL_SQLD"); p != "" {
			sqldPath = p
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join("..", "scripts", "sqld.sh"))
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			sqldErr = fmt.Errorf("scripts/sqld.sh: %w: %s", err, stderr.String())
			return
		}
		sqldPath = strings.TrimSpace(string(out))
	})
	if sqldErr != nil {
		t.Fatalf("the sqld binary is needed (or set LIBSQL_OTEL_SQLD): %v", sqldErr)
	}
	return sqldPath
}

// startSqld starts a sqld on 127.0.0.1 with its data in a temporary
// directory and the extra flags args, and returns its address.
func startSqld(t testing.TB, args ...string) string {
	t.Helper()
	bin, dir := sqldBinary(t), t.TempDir()
	for attempt := 1; ; attempt++ {
		port, err := loopback.Port()
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		log, err := launch(t, bin, dir, addr, port, args)
		if err == nil {
			return addr
		}
		if attempt == 5 || !errors.Is(err, errAddrInUse) {
			t.Fatalf("start sqld (attempt %d): %v\n%s", attempt, err, log)
		}
	}
}

const addrInUse = "Address already in use"

var errAddrInUse = errors.New("sqld: " + addrInUse)

// launch starts sqld on addr and waits until it answers; the test's end
// kills it.
func launch(t testing.TB, bin, dir, addr string, port int, args []string) (*lockedBuffer, error) {
	log := &lockedBuffer{}
	cmd := exec.Command(bin, append([]string{"--http-listen-addr", addr, "--no-welcome",
		"--db-path", filepath.Join(dir, "data.sqld")}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return log, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	alive := func(context.Context) error {
		if strings.Contains(log.String(), addrInUse) {
			return errAddrInUse
		}
		select {
		case <-exited:
			return fmt.Errorf("sqld exited during start-up (%v)", cmd.ProcessState)
		default:
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := loopback.WaitHealthy(ctx, cmd.Process.Pid, alive, port); err != nil {
		kill()
		return log, err
	}
	t.Cleanup(func() {
		kill()
		if t.Failed() {
			t.Logf("--- log of sqld %s:\n%s", addr, log.String())
		}
	})
	return log, nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
