package main

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

	"github.com/gohrana/libsql/internal/loopback"
)

// server is a throwaway sqld on a free 127.0.0.1 port with a temporary data
// directory.
type server struct {
	URL     string // http://127.0.0.1:PORT
	Version string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	log     *os.File
	dir     string
}

// findSQLD returns the sqld binary: the flag, $SQLD, or what the repository's
// scripts/sqld.sh prints (it fetches and caches the binary on first use).
func findSQLD(ctx context.Context, flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
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

// startServer starts sqld and waits until it serves GET /health itself
// (internal/loopback: a port no other server of this machine's tests is
// given, answered only while this sqld holds it). It retries on another
// port if the one it was given was taken meanwhile.
func startServer(ctx context.Context, bin, tmp string) (*server, error) {
	version := "?"
	if out, err := exec.CommandContext(ctx, bin, "--version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	var lastErr error
	for attempt := range 5 {
		port, err := loopback.Port()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(tmp, "sqld-"+strconv.Itoa(attempt))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		log, err := os.Create(filepath.Join(dir, "sqld.log"))
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "-d", filepath.Join(dir, "data.sqld"), "--http-listen-addr", addr, "--no-welcome")
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = childAttr()
		if err := cmd.Start(); err != nil {
			log.Close()
			return nil, err
		}
		s := &server{URL: "http://" + addr, Version: version, cmd: cmd, done: make(chan struct{}), log: log, dir: dir}
		go func() { _ = cmd.Wait(); close(s.done) }()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = loopback.WaitHealthy(wctx, cmd.Process.Pid, s.alive, port)
		cancel()
		if err != nil {
			s.stop()
			tail, _ := os.ReadFile(log.Name())
			lastErr = fmt.Errorf("sqld on %s: %w\n%s", addr, err, lastLines(string(tail), 20))
			if ctx.Err() != nil || !strings.Contains(strings.ToLower(string(tail)), "in use") {
				return nil, lastErr
			}
			continue
		}
		return s, nil
	}
	return nil, lastErr
}

// alive reports an error once the server's process has exited.
func (s *server) alive(context.Context) error {
	select {
	case <-s.done:
		return errors.New("exited before becoming healthy")
	default:
		return nil
	}
}

// stop terminates sqld (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *server) stop() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.log.Close()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
