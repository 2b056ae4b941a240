package itest

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/sqldproc"
)

// secretsCaptureOutput sends the standard logger (and with it log/slog's
// default handler) and os.Stderr to a buffer for the rest of the test (the
// stderr bytes are passed on too), and returns a function that gives what
// was written so far.
func secretsCaptureOutput(t *testing.T) func() string {
	t.Helper()
	var buf sqldproc.LogBuffer // written by the log and the stderr copier at once
	oldLog, oldFlags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	oldStderr := os.Stderr
	os.Stderr = w
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(io.MultiWriter(&buf, oldStderr), r)
	}()
	t.Cleanup(func() {
		os.Stderr = oldStderr
		_ = w.Close()
		<-copied
		_ = r.Close()
		log.SetOutput(oldLog)
		log.SetFlags(oldFlags)
	})
	return buf.String
}

// secretsWatch checks texts for secrets: each whole token, and the first
// and last 12 characters of a plain token or of a JWT's payload and
// signature parts, so that a truncated token counts too (a JWT's header
// part is the same for every EdDSA token and secret to no one).
type secretsWatch struct{ needles []string }

func (s *secretsWatch) add(tokens ...string) {
	for _, tok := range tokens {
		s.needles = append(s.needles, tok)
		parts := []string{tok}
		if p := strings.Split(tok, "."); len(p) == 3 {
			parts = p[1:]
		}
		for _, p := range parts {
			s.needles = append(s.needles, p)
			if len(p) > 12 {
				s.needles = append(s.needles, p[:12], p[len(p)-12:])
			}
		}
	}
}

// check fails the test if text holds a secret.
func (s *secretsWatch) check(t testing.TB, what, text string) {
	t.Helper()
	for _, n := range s.needles {
		if strings.Contains(text, n) {
			t.Errorf("%s shows a secret (%.12s...): %s", what, n, text)
			return
		}
	}
}

// checkErr checks the error's text in every fmt form, and of each error in
// its chain.
func (s *secretsWatch) checkErr(t testing.TB, what string, err error) {
	t.Helper()
	require.Error(t, err, what)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		s.check(t, what+" "+verb, fmt.Sprintf(verb, err))
	}
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		s.check(t, what+" (cause)", fmt.Sprintf("%v %+v %#v", e, e, e))
	}
}

// run calls fn, turning a panic into a checked failure.
func (s *secretsWatch) run(t testing.TB, what string, fn func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			s.check(t, what+" panic", fmt.Sprintf("%v %+v %#v", r, r, r))
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	fn()
}

// secretsOps runs every kind of call on db and returns their errors by
// name. Each must fail, except COMMIT, which succeeds when nothing was ever
// sent (it is listed only when it fails).
func secretsOps(ctx context.Context, db *sql.DB) map[string]error {
	errs := map[string]error{}
	errs["ping"] = db.PingContext(ctx)
	_, errs["exec"] = db.ExecContext(ctx, "CREATE TABLE secrets_never (x)")
	_, errs["exec_args"] = db.ExecContext(ctx, "INSERT INTO secrets_never VALUES (?)", "v")
	rows, err := db.QueryContext(ctx, "SELECT 1")
	if err == nil {
		rows.Close()
	}
	errs["query"] = err
	var n int
	errs["query_row"] = db.QueryRowContext(ctx, "SELECT 1").Scan(&n)
	if st, err := db.PrepareContext(ctx, "SELECT ?"); err != nil {
		errs["prepare"] = err
	} else {
		errs["prepared_query"] = st.QueryRowContext(ctx, 1).Scan(&n)
		st.Close()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		errs["begin"] = err
	} else {
		_, errs["tx_exec"] = tx.ExecContext(ctx, "CREATE TABLE secrets_never (x)")
		if err := tx.Commit(); err != nil {
			errs["tx_commit"] = err
		}
	}
	return errs
}

