//go:build linux

package sqldproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/loopback"
)

// fakeEnv makes the test binary, started as sqld, act as a fake one:
// "serve" answers GET /health on --http-listen-addr and listens on the
// other listen flags until killed, logging "Address already in use" (and
// exiting) as sqld does if a port is taken, and counting its starts in a
// file of the data directory; "fail" logs a line and exits 1.
const fakeEnv = "SQLDPROC_TEST_FAKE"

// fakeSay is logged by the fake, to show that Config.Env reaches it.
const fakeSay = "SQLDPROC_TEST_SAY"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		if err := fakeSqld(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeSqld(mode string, args []string) error {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("sqld fake 1.0")
		return nil
	}
	if mode == "fail" {
		return errors.New("boom: the fake sqld fails on purpose")
	}
	fmt.Println("fake sqld says", os.Getenv(fakeSay))
	var addrs []string
	var db string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--http-listen-addr", GRPCFlag, AdminFlag:
			addrs = append(addrs, args[i+1])
		case "--db-path":
			db = args[i+1]
		}
	}
	if err := os.MkdirAll(db, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(db, "starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "start")
	f.Close()
	var http1 net.Listener
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return errors.New(AddrInUse + " (os error 98)") // sqld's words
		}
		if err != nil {
			return err
		}
		if http1 == nil {
			http1 = l
		}
	}
	return http.Serve(http1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
		}
	}))
}

// fake returns the config of a fake sqld in mode.
func fake(t *testing.T, mode string) Config {
	t.Setenv(fakeEnv, mode)
	return Config{Bin: os.Args[0]}
}

// healthy reports whether GET url/health answers 200.
func healthy(url string) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	return loopback.GetHealth(context.Background(), client, url)
}

