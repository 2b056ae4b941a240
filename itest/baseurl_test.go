package itest

import (
	"database/sql"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBaseURL: a sqld started with --http-self-url answers every pipeline
// with that base_url, and the driver sends a stream's later requests
// there: here a recording proxy in front of the same sqld. The first
// request of each stream goes to the DSN's URL.
func TestBaseURL(t *testing.T) {
	var target atomic.Pointer[httputil.ReverseProxy]
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		target.Load().ServeHTTP(w, r)
	}))
	defer proxy.Close()
	srv := sqlds.Start(t, "--http-self-url", proxy.URL)
	u, err := neturl.Parse(srv.URL())
	require.NoError(t, err)
	target.Store(httputil.NewSingleHostReverseProxy(u))

	for _, c := range httpVariants {
		t.Run(c.Name, func(t *testing.T) {
			db, err := sql.Open("libsql", srv.URL()+"?codec="+c.Codec)
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
			table := freshTable(t, db, "baseurl", "(id INTEGER PRIMARY KEY)")
			before := proxied.Load()
			tx, err := db.BeginTx(t.Context(), nil)
			require.NoError(t, err)
			for i := 1; i <= 3; i++ {
				_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (id) VALUES (?)", i)
				require.NoError(t, err)
			}
			require.NoError(t, tx.Commit())
			// The connection's kept stream already follows base_url (the
			// table was made on it): BEGIN with the first INSERT, the two
			// other INSERTs and COMMIT all went there.
			require.EqualValues(t, 4, proxied.Load()-before, "requests sent to base_url")
			require.EqualValues(t, 3, countRows(t, db, table))
		})
	}
}