// TestSecrets checks that auth tokens never appear in an error (in any fmt
// form, with its causes), a panic, fmt of a Config or Connector, or the
// standard log and stderr, on every failing path: rejected tokens (expired,
// forged, read-only writing), unreachable hosts, failed DNS, timeouts, TLS
// failures, and DSN and Config errors that carry the token.
func TestSecrets(t *testing.T) {
	output := secretsCaptureOutput(t)
	pub, priv := authKeyPair(t)
	url := authStartServer(t, pub)
	tok := authMakeTokens(t, priv)
	var w secretsWatch
	w.add(tok.rw, tok.ro, tok.expired, tok.forged)
	const plain = "s3cr3t-plain-token-0123456789abcdef" // a non-JWT secret
	w.add(plain)

	t.Run("fmt_of_config_and_connector", func(t *testing.T) {
		cfg, err := libsql.ParseDSN(url + "?authToken=" + tok.rw + "&timeout=5s")
		require.NoError(t, err)
		require.Equal(t, tok.rw, cfg.AuthToken)
		cfg.TLSConfig = &tls.Config{ServerName: "example"}
		conn, err := libsql.NewConnector(cfg)
		require.NoError(t, err)
		wrapped := struct {
			Cfg  libsql.Config
			PCfg *libsql.Config
			Conn *libsql.Connector
			Any  any
		}{*cfg, cfg, conn, cfg}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
			for name, v := range map[string]any{
				"Config": *cfg, "*Config": cfg, "*Connector": conn, "struct": wrapped,
				"slice": []*libsql.Config{cfg}, "map": map[string]libsql.Config{"k": *cfg},
				"driver.Connector": any(conn),
			} {
				s := fmt.Sprintf(verb, v)
				w.check(t, name+" "+verb, s)
				if strings.Contains(verb, "v") {
					require.NotContains(t, s, "AuthToken: \""+tok.rw, name)
				}
			}
		}
		for _, s := range []string{cfg.String(), cfg.GoString(), conn.String(), conn.GoString(),
			fmt.Sprint(cfg), fmt.Sprintln(cfg, conn)} {
			w.check(t, "String", s)
		}
		require.Contains(t, cfg.String(), "[REDACTED]", "the String says a token is set")
		log.Printf("config %v %+v %#v connector %v %+v %#v", cfg, cfg, cfg, conn, conn, conn)
		// FormatDSN is the one documented way to get the token back.
		require.Contains(t, cfg.FormatDSN(), tok.rw)
	})

	t.Run("dsn_and_config_errors", func(t *testing.T) {
		host := strings.TrimPrefix(url, "http://")
		for _, secret := range []string{tok.rw, plain} {
			dsns := []string{
				"libsql://" + host + "?authToken=" + secret + "&frobnicate=1",
				"libsql://" + host + "?authToken=" + secret + "&tls=maybe",
				"https://" + host + "?authToken=" + secret + "&tls=1",
				"libsql://" + host + "?authToken=" + secret + "&auth_token=" + secret,
				"libsql://" + host + "?authToken=" + secret + "&authToken=" + secret,
				"libsql://" + host + "?authToken=" + secret + "&timeout=soon",
				"libsql://" + host + "?authToken=" + secret + "&timeout=-5s",
				"libsql://" + host + "?authToken=" + secret + "&codec=nope",
				"libsql://" + host + "?authToken=" + secret + "&%zz",
				"libsql://127.0.0.1:notaport?authToken=" + secret,
				"http://[::1?authToken=" + secret,
				"libsql://" + secret + "@" + host,
				"libsql://user:" + secret + "@" + host,
				"libsql://?authToken=" + secret,
				"postgres://" + host + "?authToken=" + secret,
				"wss://" + host + "?authToken=" + secret + "&transport=carrier-pigeon",
				"libsql://" + host + "#authToken=" + secret,
				"libsql://" + host + "?authToken=" + secret + "#frag",
				"\x00libsql://" + host + "?authToken=" + secret,
				secret,
			}
			for i, d := range dsns {
				what := fmt.Sprintf("DSN %d", i)
				w.run(t, what, func() {
					_, err := libsql.ParseDSN(d)
					w.checkErr(t, what+" ParseDSN", err)
					var de *libsql.DSNError
					require.True(t, errors.As(err, &de), "%s: want a *libsql.DSNError, got %T", what, err)
					_, err = sql.Open("libsql", d)
					w.checkErr(t, what+" sql.Open", err)
					_, err = (&libsql.Driver{}).Open(d)
					w.checkErr(t, what+" Driver.Open", err)
				})
			}
			configs := []*libsql.Config{
				{URL: url + "?authToken=" + secret, AuthToken: secret},
				{URL: "https://user:" + secret + "@" + host, AuthToken: secret},
				{URL: url + "#" + secret, AuthToken: secret},
				{URL: "ftp://" + host, AuthToken: secret},
				{URL: url, AuthToken: secret, Codec: "nope"},
				{URL: url, AuthToken: secret, Timeout: -time.Second},
				{URL: secret, AuthToken: secret},
			}
			for i, cfg := range configs {
				what := fmt.Sprintf("Config %d", i)
				w.run(t, what, func() {
					_, err := libsql.NewConnector(cfg)
					w.checkErr(t, what, err)
				})
			}
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			// checkAll runs every call on a DB from dsn (the token in the
			// DSN) and on one from the Config (the token set on it), with
			// the options, and checks every error.
			checkAll := func(t *testing.T, base, token string, adjust func(*libsql.Config), opts ...libsql.ConnectorOption) map[string]error {
				t.Helper()
				var last map[string]error
				for _, how := range []string{"dsn", "config"} {
					d := base + "?codec=" + variant.Codec
					if how == "dsn" {
						d += "&authToken=" + token
					}
					cfg, err := libsql.ParseDSN(d)
					require.NoError(t, err)
					if how == "config" {
						cfg.AuthToken = token
					}
					if adjust != nil {
						adjust(cfg)
					}
					conn, err := libsql.NewConnector(cfg, opts...)
					require.NoError(t, err)
					db := sql.OpenDB(conn)
					w.run(t, how, func() {
						last = secretsOps(ctx, db)
						for op, err := range last {
							w.checkErr(t, how+" "+op, err)
						}
					})
					require.NoError(t, db.Close())
				}
				return last
			}

			t.Run("rejected_tokens", func(t *testing.T) {
				for name, token := range map[string]string{"expired": tok.expired, "forged": tok.forged, "plain": plain} {
					errs := checkAll(t, url, token, nil)
					require.True(t, errors.Is(errs["ping"], libsql.ErrAuth), "%s: %v", name, errs["ping"])
				}
			})

			t.Run("read_only_token_writing", func(t *testing.T) {
				db := authOpen(t, url, variant, tok.ro)
				_, err := db.ExecContext(ctx, "CREATE TABLE secrets_never (x)")
				require.True(t, errors.Is(err, libsql.ErrPermission), "%v", err)
				w.checkErr(t, "403", err)
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "CREATE TABLE secrets_never (x)")
				w.checkErr(t, "403 in a transaction", err)
				w.checkErr(t, "commit after 403", tx.Commit())
			})

			t.Run("connection_refused", func(t *testing.T) {
				errs := checkAll(t, "http://"+closedAddr(t), tok.rw, nil)
				require.Contains(t, errs["ping"].Error(), "refused")
			})

			t.Run("dns_failure", func(t *testing.T) {
				// No DNS traffic leaves the machine: the resolver's dial fails.
				rt := &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Resolver: &net.Resolver{
					PreferGo: true,
					Dial: func(context.Context, string, string) (net.Conn, error) {
						return nil, errors.New("no DNS server in this test")
					},
				}}).DialContext}
				defer rt.CloseIdleConnections()
				errs := checkAll(t, "http://no-such-db.invalid:8080", tok.rw, nil, libsql.WithRoundTripper(rt))
				require.Contains(t, errs["ping"].Error(), "no-such-db.invalid")
			})

			t.Run("timeouts", func(t *testing.T) {
				quit := make(chan struct{})
				silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						return // the version probe: 200
					}
					select {
					case <-r.Context().Done():
					case <-quit:
					}
				}))
				defer silent.Close()
				defer close(quit)
				errs := checkAll(t, silent.URL, tok.rw, func(c *libsql.Config) { c.Timeout = 150 * time.Millisecond })
				require.True(t, errors.Is(errs["ping"], context.DeadlineExceeded), "%v", errs["ping"])
			})

			t.Run("tls_failures", func(t *testing.T) {
				ca, other := tlsNewCA(t, "secrets CA"), tlsNewCA(t, "other CA")
				loopback := net.IPv4(127, 0, 0, 1)
				front := tlsStartFront(t, tlsStartCounter(t, url).url, other.leaf(t, nil, loopback))
				errs := checkAll(t, "https://"+front.addr, tok.rw, func(c *libsql.Config) {
					c.TLSConfig = &tls.Config{RootCAs: ca.pool}
				})
				require.Contains(t, errs["ping"].Error(), "certificate")
				front.cert.Store(ptr(ca.leaf(t, []string{"elsewhere.example"})))
				errs = checkAll(t, "libsql://"+front.addr, tok.rw, func(c *libsql.Config) {
					c.TLSConfig = &tls.Config{RootCAs: ca.pool}
				})
				require.Contains(t, errs["ping"].Error(), "certificate")
			})

			t.Run("valid_token_still_works", func(t *testing.T) {
				db := authOpen(t, url, variant, tok.rw)
				require.NoError(t, db.PingContext(ctx))
			})
		})
	}

	t.Run("log_and_stderr", func(t *testing.T) {
		out := output()
		w.check(t, "the standard log and stderr", out)
		require.Contains(t, out, "config libsql.Config{", "the capture works")
	})
}