func TestFind(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SQLDPROC_TEST_BIN", "/from/env/sqld")
	if got, err := Find(ctx, "SQLDPROC_TEST_BIN"); err != nil || got != "/from/env/sqld" {
		t.Errorf("with $SQLDPROC_TEST_BIN: %q, %v", got, err)
	}

	t.Setenv("SQLDPROC_TEST_BIN", "")
	root := t.TempDir()
	sub := filepath.Join(root, "bench", "e2e")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	if _, err := Find(ctx, "SQLDPROC_TEST_BIN"); err == nil || !strings.Contains(err.Error(), "no scripts/sqld.sh") ||
		!strings.Contains(err.Error(), "set SQLDPROC_TEST_BIN") {
		t.Errorf("without a script: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "sqld.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho /from/script/sqld\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(ctx, "SQLDPROC_TEST_BIN"); err != nil || got != "/from/script/sqld" {
		t.Errorf("with scripts/sqld.sh two levels up: %q, %v", got, err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho no npm >&2; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(ctx, ""); err == nil || !strings.Contains(err.Error(), "no npm") {
		t.Errorf("a failing script: %v, want its stderr", err)
	}
}

func TestVersion(t *testing.T) {
	cfg := fake(t, "serve")
	if got := Version(context.Background(), cfg.Bin); got != "sqld fake 1.0" {
		t.Errorf("Version = %q", got)
	}
	if got := Version(context.Background(), filepath.Join(t.TempDir(), "missing")); got != "?" {
		t.Errorf("Version of a missing binary = %q", got)
	}
}

// A server killed and restarted holds the same ports and keeps its data
// directory.
func TestKillRestart(t *testing.T) {
	cfg := fake(t, "serve")
	cfg.Listen = []string{GRPCFlag, AdminFlag}
	cfg.Env = []string{fakeSay + "=hello"}
	s := StartTest(t, cfg)
	if err := healthy(s.URL()); err != nil {
		t.Fatal(err)
	}
	ports := s.Ports()
	if len(ports) != 3 || ports[0] != s.Port() || s.ListenAddr(AdminFlag) != loopbackAddr(ports[2]) {
		t.Fatalf("Ports = %v, Port = %d, admin at %s", ports, s.Port(), s.ListenAddr(AdminFlag))
	}
	if err := loopback.HeldBy(s.Pid(), ports...); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(context.Background()); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("Restart of a running server: %v", err)
	}

	s.Kill()
	if s.Pid() != 0 {
		t.Error("Pid of a killed server")
	}
	if healthy(s.URL()) == nil {
		t.Fatal("a killed server still answers")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := loopback.HeldBy(s.Pid(), ports...); err != nil {
		t.Fatalf("restarted on other ports than %v: %v", ports, err)
	}
	starts, err := os.ReadFile(filepath.Join(s.dir, "data.sqld", "starts"))
	if err != nil || string(starts) != "start\nstart\n" {
		t.Errorf("the data directory after a restart: %q, %v", starts, err)
	}
	if s.Starts() != 2 {
		t.Errorf("Starts = %d", s.Starts())
	}
	log := s.Log()
	for _, want := range []string{"=== start #1", "=== sending killed", "=== start #2", "fake sqld says hello"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log has no %q:\n%s", want, log)
		}
	}
}

// A port taken by another process: sqld says so and exits, and the
// server starts again on fresh ports.
func TestStartPortTaken(t *testing.T) {
	cfg := fake(t, "serve")
	for _, tc := range []struct {
		name   string
		listen []string
		taken  int // the draw that hands out the taken port
	}{
		{"http", nil, 1},
		{"grpc", []string{GRPCFlag}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			taken := l.Addr().(*net.TCPAddr).Port
			drawn := 0
			cfg := cfg
			cfg.Listen = tc.listen
			cfg.Port = func() (int, error) {
				drawn++
				if drawn == tc.taken {
					return taken, nil
				}
				return loopback.Port()
			}
			s := StartTest(t, cfg)
			if s.Starts() != 2 || !strings.Contains(s.Log(), AddrInUse) {
				t.Errorf("%d starts, log:\n%s", s.Starts(), s.Log())
			}
			for _, p := range s.Ports() {
				if p == taken {
					t.Errorf("Ports %v has the taken port", s.Ports())
				}
			}
			if err := loopback.HeldBy(s.Pid(), s.Ports()...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestStartFails(t *testing.T) {
	s, err := Start(context.Background(), fake(t, "fail"))
	if err == nil {
		s.Close()
		t.Fatal("Start succeeded")
	}
	if !strings.Contains(err.Error(), "exited during start-up") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("the error says neither why nor what sqld logged: %v", err)
	}
	if _, err := Start(context.Background(), Config{}); err == nil {
		t.Error("Start without a binary succeeded")
	}
}

// Stop ends the server gracefully; Close removes the directory Start made.
func TestStopClose(t *testing.T) {
	s, err := Start(context.Background(), fake(t, "serve"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.ownDir {
		t.Fatal("Start without Dir made no directory")
	}
	if killed := s.Stop(); killed {
		t.Error("Stop needed SIGKILL")
	}
	if healthy(s.URL()) == nil {
		t.Fatal("a stopped server still answers")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory %s is still there: %v", s.dir, err)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// The real sqld, when $LIBSQL_SQLD or scripts/sqld.sh gives one: a
// replication and an admin listener, a row that outlives a crash and a
// graceful stop.
func TestRealSqld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sqld")
	}
	bin, err := Find(context.Background(), "LIBSQL_SQLD")
	if err != nil {
		t.Skipf("no sqld binary: %v", err)
	}
	s := StartTest(t, Config{Bin: bin, Listen: []string{GRPCFlag, AdminFlag}})
	if err := loopback.HeldBy(s.Pid(), s.Ports()...); err != nil {
		t.Fatal(err)
	}
	execute(t, s, "CREATE TABLE t (x)", "INSERT INTO t VALUES (42)")
	s.Kill()
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := execute(t, s, "SELECT x FROM t"); !strings.Contains(got, `"value":"42"`) {
		t.Errorf("after a crash and a restart: %s", got)
	}
	start := time.Now()
	killed := s.Stop()
	t.Logf("graceful stop in %v, killed: %t", time.Since(start).Round(time.Millisecond), killed)
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := execute(t, s, "SELECT x FROM t"); !strings.Contains(got, `"value":"42"`) {
		t.Errorf("after a stop and a restart: %s", got)
	}
}

// execute runs stmts through Hrana's /v2/pipeline and returns the
// response's body.
func execute(t *testing.T, s *Server, stmts ...string) string {
	t.Helper()
	var reqs []string
	for _, sql := range stmts {
		reqs = append(reqs, fmt.Sprintf(`{"type":"execute","stmt":{"sql":%q}}`, sql))
	}
	body := `{"requests":[` + strings.Join(reqs, ",") + `,{"type":"close"}]}`
	// No keep-alive: an idle connection can hold up sqld's graceful
	// shutdown until StopGrace runs out.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(s.URL()+"/v2/pipeline", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"type":"error"`) {
		t.Fatalf("%s: %s", resp.Status, b)
	}
	return string(b)
}
