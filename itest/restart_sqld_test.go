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

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/loopback"
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
	bin    string
	dir    string
	port   int            // the HTTP port, kept across restarts
	addr   string         // 127.0.0.1:port
	listen []sqldListener // further listeners, kept across restarts
	args   []string
	log    *lockedBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	starts int
}

// A sqldListener is a sqld flag that takes a listen address and the port
// the server was given for it.
type sqldListener struct {
	flag string
	port int
}

// sqldConfig says how to start a sqld of the test's own.
type sqldConfig struct {
	args []string // extra sqld flags
	// listen are further flags that take a listen address (e.g.
	// "--grpc-listen-addr", "--admin-listen-addr"): each gets a port of its
	// own, and the server is only taken as started once it holds them all.
	listen []string
	// port hands out the ports; nil means loopback.Port.
	port func() (int, error)
}

// maxStartAttempts bounds the starts of a server that found a port taken;
// each attempt has fresh ports.
const maxStartAttempts = 5

// addrInUse is what sqld logs (then exits) when a port it was given is
// taken.
const addrInUse = "Address already in use"

// errAddrInUse is the error of a start that failed on a taken port.
var errAddrInUse = errors.New("sqld: " + addrInUse)

// startSqld starts a sqld of the test's own with the extra flags args.
func startSqld(t testing.TB, args ...string) *sqldProc {
	t.Helper()
	return startSqldWith(t, sqldConfig{args: args})
}

// startSqldWith starts a sqld of the test's own as cfg says: on fresh
// ports, again on other ones if one was taken, and only taken as started
// once GET /health is answered by this process, holding all its ports.
func startSqldWith(t testing.TB, cfg sqldConfig) *sqldProc {
	t.Helper()
	if cfg.port == nil {
		cfg.port = loopback.Port
	}
	p := &sqldProc{bin: sqldBinary(t), dir: t.TempDir(), args: cfg.args, log: &lockedBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of the log of sqld %s:\n%s\n---", p.URL(), p.log.tail(logTail))
		}
		p.stop(syscall.SIGKILL)
	})
	for attempt := 1; ; attempt++ {
		require.NoError(t, p.assignPorts(cfg.port, cfg.listen), "pick ports for sqld")
		err := p.launch()
		if err == nil {
			return p
		}
		if attempt == maxStartAttempts || !errors.Is(err, errAddrInUse) {
			require.NoError(t, err, "start sqld (attempt %d of %d); log:\n%s", attempt, maxStartAttempts, p.log.tail(logTail))
		}
	}
}

// assignPorts gives the server fresh ports from next: the HTTP port and
// one per flag of flags.
func (p *sqldProc) assignPorts(next func() (int, error), flags []string) error {
	port, err := next()
	if err != nil {
		return err
	}
	p.port, p.addr = port, loopbackAddr(port)
	p.listen = p.listen[:0]
	for _, flag := range flags {
		port, err := next()
		if err != nil {
			return err
		}
		p.listen = append(p.listen, sqldListener{flag: flag, port: port})
	}
	return nil
}

// loopbackAddr is 127.0.0.1:port.
func loopbackAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// URL is the server's base URL.
func (p *sqldProc) URL() string { return "http://" + p.addr }

// listenAddr returns the address the server listens on for flag, one of
// its sqldConfig.listen.
func (p *sqldProc) listenAddr(flag string) string {
	for _, l := range p.listen {
		if l.flag == flag {
			return loopbackAddr(l.port)
		}
	}
	panic("sqld was started without " + flag)
}

// pid is the process id of the running server (0 if stopped).
func (p *sqldProc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// launch starts the process on the server's ports and waits until it
// answers /health on its HTTP port while holding all of them. A start that
// found a port taken fails with errAddrInUse.
func (p *sqldProc) launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starts++
	fmt.Fprintf(p.log, "=== start #%d of sqld on %s\n", p.starts, p.addr)
	logStart := p.log.Len()
	args := []string{
		"--http-listen-addr", p.addr,
		"--no-welcome",
		"--db-path", filepath.Join(p.dir, "data.sqld"),
	}
	var others []int
	for _, l := range p.listen {
		args = append(args, l.flag, loopbackAddr(l.port))
		others = append(others, l.port)
	}
	cmd := exec.Command(p.bin, append(args, p.args...)...)
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

	// alive fails once the process has exited or said that a port was
	// taken (sqld exits then). The log is complete once the process has
	// been waited for, so it is read after looking at that.
	alive := func(context.Context) error {
		var gone error
		select {
		case <-exited:
			gone = fmt.Errorf("sqld exited during start-up (%v)", cmd.ProcessState)
		default:
		}
		if strings.Contains(p.log.since(logStart), addrInUse) {
			return fmt.Errorf("%w (start #%d on %s)", errAddrInUse, p.starts, p.addr)
		}
		return gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := loopback.WaitHealthy(ctx, cmd.Process.Pid, alive, p.port, others...); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		p.cmd = nil
		return err
	}
	return nil
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
		if time.Now().After(deadline) || !errors.Is(err, errAddrInUse) {
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

// Len returns the number of bytes written so far.
func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// since returns what was written after the first off bytes.
func (b *lockedBuffer) since(off int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf.Bytes()[off:])
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
