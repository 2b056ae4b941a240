// Package itest holds the integration tests: they run the driver against a
// real libSQL server (sqld).
//
// TestMain provides one sqld for the whole test binary:
//
//   - LIBSQL_ITEST_URL set (e.g. http://127.0.0.1:8080): that server is used
//     and no container is started.
//   - Otherwise a container is started with testcontainers-go from the image
//     LIBSQL_ITEST_IMAGE (default ghcr.io/tursodatabase/libsql-server:v0.24.32;
//     scripts/image.sh builds a local one). LIBSQL_ITEST_NETWORK=host runs it
//     with host networking, listening on 127.0.0.1 on a port from
//     loopback.Port, and checks that the container's process holds that
//     port; any other value publishes the container's port 8080 on a mapped
//     host port.
//
// The tests' other servers (startServer, sqlds.Start) get their ports the same
// way, so that a test only ever talks to servers it started.
//
// Where the Ryuk reaper image cannot be pulled, set
// TESTCONTAINERS_RYUK_DISABLED=true; the harness terminates its containers
// itself. `make itest` sets all of this for the local image.
package itest

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver
	"github.com/gohrana/libsql/internal/loopback"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/testmatrix"
)

const (
	defaultImage = "ghcr.io/tursodatabase/libsql-server:v0.24.32"
	// containerPort is where sqld listens inside the container when the
	// network mode is not host.
	containerPort = "8080/tcp"
	// startTimeout bounds the wait for a started server's /health;
	// runTimeout bounds starting one, image pull included.
	startTimeout = 90 * time.Second
	runTimeout   = 5 * time.Minute
	logTail      = 60 // lines of server log shown when something fails
	// maxStartAttempts bounds the starts of a container that found its
	// port taken (host networking); each attempt has a fresh port.
	maxStartAttempts = 5
)

// serverURL is the base URL of the shared server, e.g. "http://127.0.0.1:34567".
var serverURL string

// variants are the ways the tests reach sqld (testmatrix.Variant: a
// transport and a codec, named "direct", "gojson", "protobuf" over HTTP
// and "ws_direct", "ws_gojson", "ws_protobuf" over WebSocket, names that
// fit in a table name): every codec over every transport, unless
// LIBSQL_ITEST_CODECS or LIBSQL_ITEST_TRANSPORTS name some
// (comma-separated, e.g. "protobuf" and "ws"), to look at one while
// working on it. httpVariants are its HTTP variants, for the tests of what
// only HTTP has (the HTTP exchange itself: proxies that answer in sqld's
// place, counting RoundTrippers, batons, base_url).
var variants, httpVariants = itestVariants()

func itestVariants() (all, http []testmatrix.Variant) {
	codecs := testmatrix.Codecs
	if s := os.Getenv("LIBSQL_ITEST_CODECS"); s != "" {
		codecs = strings.Split(s, ",")
	}
	transports := testmatrix.Transports
	if s := os.Getenv("LIBSQL_ITEST_TRANSPORTS"); s != "" {
		transports = nil
		for _, tr := range strings.Split(s, ",") {
			transports = append(transports, testmatrix.Transport(tr))
		}
	}
	all = testmatrix.Matrix(transports, codecs)
	for _, variant := range all {
		if variant.Transport == testmatrix.HTTP {
			http = append(http, variant)
		}
	}
	return all, http
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if !testing.Verbose() {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	if hostNetwork() && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		// Inside a container testcontainers would take the Docker bridge
		// gateway as the containers' host; with host networking it is
		// loopback.
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	if u := os.Getenv("LIBSQL_ITEST_URL"); u != "" {
		serverURL = strings.TrimRight(u, "/")
		return m.Run()
	}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	removeOrphans(ctx)
	srv, err := newServer(ctx, serverConfig{})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "itest: %v\n", err)
		if srv != nil {
			srv.printLogs(os.Stderr)
			_ = srv.stop()
		}
		return 1
	}
	serverURL = srv.url

	code := m.Run()
	if code != 0 {
		srv.printLogs(os.Stderr)
	}
	if err := srv.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "itest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// dsn returns the variant's DSN of the shared server, with the extra
// "key=value" params.
func dsn(variant testmatrix.Variant, params ...string) string {
	return variant.DSN(serverURL, params...)
}

