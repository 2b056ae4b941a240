package itest

// sqld as a child process of the test binary, for the fault, restart and
// expiry tests: a server of one's own starts in well under a second, can be
// killed (SIGKILL) or stopped (SIGTERM) and started again on the same port
// with the same data, and holds no write lock another test could want.
//
// The binary is the one scripts/sqld.sh caches (the same one the local
// Docker image is built from), or $LIBSQL_ITEST_SQLD.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	sqldBinOnce sync.Once
	sqldBinPath string
	sqldBinErr  error
)

// sqldBinary returns the path of the sqld binary.
func sqldBinary(t testing.TB) string {
	t.Helper()
	sqldBinOnce.Do(func() {
		if p := os.Getenv("LIBSQL_ITEST_SQLD"); p != "" {
			sqldBinPath = p
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join("..", "scripts", "sqld.sh"))
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			sqldBinErr = fmt.Errorf("scripts/sqld.sh: %w: %s", err, stderr.String())
			return
		}
		sqldBinPath = strings.TrimSpace(string(out))
	})
	require.NoError(t, sqldBinErr, "the sqld binary is needed (set LIBSQL_ITEST_SQLD to use another)")
	return sqldBinPath
}

// sqldProc is a sqld child process listening on 127.0.0.1 with its data in a
// temporary directory. It is killed when the test ends; its log is shown if
// the test failed.
type sqldProc struct {
	bin  string
	dir  string
	addr string // 127.0.0.1:port, kept across restarts
	args []string
	log  *lockedBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	starts int
}

// startSqld starts a sqld of the test's own with the extra flags args.
func startSqld(t testing.TB, args ...string) *sqldProc {
	t.Helper()
	p := &sqldProc{bin: sqldBinary(t), dir: t.TempDir(), args: args, log: &lockedBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of the log of sqld %s:\n%s\n---", p.URL(), p.log.tail(logTail))
		}
		p.stop(syscall.SIGKILL)
	})
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		require.NoError(t, err)
		p.addr = "127.0.0.1:" + strconv.Itoa(port)
		err = p.launch()
		if err == nil {
			return p
		}
		// The port may have been taken between freePort and sqld's bind.
		if attempt == 3 || !strings.Contains(p.log.String(), "in use") {
			require.NoError(t, err, "start sqld; log:\n%s", p.log.tail(logTail))
		}
	}
}

// URL is the server's base URL.
func (p *sqldProc) URL() string { return "http://" + p.addr }

// launch starts the process and waits until /health answers.
func (p *sqldProc) launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starts++
	fmt.Fprintf(p.log, "=== start #%d of sqld on %s\n", p.starts, p.addr)
	cmd := exec.Command(p.bin, append([]string{
		"--http-listen-addr", p.addr,
		"--no-welcome",
		"--db-path", filepath.Join(p.dir, "data.sqld"),
	}, p.args...)...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// Should the test binary die without its cleanup, the server goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	for {
		err := getHealth(ctx, client, p.URL())
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("sqld exited during start-up (%v)", cmd.ProcessState)
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sqld did not answer /health within %v: %w", startTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sigtermGrace is how long sqld gets to shut down gracefully. It sometimes
// hangs in its graceful shutdown while clients hold keep-alive connections
// and streams open.
const sigtermGrace = 5 * time.Second

// stop ends the process with sig (SIGKILL: a crash; SIGTERM: sqld's
// graceful shutdown) and waits for it. A process still there sigtermGrace
// after SIGTERM is killed; killed reports that.
func (p *sqldProc) stop(sig syscall.Signal) (killed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
	default:
		fmt.Fprintf(p.log, "=== sending %v to sqld\n", sig)
		_ = p.cmd.Process.Signal(sig)
		grace := 30 * time.Second // SIGKILL: only the kernel's time
		if sig != syscall.SIGKILL {
			grace = sigtermGrace
		}
		select {
		case <-p.exited:
		case <-time.After(grace):
			fmt.Fprintf(p.log, "=== sqld still running %v after %v: SIGKILL\n", grace, sig)
			_ = p.cmd.Process.Kill()
			<-p.exited
			killed = true
		}
	}
	p.cmd = nil
	return killed
}

// start starts a stopped server again on its port, with its data.
func (p *sqldProc) start(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := p.launch()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(p.log.String(), "in use") {
			require.NoError(t, err, "restart sqld; log:\n%s", p.log.tail(logTail))
		}
		time.Sleep(200 * time.Millisecond)
	}
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

// tail returns the last n lines.
func (b *lockedBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// privateTable creates a table on a server of the test's own (a sqldProc),
// without freshTable's DROP at the end: the server and its data go away
// with the test, and a DROP could wait seconds for a write lock that a
// lost transaction's stream still holds on the server.
func privateTable(t testing.TB, db *sql.DB, name, schema string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := db.ExecContext(ctx, "CREATE TABLE "+name+" "+schema)
	require.NoError(t, err, "create table %s", name)
	return name
}
