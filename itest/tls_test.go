package itest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
)

// tlsCA is a certificate authority made up for a test.
type tlsCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	pool *x509.CertPool // holds just this CA
}

var tlsSerial atomic.Int64

func tlsNewCA(t testing.TB, name string) *tlsCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(tlsSerial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tlsCA{cert: cert, key: key, pool: pool}
}

// leaf issues a server certificate for the host names and IP addresses.
func (ca *tlsCA) leaf(t testing.TB, dnsNames []string, ips ...net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(tlsSerial.Add(1)),
		Subject:      pkix.Name{CommonName: "libsql itest server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}
}

// tlsCounter is a plain HTTP reverse proxy to sqld that counts the requests
// it serves: the "plain HTTP backend" behind a TLS front.
type tlsCounter struct {
	url      string // http://127.0.0.1:port
	addr     string // 127.0.0.1:port
	requests atomic.Int64
}

func tlsStartCounter(t testing.TB, target string) *tlsCounter {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	c := &tlsCounter{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		rp.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	c.url, c.addr = srv.URL, srv.Listener.Addr().String()
	return c
}

// tlsFront is a TLS-terminating reverse proxy on 127.0.0.1 whose
// certificate can be swapped. It counts the connections whose first byte is
// not a TLS handshake record (someone spoke plain HTTP to it) and the
// requests that got through the handshake.
type tlsFront struct {
	addr     string
	cert     atomic.Pointer[tls.Certificate]
	plain    atomic.Int64
	requests atomic.Int64
}

func tlsStartFront(t testing.TB, backend string, cert tls.Certificate) *tlsFront {
	t.Helper()
	u, err := url.Parse(backend)
	require.NoError(t, err)
	f := &tlsFront{}
	f.cert.Store(&cert)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.addr = raw.Addr().String()
	cfg := &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return f.cert.Load(), nil },
		NextProtos:     []string{"h2", "http/1.1"},
	}
	ln := tls.NewListener(&tlsSniffListener{Listener: raw, plain: &f.plain}, cfg)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.requests.Add(1)
			rp.ServeHTTP(w, r)
		}),
		// Handshake failures are expected; keep them out of the log.
		ErrorLog:          log.New(io.Discard, "", 0),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// One request per connection: every request makes a new handshake
	// with the current certificate.
	srv.SetKeepAlivesEnabled(false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
		<-done
	})
	return f
}

// tlsSniffListener counts accepted connections whose first byte is not 0x16
// (a TLS handshake record).
type tlsSniffListener struct {
	net.Listener
	plain *atomic.Int64
}

func (l *tlsSniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tlsSniffConn{Conn: c, plain: l.plain}, nil
}

type tlsSniffConn struct {
	net.Conn
	plain *atomic.Int64
	once  sync.Once
}

func (c *tlsSniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.once.Do(func() {
			if p[0] != 0x16 {
				c.plain.Add(1)
			}
		})
	}
	return n, err
}

// tlsOpen opens a *sql.DB from the DSN with tlsCfg as Config.TLSConfig.
func tlsOpen(t testing.TB, dsn string, tlsCfg *tls.Config) *sql.DB {
	t.Helper()
	cfg, err := libsql.ParseDSN(dsn)
	require.NoError(t, err)
	cfg.TLSConfig = tlsCfg
	cfg.Timeout = 20 * time.Second
	return openConnector(t, cfg)
}

// tlsRequireFailure checks that err is a TLS failure: a *libsql.Error with
// no HTTP status whose chain holds the TLS or X.509 error (checked by
// match) and whose text says what went wrong.
func tlsRequireFailure(t testing.TB, err error, match func(error) bool, words ...string) {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error, got %T: %v", err, err)
	require.Zero(t, le.HTTPStatus, "no HTTP exchange happened: %v", err)
	require.True(t, match(err), "want the TLS error in the chain, got %v", err)
	for _, w := range words {
		require.Contains(t, err.Error(), w, "message of %v", err)
	}
	require.False(t, errors.Is(err, libsql.ErrAuth) || errors.Is(err, libsql.ErrNotFound), "%v", err)
	t.Logf("%v", err)
}

func tlsUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	var cv *tls.CertificateVerificationError
	return errors.As(err, &ua) && errors.As(err, &cv)
}

func tlsWrongHost(err error) bool {
	var he x509.HostnameError
	return errors.As(err, &he)
}

