package sqldproc

import (
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

	"github.com/gohrana/libsql/internal/child"
	"github.com/gohrana/libsql/internal/loopback"
)

// Flags of sqld that take a listen address, for Config.Listen.
const (
	// GRPCFlag is the replication (gRPC) listener a replica connects to.
	GRPCFlag = "--grpc-listen-addr"
	// AdminFlag is the admin API (namespaces, among others).
	AdminFlag = "--admin-listen-addr"
)

// Config says how to run a sqld.
type Config struct {
	// Bin is the sqld binary (see Find and Binary). Required.
	Bin string
	// Args are extra sqld flags.
	Args []string
	// Env is extra environment, "K=V", on top of this process's.
	Env []string
	// Listen are further flags that take a listen address (GRPCFlag,
	// AdminFlag): each gets a port of its own, and the server only counts
	// as started once it holds them all.
	Listen []string
	// Dir is where the data (Dir/data.sqld) lives and sqld runs, kept
	// across restarts. Empty: a new temporary directory, which Close
	// removes.
	Dir string
	// Port hands out the ports; nil means loopback.Port.
	Port func() (int, error)
	// StartTimeout bounds the wait for one start's /health; zero means
	// 30 s.
	StartTimeout time.Duration
}

const (
	// maxStartAttempts bounds the starts of a server that found a port
	// taken; each attempt has fresh ports.
	maxStartAttempts = 5
	// restartTimeout bounds Restart's retries while a port of the server
	// is still taken (by the process before, or by another).
	restartTimeout = 20 * time.Second
	// StopGrace is how long Stop gives sqld to shut down gracefully
	// before SIGKILL: it sometimes hangs in its graceful shutdown while
	// clients hold keep-alive connections and streams open.
	StopGrace = 5 * time.Second
	// tailLines is how much of the log errors and failed tests show.
	tailLines = 60
)

// AddrInUse is what sqld logs (then exits) when a port it was given is
// taken.
const AddrInUse = "Address already in use"

// errAddrInUse is the error of a start that failed on a taken port.
var errAddrInUse = errors.New("sqld: " + AddrInUse)

// A Server is a sqld child process listening on 127.0.0.1. Its ports
// and data stay the same across Kill, Stop and Restart.
type Server struct {
	cfg    Config
	dir    string
	ownDir bool // Start made dir; Close removes it
	port   int  // the HTTP port
	listen []listener
	log    *LogBuffer

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil while stopped
	exited chan struct{} // closed when cmd has been waited for
	starts int
}

// A listener is one of Config.Listen's flags and the port given for it.
type listener struct {
	flag string
	port int
}

// Start runs sqld as cfg says and waits until that process answers GET
// /health on its HTTP port while holding all its ports; if it found a port
// taken, it starts again on fresh ones. ctx bounds the start only: the
// server runs until Kill, Stop or Close. A failed start's error ends with
// the last lines of sqld's log.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Bin == "" {
		return nil, errors.New("sqldproc: no sqld binary given")
	}
	if cfg.Port == nil {
		cfg.Port = loopback.Port
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, dir: cfg.Dir, log: &LogBuffer{}}
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "sqldproc-")
		if err != nil {
			return nil, err
		}
		s.dir, s.ownDir = dir, true
	}
	for attempt := 1; ; attempt++ {
		err := s.assignPorts()
		if err == nil {
			err = s.launch(ctx)
		}
		if err == nil {
			return s, nil
		}
		if attempt == maxStartAttempts || !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			_ = s.Close()
			return nil, fmt.Errorf("start sqld (attempt %d of %d): %w\n%s", attempt, maxStartAttempts, err, s.LogTail(tailLines))
		}
	}
}

// StartTest starts a sqld for the test t (Dir defaults to t.TempDir()),
// fails t if that does not work, and kills the server when t ends, showing
// the end of its log if t failed.
func StartTest(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of the log of sqld %s:\n%s\n---", s.URL(), s.LogTail(tailLines))
		}
		s.Kill()
	})
	return s
}

// Starter starts the sqld processes of one test package: each from the
// binary Binary finds through Env, with StartTimeout where the Config has
// none, and each killed when its test ends (StartTest).
type Starter struct {
	Env          string        // the variable that may name the binary
	StartTimeout time.Duration // zero: Start's default
}

// Start starts a sqld of t's own with the extra flags args.
func (st Starter) Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return st.StartWith(t, Config{Args: args})
}

// StartWith starts a sqld of t's own as cfg says, from st's binary.
func (st Starter) StartWith(t testing.TB, cfg Config) *Server {
	t.Helper()
	cfg.Bin = Binary(t, st.Env)
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = st.StartTimeout
	}
	return StartTest(t, cfg)
}