// openDB opens a database on baseURL through the variant, with the extra
// DSN params, closed when the test ends.
func openDB(t testing.TB, baseURL string, variant testmatrix.Variant, params ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("libsql", variant.DSN(baseURL, params...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// forEachVariant runs fn as a subtest per variant (transport and codec),
// with a *sql.DB on the shared server that is closed when the subtest ends.
func forEachVariant(t *testing.T, fn func(t *testing.T, db *sql.DB, variant testmatrix.Variant)) {
	t.Helper()
	for _, variant := range variants {
		t.Run(variant.Name, func(t *testing.T) {
			fn(t, openDB(t, serverURL, variant), variant)
		})
	}
}

var tableSeq atomic.Int64

// freshTable creates a table named name plus a unique suffix with the given
// schema (the column list, with or without the parentheses, e.g.
// "(id INTEGER PRIMARY KEY, v TEXT)") and drops it when the test ends.
// It returns the table's name. The suffix holds the process id, so test
// binaries sharing one server (LIBSQL_ITEST_URL) do not collide.
func freshTable(t testing.TB, db *sql.DB, name, schema string) string {
	t.Helper()
	table := fmt.Sprintf("%s_%d_%d", name, os.Getpid(), tableSeq.Add(1))
	schema = strings.TrimSpace(schema)
	if !strings.HasPrefix(schema, "(") {
		schema = "(" + schema + ")"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := db.ExecContext(ctx, "CREATE TABLE "+table+" "+schema)
	require.NoError(t, err, "create table %s", table)
	dropAtEnd(t, db, table)
	return table
}

// startServer starts an extra sqld container of its own (same image and
// network mode as the shared one) with the extra sqld flags args, and
// returns its base URL. It is terminated when the test ends; its log is
// shown if the test failed. It needs Docker even when LIBSQL_ITEST_URL is set.
func startServer(t testing.TB, args ...string) string {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

// startServerEnv is startServer with environment variables for sqld, e.g.
// SQLD_AUTH_JWT_KEY.
func startServerEnv(t testing.TB, env map[string]string, args ...string) string {
	t.Helper()
	return startServerWith(t, serverConfig{env: env, args: args}).url
}

// startServerWith is startServer as cfg says.
func startServerWith(t testing.TB, cfg serverConfig) *server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	srv, err := newServer(ctx, cfg)
	if srv != nil {
		t.Cleanup(func() {
			if t.Failed() {
				var b strings.Builder
				srv.printLogs(&b)
				t.Log(b.String())
			}
			if err := srv.stop(); err != nil {
				t.Error(err)
			}
		})
	}
	require.NoError(t, err)
	return srv
}

// hostNetwork reports whether servers run with host networking.
func hostNetwork() bool { return os.Getenv("LIBSQL_ITEST_NETWORK") == "host" }

// closedAddr returns an address on 127.0.0.1 that nothing listens on, for
// the tests of a refused connection: a port from loopback.Port, which no
// server of this process is given, and the kernel gives to no bind(0).
func closedAddr(t testing.TB) string {
	t.Helper()
	port, err := loopback.Port()
	require.NoError(t, err)
	return loopbackAddr(port)
}

// loopbackAddr is 127.0.0.1:port.
func loopbackAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

type server struct {
	ctr *testcontainers.DockerContainer
	url string
}

// serverConfig says how to start a sqld container.
type serverConfig struct {
	env  map[string]string // environment variables for sqld
	args []string          // extra sqld flags
	// port hands out the port to listen on with host networking; nil
	// means loopback.Port.
	port func() (int, error)
}

// newServer starts a sqld container as cfg says and waits until it is
// healthy (see healthy). On error the returned server, if not nil, holds
// the container, for its log and stop.
func newServer(ctx context.Context, cfg serverConfig) (*server, error) {
	image := os.Getenv("LIBSQL_ITEST_IMAGE")
	if image == "" {
		image = defaultImage
	}
	if cfg.port == nil {
		cfg.port = loopback.Port
	}
	// With host networking the port is picked here and may be taken before
	// sqld binds it (sqld exits then): try again on another one.
	for attempt := 1; ; attempt++ {
		srv, err := startContainer(ctx, image, cfg)
		if err == nil || !hostNetwork() || attempt == maxStartAttempts || srv == nil || !strings.Contains(srv.logs(), sqldproc.AddrInUse) {
			return srv, err
		}
		_ = srv.stop()
	}
}

func startContainer(ctx context.Context, image string, cfg serverConfig) (*server, error) {
	opts := []testcontainers.ContainerCustomizer{
		// Both the public image (whose entrypoint is a wrapper script) and
		// the local one have the binary at /bin/sqld and the data directory
		// /var/lib/sqld as the working directory.
		testcontainers.WithEntrypoint("/bin/sqld"),
		testcontainers.WithLabels(ownerLabels()),
	}
	if len(cfg.env) > 0 {
		opts = append(opts, testcontainers.WithEnv(cfg.env))
	}
	var listen, url string
	var ready healthy
	if hostNetwork() {
		port, err := cfg.port()
		if err != nil {
			return nil, fmt.Errorf("pick a port: %w", err)
		}
		listen = loopbackAddr(port)
		url = "http://" + listen
		ready.port = port
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
		}))
	} else {
		listen = "0.0.0.0:8080"
		opts = append(opts, testcontainers.WithExposedPorts(containerPort))
	}
	cmd := append([]string{"--http-listen-addr", listen, "--no-welcome"}, cfg.args...)
	opts = append(opts,
		testcontainers.WithCmd(cmd...),
		testcontainers.WithWaitStrategyAndDeadline(startTimeout, ready),
	)

	ctr, err := testcontainers.Run(ctx, image, opts...)
	var srv *server
	if ctr != nil {
		srv = &server{ctr: ctr, url: url}
	}
	if err != nil {
		return srv, fmt.Errorf("start sqld container from %s (sqld %s): %w", image, strings.Join(cmd, " "), err)
	}
	if srv.url == "" {
		if srv.url, err = mappedURL(ctx, ctr); err != nil {
			return srv, err
		}
	}
	return srv, nil
}

// mappedURL is the base URL of a container's port 8080 published on the host.
func mappedURL(ctx context.Context, target wait.StrategyTarget) (string, error) {
	host, err := target.Host(ctx)
	if err != nil {
		return "", fmt.Errorf("container host: %w", err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	port, err := target.MappedPort(ctx, containerPort)
	if err != nil {
		return "", fmt.Errorf("container port %s: %w", containerPort, err)
	}
	return "http://" + net.JoinHostPort(host, port.Port()), nil
}

// healthy is a wait strategy: sqld answers GET /health with 200 while the
// container runs.
//
// With host networking (port set) the container's sqld is a process of
// this host listening on 127.0.0.1:port, and the answer must come from it:
// loopback.WaitHealthy checks that the container's process holds the
// port, so a sqld that lost its port to another test's server is not taken
// for started. Otherwise the container's port 8080 is published on a host
// port that Docker picked, which no other server can hold.
// (testcontainers' own wait.ForHTTP is not used: inside a container it
// targets the Docker bridge gateway instead of 127.0.0.1.)
type healthy struct{ port int }

func (h healthy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	running := func(ctx context.Context) (*container.State, error) {
		state, err := target.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("container state: %w", err)
		}
		if !state.Running {
			return nil, fmt.Errorf("sqld is not running (status %s, exit code %d)", state.Status, state.ExitCode)
		}
		return state, nil
	}
	state, err := running(ctx)
	if err != nil {
		return err
	}
	alive := func(ctx context.Context) error {
		_, err := running(ctx)
		return err
	}
	if h.port != 0 {
		// The proof needs the process's open files: Docker in another PID
		// namespace (in a VM, rootless) or another user's would not show
		// them, and no wait would help.
		if _, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", state.Pid)); err != nil {
			return fmt.Errorf("with host networking sqld's process (pid %d) must be visible here, to check that it holds its port: %w (unset LIBSQL_ITEST_NETWORK to publish the port instead)", state.Pid, err)
		}
		return loopback.WaitHealthy(ctx, state.Pid, alive, h.port)
	}
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := alive(ctx); err != nil {
			return err
		}
		var url string
		if url, last = mappedURL(ctx, target); last == nil {
			if last = loopback.GetHealth(ctx, client, url); last == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for sqld's /health: %w (last: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Labels naming the test process that owns a container. With Ryuk disabled
// nothing removes the containers of a test binary that was killed (by a
// test timeout, say) before its cleanup ran; removeOrphans does, next time.
const (
	labelPID  = "gohrana.itest.pid"
	labelHost = "gohrana.itest.host"
)

func ownerLabels() map[string]string {
	host, _ := os.Hostname()
	return map[string]string{labelPID: strconv.Itoa(os.Getpid()), labelHost: host}
}

// removeOrphans removes the containers that test processes of this host left
// behind when they died. Best effort: errors are ignored.
func removeOrphans(ctx context.Context) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return
	}
	defer cli.Close()
	host, _ := os.Hostname()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", labelHost+"="+host),
	})
	if err != nil {
		return
	}
	for _, c := range list.Items {
		pid, err := strconv.Atoi(c.Labels[labelPID])
		if err != nil || processAlive(pid) {
			continue
		}
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// logs returns the last lines of the server's log.
func (s *server) logs() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.ctr.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil && !errors.Is(err, io.EOF) {
		b = fmt.Appendf(b, "\n(log cut: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	return strings.Join(lines, "\n")
}

func (s *server) printLogs(w io.Writer) {
	fmt.Fprintf(w, "--- last lines of the log of sqld %s (container %.12s):\n%s\n---\n", s.url, s.ctr.GetContainerID(), s.logs())
}

func (s *server) stop() error {
	if err := testcontainers.TerminateContainer(s.ctr, testcontainers.StopTimeout(5*time.Second)); err != nil {
		return fmt.Errorf("stop sqld container %.12s: %w", s.ctr.GetContainerID(), err)
	}
	return nil
}
