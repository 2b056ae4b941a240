package embedded_test

// sqld processes of the tests' own, as in itest/restart_sqld_test.go:
// the binary of scripts/sqld.sh (or $LIBSQL_EMBEDDED_SQLD), on ports from
// loopback.Port, taken as started only once loopback.WaitHealthy has seen
// /health answered by that process holding its port; started again on
// fresh ports after "Address already in use"; killed with the test (and
// with the test binary, through Pdeathsig).

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

func sqldBinary(t testing.TB) string {
	t.Helper()
	sqldOnce.Do(func() {
		if p := os.Getenv("LIBSQL_EMBEDDED_SQLD"); p != "" {
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
		t.Fatalf("the sqld binary is needed (or set LIBSQL_EMBEDDED_SQLD): %v", sqldErr)
	}
	return sqldPath
}

// sqld is a sqld child process on 127.0.0.1 with its data in a temporary
// directory, kept across restarts.
type sqld struct {
	t     testing.TB
	bin   string
	dir   string
	cfg   sqldConfig
	port  int
	admin int // the admin API's port, if cfg.admin
	log   *lockedBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

const addrInUse = "Address already in use"

var errAddrInUse = errors.New("sqld: " + addrInUse)

// sqldConfig says how to start a sqld.
type sqldConfig struct {
	args  []string // extra flags
	env   []string // extra environment, "K=V"
	admin bool     // listen for the admin API too (--admin-listen-addr)
}

// startSqld starts a sqld of the test's own with the extra flags args.
func startSqld(t testing.TB, args ...string) *sqld {
	t.Helper()
	return startSqldWith(t, sqldConfig{args: args})
}

func startSqldWith(t testing.TB, cfg sqldConfig) *sqld {
	t.Helper()
	p := &sqld{t: t, bin: sqldBinary(t), dir: t.TempDir(), cfg: cfg, log: &lockedBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- log of sqld %s:\n%s", p.URL(), p.log.tail(40))
		}
		p.kill()
	})
	for attempt := 1; ; attempt++ {
		port, err := loopback.Port()
		if err != nil {
			t.Fatal(err)
		}
		p.port = port
		if cfg.admin {
			if p.admin, err = loopback.Port(); err != nil {
				t.Fatal(err)
			}
		}
		err = p.launch()
		if err == nil {
			return p
		}
		if attempt == 5 || !errors.Is(err, errAddrInUse) {
			t.Fatalf("start sqld (attempt %d): %v\n%s", attempt, err, p.log.tail(40))
		}
	}
}

func (p *sqld) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// dataDir is the server's data directory.
func (p *sqld) dataDir() string { return filepath.Join(p.dir, "data.sqld") }

func (p *sqld) adminAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.admin)) }

// URL is the server's base URL over HTTP.
func (p *sqld) URL() string { return "http://" + p.addr() }

// WS is the server's URL over WebSocket.
func (p *sqld) WS() string { return "ws://" + p.addr() }

func (p *sqld) launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.log.Len()
	args := []string{"--http-listen-addr", p.addr(), "--no-welcome", "--db-path", p.dataDir()}
	var others []int
	if p.cfg.admin {
		args = append(args, "--admin-listen-addr", p.adminAddr())
		others = append(others, p.admin)
	}
	cmd := exec.Command(p.bin, append(args, p.cfg.args...)...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.cfg.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	alive := func(context.Context) error {
		var gone error
		select {
		case <-exited:
			gone = fmt.Errorf("sqld exited during start-up (%v)", cmd.ProcessState)
		default:
		}
		if strings.Contains(p.log.since(start), addrInUse) {
			return errAddrInUse
		}
		return gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := loopback.WaitHealthy(ctx, cmd.Process.Pid, alive, p.port, others...); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		p.cmd = nil
		return err
	}
	return nil
}

// kill ends the server with SIGKILL and waits for it.
func (p *sqld) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
}

// restart starts a killed server again on its port, with its data.
func (p *sqld) restart() {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := p.launch()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !errors.Is(err, errAddrInUse) {
			p.t.Fatalf("restart sqld: %v\n%s", err, p.log.tail(40))
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

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *lockedBuffer) since(off int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf.Bytes()[off:])
}

func (b *lockedBuffer) tail(n int) string {
	b.mu.Lock()
	s := b.buf.String()
	b.mu.Unlock()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
