package itest

import (
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
)

// TestRequestHeaders: custom headers and the remote encryption key reach
// the server on every request (through a recording proxy in front of the
// real sqld), and never appear in an error or in the connector's text.
func TestRequestHeaders(t *testing.T) {
	const key = "dGhpcy1pcy1hLXRlc3Qta2V5LW9mLTMyLWJ5dGVz"
	target, err := neturl.Parse(serverURL)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen []http.Header
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if strings.Contains(r.URL.RawQuery, "fail") {
			http.Error(w, "rejected request carrying "+r.Header.Get(libsql.EncryptionKeyHeader), http.StatusBadGateway)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	for _, c := range httpVariants {
		t.Run(c.Name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			cfg := libsql.NewConfig()
			cfg.URL = proxy.URL
			cfg.Codec = c.Codec
			connector, err := libsql.NewConnector(cfg,
				libsql.WithRequestHeaders(http.Header{"X-App-Name": {"itest"}}),
				libsql.WithRemoteEncryptionKey(key))
			require.NoError(t, err)
			db := sql.OpenDB(connector)
			t.Cleanup(func() { _ = db.Close() })
			table := freshTable(t, db, "headers", "(id INTEGER PRIMARY KEY)")
			mustExec(t, db, "INSERT INTO "+table+" (id) VALUES (1)")
			require.EqualValues(t, 1, countRows(t, db, table))
			mu.Lock()
			require.GreaterOrEqual(t, len(seen), 3)
			for i, h := range seen {
				require.Equal(t, key, h.Get(libsql.EncryptionKeyHeader), "request %d", i)
				require.Equal(t, "itest", h.Get("X-App-Name"), "request %d", i)
			}
			mu.Unlock()
			require.NotContains(t, connector.String(), key)
		})
	}
	cfg := libsql.NewConfig()
	cfg.URL = proxy.URL + "/fail"
	connector, err := libsql.NewConnector(cfg, libsql.WithRemoteEncryptionKey(key))
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	defer db.Close()
	err = db.Ping()
	require.Error(t, err)
	require.NotContains(t, err.Error(), key, "the echoed key is redacted")
}
