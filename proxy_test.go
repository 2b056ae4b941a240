package libsql_test

import (
	"database/sql"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
	"github.com/gohrana/libsql/internal/proxytest"
)

// The environment's proxy applies by default, as net/http reads it
// (HTTP_PROXY for http and ws, NO_PROXY), over both transports, to a
// server only the proxy can reach; NO_PROXY and proxy=none go direct,
// where the name does not resolve. net/http reads the environment once
// per process, so each case runs in a process of its own: this test
// binary again, with proxyChildEnv set.
func TestProxyFromEnvironment(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		proxyChild(t)
		return
	}
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		srv := newFake(t, tp, auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))))
		u, err := url.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		real := u.Host
		_, port, _ := net.SplitHostPort(real)
		host := "sqld.proxied.test:" + port
		p := proxytest.New(t, map[string]string{host: real}, "", "")
		target := "http://" + host + "?codec=direct&keepStreams=0"
		if tp == overWS {
			target = "ws://" + host + "?codec=direct"
		}
		for _, tt := range []struct {
			name    string
			env     []string
			dsn     string
			through bool
		}{
			{"HTTP_PROXY", []string{"HTTP_PROXY=" + p.URL.String()}, target, true},
			{"NO_PROXY", []string{"HTTP_PROXY=" + p.URL.String(), "NO_PROXY=.proxied.test"}, target, false},
			{"proxy=none", []string{"HTTP_PROXY=" + p.URL.String()}, target + "&proxy=" + libsql.ProxyNone, false},
		} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironment$", "-test.count=1")
			cmd.Env = append(os.Environ(), append(tt.env, proxyChildEnv+"="+tt.dsn, "http_proxy=", "https_proxy=", "HTTPS_PROXY=", "no_proxy=")...)
			if !contains(tt.env, "NO_PROXY=") {
				cmd.Env = append(cmd.Env, "NO_PROXY=")
			}
			out, err := cmd.CombinedOutput()
			if tt.through && err != nil {
				t.Fatalf("%s: %v\n%s", tt.name, err, out)
			}
			if !tt.through && (err == nil || !strings.Contains(string(out), "sqld.proxied.test")) {
				t.Fatalf("%s: went through, or failed otherwise than on the name: %v\n%s", tt.name, err, out)
			}
		}
		if p.Connects.Load()+p.Forwards.Load() != 1 {
			t.Fatalf("%d requests through the proxy, want 1", p.Connects.Load()+p.Forwards.Load())
		}
		srv.Verify()
	})
}

const proxyChildEnv = "LIBSQL_TEST_PROXY_CHILD_DSN"

// proxyChild runs one query on the DSN of proxyChildEnv.
func proxyChild(t *testing.T) {
	db, err := sql.Open("libsql", os.Getenv(proxyChildEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
}

func contains(env []string, prefix string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// DSN parameter proxy: none, or a proxy's URL (its password redacted in
// String), anything else refused.
func TestProxyDSN(t *testing.T) {
	for _, tt := range []struct {
		dsn, want, err string
	}{
		{"http://h?proxy=none", libsql.ProxyNone, ""},
		{"http://h?proxy=" + "http%3A%2F%2Fu%3Asecret%40proxy%3A3128", "http://u:secret@proxy:3128", ""},
		{"http://h?proxy=socks5%3A%2F%2Fproxy%3A1080", "", "proxy: want none"},
		{"http://h?proxy=http%3A%2F%2Fproxy%3A3128%2Fpath", "", "proxy: want none"},
	} {
		cfg, err := libsql.ParseDSN(tt.dsn)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want %q", tt.dsn, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.Proxy != tt.want {
			t.Errorf("%s: %+v, %v", tt.dsn, cfg, err)
			continue
		}
		if again, err := libsql.ParseDSN(cfg.FormatDSN()); err != nil || again.Proxy != tt.want {
			t.Errorf("%s: round trip %q, %v", tt.dsn, again.Proxy, err)
		}
		if s := cfg.String(); strings.Contains(s, "secret") {
			t.Errorf("String shows the proxy's password: %s", s)
		}
	}
}
