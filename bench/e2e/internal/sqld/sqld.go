// Package sqld starts throwaway sqld servers for the benchmark commands:
// each on a 127.0.0.1 port from internal/loopback (counted as started only
// once that very process answers GET /health), with a data directory of
// its own that goes away with it.
package sqld

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gohrana/libsql/bench/e2e/internal/child"
	"github.com/gohrana/libsql/internal/loopback"
)

// Find returns the sqld binary: path if it is not empty, else $SQLD, else
// what the repository's scripts/sqld.sh prints (it fetches and caches the
// binary on first use), looked for from the working directory upwards.
func Find(ctx context.Context, path string) (string, error) {
	if path != "" {
		return path, nil
	}
	if p := os.Getenv("SQLD"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "scripts", "sqld.sh")
		if _, err := os.Stat(script); err == nil {
			cmd := exec.CommandContext(ctx, script)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return "", fmt.Errorf("%s: %w", script, err)
			}
			return strings.TrimSpace(string(out)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no scripts/sqld.sh above the working directory; pass -sqld or set SQLD")
		}
		dir = parent
	}
}

// Version returns what bin --version prints, or "?" if that fails.
func Version(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// Server is a running sqld.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *os.File
	dir  string // the data directory and the log, removed with the server
}

// maxAttempts bounds the starts of a server that found its port taken.
const maxAttempts = 5

// Start starts sqld from bin and waits until it serves GET /health itself
// (internal/loopback: a port no other server of this machine's tests and
// tools is given, answered only while this sqld holds it). It retries on
// another port if the one it was given was taken meanwhile. The server is
// not tied to ctx, which only bounds the start: end it with Stop or Kill.
func Start(ctx context.Context, bin string) (*Server, error) {
	var lastErr error
	for range maxAttempts {
		s, log, err := launch(ctx, bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil || !strings.Contains(strings.ToLower(log), "in use") {
			break
		}
	}
	return nil, lastErr
}

// launch makes one attempt of Start. On failure it returns sqld's log too.
func launch(ctx context.Context, bin string) (*Server, string, error) {
	port, err := loopback.Port()
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "libsql-sqld-")
	if err != nil {
		return nil, "", err
	}
	log, err := os.Create(filepath.Join(dir, "sqld.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "-d", filepath.Join(dir, "data.sqld"), "--http-listen-addr", addr, "--no-welcome")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = child.Attr()
	if err := cmd.Start(); err != nil {
		log.Close()
		os.RemoveAll(dir)
		return nil, "", err
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, done: make(chan struct{}), log: log, dir: dir}
	go func() { _ = cmd.Wait(); close(s.done) }()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = loopback.WaitHealthy(wctx, cmd.Process.Pid, s.alive, port)
	cancel()
	if err != nil {
		tail, _ := os.ReadFile(log.Name())
		s.Kill()
		return nil, string(tail), fmt.Errorf("sqld on %s: %w\n%s", addr, err, lastLines(string(tail), 20))
	}
	return s, "", nil
}

// alive reports an error once the server's process has exited.
func (s *Server) alive(context.Context) error {
	select {
	case <-s.done:
		return errors.New("exited before becoming healthy")
	default:
		return nil
	}
}

// Stop terminates the server (SIGTERM, then SIGKILL after 10 s), waits for
// it and removes its directory.
func (s *Server) Stop() { s.end(syscall.SIGTERM) }

// Kill ends the server at once with SIGKILL and removes its directory: for
// a server whose state does not matter, such as one the writer
// measurements may have left stalled.
func (s *Server) Kill() { s.end(syscall.SIGKILL) }

func (s *Server) end(sig os.Signal) {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(sig)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.log.Close()
	os.RemoveAll(s.dir)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