// TestSecretsFmtOfSQLDB formats a *sql.DB opened with a token with every
// verb. database/sql keeps the Connector in an unexported field, where fmt
// cannot call its Format method; with a verb other than %v fmt prints the
// Connector's fields by reflection, so the token must not sit in a field
// that is printed that way.
func TestSecretsFmtOfSQLDB(t *testing.T) {
	const token = "s3cr3t-sqldb-token-0123456789abcdef"
	var w secretsWatch
	w.add(token)
	for _, how := range []string{"sql.Open", "sql.OpenDB"} {
		var db *sql.DB
		if how == "sql.Open" {
			var err error
			db, err = sql.Open("libsql", serverURL+"?authToken="+token)
			require.NoError(t, err)
		} else {
			cfg := libsql.NewConfig()
			cfg.URL = serverURL
			cfg.AuthToken = token
			c, err := libsql.NewConnector(cfg)
			require.NoError(t, err)
			db = sql.OpenDB(c)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			w.check(t, how+" "+verb, fmt.Sprintf(verb, db))
			w.check(t, how+" "+verb+" of a struct", fmt.Sprintf(verb, struct{ DB *sql.DB }{db}))
		}
		require.NoError(t, db.Close())
	}
}

// TestSecretsDSNTypos: DSNs where a slip puts the token into a parameter's
// name ("?"+token, "?authToken"+token, "?authToken:"+token, an escaped
// "="). The unknown-parameter error names the parameter, and with it the
// token.
func TestSecretsDSNTypos(t *testing.T) {
	const token = "s3cr3t-typo-token-0123456789abcdef"
	var w secretsWatch
	w.add(token)
	host := strings.TrimPrefix(serverURL, "http://")
	for i, d := range []string{
		"libsql://" + host + "?" + token,
		"libsql://" + host + "?authToken" + token,
		"libsql://" + host + "?authToken:" + token,
		"libsql://" + host + "?authToken%3D" + token,
		"libsql://" + host + "?codec=direct&" + token,
	} {
		_, err := libsql.ParseDSN(d)
		require.Error(t, err, "DSN %d", i)
		var de *libsql.DSNError
		require.True(t, errors.As(err, &de), "DSN %d: %T", i, err)
		w.checkErr(t, fmt.Sprintf("DSN %d error", i), err)
	}
}

