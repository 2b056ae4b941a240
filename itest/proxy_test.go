package itest

import (
	"context"
	"crypto/tls"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/loopback"
)

// tinyproxy is a real forward proxy (Debian's tinyproxy, which make itest
// installs) on 127.0.0.1, of the test's own, that wants Basic credentials
// and lets CONNECT reach any port.
type tinyproxy struct {
	addr string
	user string
	pass string
	log  string
}

func startTinyproxy(t testing.TB) *tinyproxy {
	t.Helper()
	bin, err := exec.LookPath("tinyproxy")
	require.NoError(t, err, "tinyproxy is not installed: make itest installs it (scripts/apt-install.sh tinyproxy)")
	// loopback.Port, not a port the kernel picked for a listener closed at
	// once: that one is in the ephemeral range, where a client connection
	// can take it before tinyproxy binds it.
	n, err := loopback.Port()
	require.NoError(t, err)
	port := strconv.Itoa(n)
	addr := net.JoinHostPort("127.0.0.1", port)
	dir := t.TempDir()
	p := &tinyproxy{addr: addr, user: "itest", pass: "pr0xy-s3cret", log: filepath.Join(dir, "tinyproxy.log")}
	conf := filepath.Join(dir, "tinyproxy.conf")
	// No ConnectPort line: CONNECT may reach any port (sqld's test ports).
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`Port %s
Listen 127.0.0.1
Timeout 600
MaxClients 100
Allow 127.0.0.1
BasicAuth %s %s
LogFile "%s"
LogLevel Info
PidFile "%s"
`, port, p.user, p.pass, p.log, filepath.Join(dir, "tinyproxy.pid"))), 0o600))
	cmd := exec.Command(bin, "-d", "-c", conf)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(p.log)
			t.Fatalf("tinyproxy did not listen on %s: %v\n%s", addr, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// url is the proxy's URL, with the credentials when auth.
func (p *tinyproxy) url(auth bool) string {
	u := url.URL{Scheme: "http", Host: p.addr}
	if auth {
		u.User = url.UserPassword(p.user, p.pass)
	}
	return u.String()
}

// requests counts the requests tinyproxy logged, as "Request (file
// descriptor" lines.
func (p *tinyproxy) requests(t testing.TB) int {
	b, err := os.ReadFile(p.log)
	require.NoError(t, err)
	return strings.Count(string(b), "Request (file descriptor")
}

// A real forward proxy in front of sqld, and a TLS proxy behind it: over
// HTTP (forwarded) and WebSocket (CONNECT), in the clear and over TLS
// (CONNECT), statements, a transaction and a streamed result go through;
// wrong credentials are refused with the proxy's answer; proxy=none goes
// direct.
func TestProxy(t *testing.T) {
	p := startTinyproxy(t)
	ca := tlsNewCA(t, "libsql itest proxy CA")
	front := tlsStartFront(t, serverURL, ca.leaf(t, []string{"localhost"}, net.IPv4(127, 0, 0, 1)))
	trusted := &tls.Config{RootCAs: ca.pool}
	plain := strings.TrimPrefix(serverURL, "http://")
	for _, tt := range []struct{ name, dsn string }{
		{"http", "http://" + plain},
		{"ws", "ws://" + plain},
		{"https", "https://" + front.addr},
		{"wss", "wss://" + front.addr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			open := func(proxy string) *sql.DB {
				cfg, err := libsql.ParseDSN(tt.dsn)
				require.NoError(t, err)
				cfg.Proxy, cfg.TLSConfig, cfg.Timeout = proxy, trusted, 20*time.Second
				return openConnector(t, cfg)
			}
			before := p.requests(t)
			db := open(p.url(true))
			table := freshTable(t, db, "proxy", "(id INTEGER PRIMARY KEY, v TEXT)")
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			for i := range 3 {
				_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", strings.Repeat("x", 1<<20)+fmt.Sprint(i))
				require.NoError(t, err)
			}
			require.NoError(t, tx.Commit())
			// Over sqld's 10 MB response limit: streamed through a cursor.
			rows, err := db.QueryContext(ctx, "SELECT v FROM "+table+", (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4)")
			require.NoError(t, err)
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			require.Equal(t, 12, n)
			require.Greater(t, p.requests(t), before, "the requests went through the proxy")

			_, err = open(p.url(false)).ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('refused')")
			require.Error(t, err)
			require.Contains(t, strings.ToLower(err.Error()), "proxy authentication required", "the proxy's refusal")

			before = p.requests(t)
			var c int
			require.NoError(t, open(libsql.ProxyNone).QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&c))
			require.Equal(t, 3, c)
			require.Equal(t, before, p.requests(t), "proxy=none went through the proxy")
		})
	}
}
