package libsql_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
	"github.com/gohrana/libsql/internal/proxytest"
)

// Connectors: options, redaction, and what they send (nothing until used).
// HTTP only: compression and its headers are HTTP's.
func TestFakeConnConnector(t *testing.T) {
	t.Parallel()
	if _, err := libsql.NewConnector(nil); err == nil {
		t.Error("NewConnector(nil) succeeded")
	}
	bad := fakeConfig()
	bad.URL = "ftp://x"
	if _, err := libsql.NewConnector(bad); err == nil {
		t.Error("an ftp URL was accepted")
	}
	srv := fs.New(t, auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))).WithHeader("Accept-Encoding", "gzip"),
		auto(fs.SQL("SELECT 2"), fs.Query(fs.Cols("2"), fs.Vals(fs.Int(2)))).WithHeader("Accept-Encoding", "identity"))
	cfg := fakeConfig()
	cfg.URL = srv.URL
	cfg.AuthToken = "s3cret-token-value"
	cfg.Compression = "gzip"
	cn := mustConnector(t, cfg)
	for _, s := range []string{cn.String(), cn.GoString(), fmt.Sprintf("%v %+v %#v %s", cn, cn, cn, cn)} {
		if strings.Contains(s, cfg.AuthToken) || !strings.Contains(s, "[REDACTED]") {
			t.Errorf("connector shown as %s", s)
		}
	}
	if _, ok := cn.Driver().(*libsql.Driver); !ok {
		t.Error("Driver is not the libsql driver")
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := cn.Connect(ctx); err == nil {
		t.Error("Connect with an ended context succeeded")
	}
	db := sql.OpenDB(cn)
	wantOne(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// compression=none, through the DSN; auto on loopback is none too.
	db2 := openDB(t, srv, "compression=none")
	var n int
	if err := db2.QueryRow("SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}

}

// codec=auto asks for Protobuf first; a server that answers
// /v3-protobuf/pipeline 404 gets the same request in JSON, and every later
// one in JSON at once.
func TestFakeConnAutoCodecFallsBack(t *testing.T) {
	t.Parallel()
	srv := fs.New(t, fs.Expect(http.MethodPost, "/v3-protobuf/pipeline").Reply(fs.NotFound()),
		auto(fs.SQL("SELECT 1"), fs.Query(fs.Cols("1"), fs.Vals(fs.Int(1)))),
		auto(fs.SQL("SELECT 2"), fs.Query(fs.Cols("2"), fs.Vals(fs.Int(2)))))
	db, err := sql.Open("libsql", srv.URL+"?codec=auto&keepStreams=0")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"SELECT 1", "SELECT 2"} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if srv.Count() != 3 {
		t.Fatalf("%d requests, want 3", srv.Count())
	}
}

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
		p := proxytest.New(t, u.Host, "", "")
		target := "http://" + p.Host + "?codec=direct&keepStreams=0"
		if tp == overWS {
			target = "ws://" + p.Host + "?codec=direct"
		}
		for _, tt := range []struct {
			name    string
			env     []string
			dsn     string
			through bool
		}{
			{"HTTP_PROXY", []string{"HTTP_PROXY=" + p.URL.String()}, target, true},
			{"NO_PROXY", []string{"HTTP_PROXY=" + p.URL.String(), "NO_PROXY=." + proxytest.ProxiedDomain}, target, false},
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
			if !tt.through && (err == nil || !strings.Contains(string(out), proxytest.ProxiedDomain)) {
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
	wantOne(t, db)
}

func contains(env []string, prefix string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