// TestSecretsSlogJSON logs a Config and a Connector holding a token through
// log/slog's standard handlers. The text handler formats values with %+v,
// which redacts; the JSON handler uses json.Marshal (unless the value is a
// slog.LogValuer or json.Marshaler), which prints the exported AuthToken.
func TestSecretsSlogJSON(t *testing.T) {
	const token = "s3cr3t-slog-token-0123456789abcdef"
	var w secretsWatch
	w.add(token)
	cfg := libsql.NewConfig()
	cfg.URL = serverURL
	cfg.AuthToken = token
	conn, err := libsql.NewConnector(cfg)
	require.NoError(t, err)
	defer conn.Close()
	for _, h := range []struct {
		name string
		new  func(io.Writer) slog.Handler
	}{
		{"text", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }},
		{"json", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }},
	} {
		var buf bytes.Buffer
		logger := slog.New(h.new(&buf))
		logger.Info("opening the database", "config", cfg, "config_value", *cfg, "connector", conn)
		logger.Info("opening the database", slog.Any("config", cfg), slog.Group("db", "config", *cfg))
		require.Contains(t, buf.String(), "opening the database")
		w.check(t, "slog "+h.name+" handler", buf.String())
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// TestSecretsEchoedByServer: a server or proxy that echoes the request's
// Authorization header in an error body (some debugging proxies and API
// gateways do) must not make the driver show the token: it knows its own
// token and can take it out of the server's message.
func TestSecretsEchoedByServer(t *testing.T) {
	const token = "s3cr3t-echoed-token-0123456789abcdef"
	var w secretsWatch
	w.add(token)
	bodies := []struct {
		name        string
		status      int
		contentType string
		body        func(auth string) string
	}{
		{"json_error_401", 401, "application/json", func(a string) string {
			return `{"error":"Unauthorized: token not accepted: ` + a + `"}`
		}},
		{"hrana_error_400", 400, "application/json", func(a string) string {
			return `{"message":"bad header ` + a + `","code":"AUTH_HEADER_INVALID"}`
		}},
		{"text_plain_400", 400, "text/plain", func(a string) string { return "rejected " + a }},
		{"html_403", 403, "text/html", func(a string) string { return "<html>forbidden for " + a + "</html>" }},
		{"garbage_200", 200, "application/json", func(a string) string { return `{"baton":"` + a + `", "results": [` }},
		{"garbage_200_bare", 200, "application/json", func(a string) string { return strings.TrimPrefix(a, "Bearer ") }},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		for _, b := range bodies {
			if strings.HasSuffix(r.URL.Path, "/"+b.name+"/v3/pipeline") {
				rw.Header().Set("Content-Type", b.contentType)
				rw.WriteHeader(b.status)
				_, _ = io.WriteString(rw, b.body(r.Header.Get("Authorization")))
				return
			}
		}
		http.NotFound(rw, r)
	}))
	defer srv.Close()
	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			for _, b := range bodies {
				t.Run(b.name, func(t *testing.T) {
					db, err := sql.Open("libsql", srv.URL+"/"+b.name+"?codec="+variant.Codec+"&authToken="+token)
					require.NoError(t, err)
					defer db.Close()
					err = db.PingContext(t.Context())
					require.Error(t, err)
					w.checkErr(t, "error", err)
				})
			}
		})
	}
}