// assignPorts gives the server fresh ports: the HTTP port and one per
// Listen flag.
func (s *Server) assignPorts() error {
	port, err := s.cfg.Port()
	if err != nil {
		return err
	}
	s.port = port
	s.listen = s.listen[:0]
	for _, flag := range s.cfg.Listen {
		port, err := s.cfg.Port()
		if err != nil {
			return err
		}
		s.listen = append(s.listen, listener{flag: flag, port: port})
	}
	return nil
}

// launch starts the process on the server's ports and waits until it
// answers /health on its HTTP port while holding all of them. A start that
// found a port taken fails with errAddrInUse.
func (s *Server) launch(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		select {
		case <-s.exited: // died on its own: may start again
		default:
			return errors.New("sqld is running")
		}
	}
	s.starts++
	fmt.Fprintf(s.log, "=== start #%d of sqld on %s\n", s.starts, s.Addr())
	logStart := s.log.Len()
	args := []string{
		"--http-listen-addr", s.Addr(),
		"--no-welcome",
		"--db-path", filepath.Join(s.dir, "data.sqld"),
	}
	var others []int
	for _, l := range s.listen {
		args = append(args, l.flag, loopbackAddr(l.port))
		others = append(others, l.port)
	}
	cmd := exec.Command(s.cfg.Bin, append(args, s.cfg.Args...)...)
	cmd.Dir = s.dir
	if len(s.cfg.Env) > 0 {
		cmd.Env = append(os.Environ(), s.cfg.Env...)
	}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = child.Attr()
	if err := cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("start %s: %w", s.cfg.Bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited

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
		if strings.Contains(s.log.since(logStart), AddrInUse) {
			return fmt.Errorf("%w (start #%d on %s)", errAddrInUse, s.starts, s.Addr())
		}
		return gone
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	if err := loopback.WaitHealthy(wctx, cmd.Process.Pid, alive, s.port, others...); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		s.cmd = nil
		return err
	}
	return nil
}

// Restart starts a killed or stopped server again on its ports, with its
// data. While a port is still taken it tries again, for up to 20 s; ctx
// bounds the whole.
func (s *Server) Restart(ctx context.Context) error {
	deadline := time.Now().Add(restartTimeout)
	for {
		err := s.launch(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			return fmt.Errorf("restart sqld: %w\n%s", err, s.LogTail(tailLines))
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
// A stopped server stays stopped.
func (s *Server) Kill() { s.end(syscall.SIGKILL, 30*time.Second) }

// Stop ends the process with SIGTERM (sqld's graceful shutdown) and waits
// for it; a process still there StopGrace later gets SIGKILL, and killed
// reports that.
func (s *Server) Stop() (killed bool) { return s.end(syscall.SIGTERM, StopGrace) }

// end sends sig and waits up to grace for the process to exit, then kills
// it.
func (s *Server) end(sig syscall.Signal, grace time.Duration) (killed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
	default:
		fmt.Fprintf(s.log, "=== sending %v to sqld\n", sig)
		_ = s.cmd.Process.Signal(sig)
		select {
		case <-s.exited:
		case <-time.After(grace):
			fmt.Fprintf(s.log, "=== sqld still running %v after %v: SIGKILL\n", grace, sig)
			_ = s.cmd.Process.Kill()
			<-s.exited
			killed = true
		}
	}
	s.cmd = nil
	return killed
}

// Close kills the server and removes its directory if Start made it.
func (s *Server) Close() error {
	s.Kill()
	if s.ownDir {
		return os.RemoveAll(s.dir)
	}
	return nil
}

// loopbackAddr is 127.0.0.1:port.
func loopbackAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// Addr is the HTTP listener's address, 127.0.0.1:port.
func (s *Server) Addr() string { return loopbackAddr(s.port) }

// URL is the server's base URL over HTTP.
func (s *Server) URL() string { return "http://" + s.Addr() }

// WS is the server's base URL over WebSocket.
func (s *Server) WS() string { return "ws://" + s.Addr() }

// Port is the HTTP port.
func (s *Server) Port() int { return s.port }

// Ports are all the server's ports: the HTTP port, then one per
// Config.Listen flag in that order.
func (s *Server) Ports() []int {
	ports := []int{s.port}
	for _, l := range s.listen {
		ports = append(ports, l.port)
	}
	return ports
}

// ListenAddr is the address the server listens on for flag, one of
// Config.Listen. It panics for another flag: the caller's mistake.
func (s *Server) ListenAddr(flag string) string {
	for _, l := range s.listen {
		if l.flag == flag {
			return loopbackAddr(l.port)
		}
	}
	panic("sqldproc: sqld was started without " + flag)
}

// Pid is the process id of the running server, 0 while it is stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Starts counts the processes started so far, failed starts included.
func (s *Server) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// Log is what every process of the server wrote to stdout and stderr,
// each start and signal marked by a line "=== ...".
func (s *Server) Log() string { return s.log.String() }

// LogTail is the last n lines of Log.
func (s *Server) LogTail(n int) string { return lastLines(s.log.String(), n) }