// tlsNotTLS matches the failure of a TLS handshake with a plain HTTP
// server: net/http turns the tls.RecordHeaderError into an untyped error.
func tlsNotTLS(err error) bool {
	var re tls.RecordHeaderError
	return errors.As(err, &re) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// TestTLS runs the driver through a TLS-terminating reverse proxy on
// 127.0.0.1 (certificate from a CA made up here, handed to the driver in
// Config.TLSConfig.RootCAs) in front of a plain HTTP proxy to sqld. With the
// right CA everything works over https:// and libsql://; an untrusted CA, a
// certificate for another host name, or no CA at all fail with the TLS error
// and nothing reaches the plain HTTP side (no fallback). libsql:// speaks TLS
// unless tls=0.
func TestTLS(t *testing.T) {
	ca := tlsNewCA(t, "libsql itest CA")
	other := tlsNewCA(t, "some other CA")
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	good := ca.leaf(t, []string{"localhost"}, loopback...)
	untrusted := other.leaf(t, []string{"localhost"}, loopback...)
	wrongHost := ca.leaf(t, []string{"db.example.com"})

	backend := tlsStartCounter(t, serverURL)
	front := tlsStartFront(t, backend.url, good)
	trusted := &tls.Config{RootCAs: ca.pool}

	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()

			t.Run("https_with_ca_works", func(t *testing.T) {
				front.cert.Store(&good)
				before := backend.requests.Load()
				db := tlsOpen(t, "https://"+front.addr+"?codec="+variant.Codec, trusted)
				require.NoError(t, db.PingContext(ctx))
				table := freshTable(t, db, "tls", "(id INTEGER PRIMARY KEY, v TEXT)")
				_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", "over tls")
				require.NoError(t, err)
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", "tx over tls")
				require.NoError(t, err)
				require.NoError(t, tx.Commit())
				var n int64
				require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE v LIKE '%over tls'").Scan(&n))
				require.EqualValues(t, 2, n)
				require.Greater(t, backend.requests.Load(), before, "the requests went through the proxy")
			})

			t.Run("libsql_scheme_is_tls_by_default", func(t *testing.T) {
				front.cert.Store(&good)
				for _, d := range []string{
					"libsql://" + front.addr + "?codec=" + variant.Codec,
					"libsql://" + front.addr + "?tls=1&codec=" + variant.Codec,
					"libsql://localhost:" + portOf(t, front.addr) + "?codec=" + variant.Codec,
				} {
					db := tlsOpen(t, d, trusted)
					var s string
					require.NoError(t, db.QueryRowContext(ctx, "SELECT 'libsql over tls'").Scan(&s), d)
					require.Equal(t, "libsql over tls", s)
				}
			})

			failures := []struct {
				name  string
				cert  *tls.Certificate
				roots *tls.Config
				dsn   string
				match func(error) bool
				words []string
			}{
				{"untrusted_ca", &untrusted, trusted, "https://" + front.addr, tlsUnknownAuthority,
					[]string{"certificate", "unknown authority"}},
				{"no_ca_given_system_roots", &good, nil, "https://" + front.addr, tlsUnknownAuthority,
					[]string{"certificate", "unknown authority"}},
				{"libsql_scheme_untrusted_ca", &untrusted, trusted, "libsql://" + front.addr, tlsUnknownAuthority,
					[]string{"certificate"}},
				{"certificate_for_another_host", &wrongHost, trusted, "https://" + front.addr, tlsWrongHost,
					[]string{"certificate", "127.0.0.1"}},
				{"libsql_scheme_certificate_for_another_host", &wrongHost, trusted,
					"libsql://localhost:" + portOf(t, front.addr), tlsWrongHost, []string{"certificate", "localhost"}},
			}
			for _, f := range failures {
				t.Run(f.name, func(t *testing.T) {
					front.cert.Store(f.cert)
					t.Cleanup(func() { front.cert.Store(&good) })
					beforeBackend, beforeFront := backend.requests.Load(), front.requests.Load()
					db := tlsOpen(t, f.dsn+"?codec="+variant.Codec+"&authToken=tls-secret-token", f.roots)
					checks := map[string]func() error{
						"ping": func() error { return db.PingContext(ctx) },
						"exec": func() error { _, err := db.ExecContext(ctx, "CREATE TABLE tls_never (x)"); return err },
						"query": func() error {
							var n int
							return db.QueryRowContext(ctx, "SELECT 1").Scan(&n)
						},
						"tx": func() error {
							tx, err := db.BeginTx(ctx, nil)
							if err != nil {
								return err
							}
							_, err = tx.ExecContext(ctx, "CREATE TABLE tls_never (x)")
							_ = tx.Rollback()
							return err
						},
					}
					for name, fn := range checks {
						start := time.Now()
						err := fn()
						tlsRequireFailure(t, err, f.match, f.words...)
						require.NotContains(t, err.Error(), "tls-secret-token", name)
						require.Less(t, time.Since(start), 10*time.Second, "%s fails promptly", name)
					}
					require.Equal(t, beforeFront, front.requests.Load(), "no request got past the TLS handshake")
					require.Equal(t, beforeBackend, backend.requests.Load(), "the plain HTTP backend saw no request")
					require.Zero(t, front.plain.Load(), "no plain HTTP was sent to the TLS port (no fallback)")
				})
			}

			t.Run("certificate_replaced_after_first_use", func(t *testing.T) {
				// The version probe has succeeded; the pipeline requests
				// then meet an untrusted certificate on their new connections.
				front.cert.Store(&good)
				t.Cleanup(func() { front.cert.Store(&good) })
				db := tlsOpen(t, "libsql://"+front.addr+"?codec="+variant.Codec, trusted)
				require.NoError(t, db.PingContext(ctx))
				for _, c := range []*tls.Certificate{&untrusted, &wrongHost} {
					front.cert.Store(c)
					beforeBackend, beforeFront := backend.requests.Load(), front.requests.Load()
					_, err := db.ExecContext(ctx, "CREATE TABLE tls_never (x)")
					tlsRequireFailure(t, err, func(err error) bool { return tlsUnknownAuthority(err) || tlsWrongHost(err) }, "certificate")
					tx, err := db.BeginTx(ctx, nil)
					require.NoError(t, err)
					_, err = tx.ExecContext(ctx, "CREATE TABLE tls_never (x)")
					tlsRequireFailure(t, err, func(err error) bool { return tlsUnknownAuthority(err) || tlsWrongHost(err) }, "certificate")
					require.Error(t, tx.Commit())
					require.Equal(t, beforeFront, front.requests.Load(), "no request got past the TLS handshake")
					require.Equal(t, beforeBackend, backend.requests.Load(), "the plain HTTP backend saw no request")
				}
				front.cert.Store(&good)
				require.NoError(t, db.PingContext(ctx), "the pool recovers with a good certificate")
			})

			t.Run("libsql_scheme_against_plain_http_fails", func(t *testing.T) {
				// The default is TLS: a libsql:// URL of a plain HTTP server
				// fails the handshake instead of falling back.
				before := backend.requests.Load()
				db := tlsOpen(t, "libsql://"+backend.addr+"?codec="+variant.Codec, trusted)
				err := db.PingContext(ctx)
				tlsRequireFailure(t, err, tlsNotTLS, "HTTPS")
				_, err = db.ExecContext(ctx, "CREATE TABLE tls_never (x)")
				tlsRequireFailure(t, err, tlsNotTLS, "HTTPS")
				require.Equal(t, before, backend.requests.Load(), "the plain HTTP server handled no request")
			})

			t.Run("libsql_scheme_tls_0_is_plain_http", func(t *testing.T) {
				for _, d := range []string{
					"libsql://" + backend.addr + "?tls=0&codec=" + variant.Codec,
					"libsql://" + backend.addr + "?tls=false&codec=" + variant.Codec,
					strings.Replace(serverURL, "http://", "libsql://", 1) + "?tls=0&codec=" + variant.Codec,
				} {
					before := backend.requests.Load()
					db := tlsOpen(t, d, nil)
					var s string
					require.NoError(t, db.QueryRowContext(ctx, "SELECT 'plain'").Scan(&s), d)
					require.Equal(t, "plain", s)
					if strings.Contains(d, backend.addr) {
						require.Greater(t, backend.requests.Load(), before, d)
					}
				}
			})
		})
	}
	require.Zero(t, front.plain.Load(), "no plain HTTP was ever sent to the TLS port")
}

// portOf returns the port of a host:port address.
func portOf(t testing.TB, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return port
}
