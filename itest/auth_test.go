package itest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// authClaims are the JWT claims sqld reads: "a" is the access level ("ro",
// "rw"; missing means full access), "exp" the expiry in Unix seconds.
type authClaims map[string]any

// authSign returns a compact EdDSA JWT (header {"alg":"EdDSA","typ":"JWT"},
// base64url without padding) of claims, signed with key.
func authSign(t testing.TB, key ed25519.PrivateKey, claims authClaims) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, err := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT"})
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	return signed + "." + enc.EncodeToString(ed25519.Sign(key, []byte(signed)))
}

// authKeyPair returns a fresh Ed25519 key pair.
func authKeyPair(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return pub, priv
}

// authStartServer starts a sqld of its own that accepts JWTs signed by the
// private half of pub (SQLD_AUTH_JWT_KEY holds the raw public key in
// base64url), and returns its base URL.
func authStartServer(t testing.TB, pub ed25519.PublicKey) string {
	t.Helper()
	return startServerEnv(t, map[string]string{
		"SQLD_AUTH_JWT_KEY": base64.RawURLEncoding.EncodeToString(pub),
	})
}

// authTokens is the set of tokens the auth tests use against one server.
type authTokens struct {
	rw, full, fresh, ro, expired, forged, garbage string
}

func authMakeTokens(t testing.TB, priv ed25519.PrivateKey) authTokens {
	t.Helper()
	_, other := authKeyPair(t)
	now := time.Now()
	return authTokens{
		rw:    authSign(t, priv, authClaims{"a": "rw", "iat": now.Unix()}),
		full:  authSign(t, priv, authClaims{"iat": now.Unix()}), // no "a": full access
		fresh: authSign(t, priv, authClaims{"a": "rw", "exp": now.Add(time.Hour).Unix()}),
		ro:    authSign(t, priv, authClaims{"a": "ro", "iat": now.Unix()}),
		// An hour ago: well past the JWT library's default 60 s leeway.
		expired: authSign(t, priv, authClaims{"a": "rw", "exp": now.Add(-time.Hour).Unix()}),
		// Well formed, but signed by a key the server does not know.
		forged:  authSign(t, other, authClaims{"a": "rw", "iat": now.Unix()}),
		garbage: "not-a-jwt-at-all",
	}
}

// authOpen opens a *sql.DB on url through the variant with the token (none if
// empty), set through Config.AuthToken, closed when the test ends.
func authOpen(t testing.TB, url string, variant testmatrix.Variant, token string) *sql.DB {
	t.Helper()
	cfg, err := libsql.ParseDSN(variant.DSN(url))
	require.NoError(t, err)
	cfg.AuthToken = token
	cfg.Timeout = 30 * time.Second
	return openConnector(t, cfg)
}

// relClasses are the errors.Is classes an HTTP-level error may fall in:
// all of them but ErrTxLost, which depends on the caller being in a
// transaction and is checked where it applies.
var relClasses = func() (out []errorClass) {
	for _, c := range errorClasses {
		if c.err != libsql.ErrTxLost {
			out = append(out, c)
		}
	}
	return out
}()

// relRequireHTTPError checks that err is a *libsql.Error for the HTTP
// status with exactly the class want (nil: none of them; ErrTxLost is not
// checked here) and a message containing each of msgs (case-insensitive),
// and returns it.
func relRequireHTTPError(t testing.TB, err error, status int, want error, msgs ...string) *libsql.Error {
	t.Helper()
	require.Error(t, err)
	var le *libsql.Error
	require.True(t, errors.As(err, &le), "want a *libsql.Error, got %T: %v", err, err)
	require.Equal(t, status, le.HTTPStatus, "HTTP status of %v", err)
	for _, c := range relClasses {
		require.Equal(t, c.err == want, errors.Is(err, c.err),
			"errors.Is(err, %s) for %v (code %q, HTTP %d)", c.name, err, le.Code, le.HTTPStatus)
	}
	for _, m := range msgs {
		require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(m), "message of %v", err)
	}
	return le
}

// httpOnly returns status for an HTTP variant and 0 (no HTTP status) for
// a WebSocket one, whose errors come in messages.
func httpOnly(variant testmatrix.Variant, status int) int {
	if variant.WS() {
		return 0
	}
	return status
}

// TestAuth runs the driver against a sqld with JWT authentication (Ed25519
// keys generated here): valid tokens work, a read-only token reads but
// cannot write (ErrPermission, HTTP 403), and expired, forged, malformed and
// missing tokens fail with ErrAuth (HTTP 401) on every kind of call.
func TestAuth(t *testing.T) {
	pub, priv := authKeyPair(t)
	url := authStartServer(t, pub)
	tok := authMakeTokens(t, priv)

	for _, variant := range variants {
		t.Run(variant.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			rw := authOpen(t, url, variant, tok.rw)
			table := freshTable(t, rw, "auth", "(id INTEGER PRIMARY KEY, v TEXT)")
			mustExec(t, rw, "INSERT INTO "+table+" (v) VALUES ('seed')")

			t.Run("valid_tokens_work", func(t *testing.T) {
				for name, token := range map[string]string{"rw": tok.rw, "no_a_claim": tok.full, "exp_in_future": tok.fresh} {
					db := authOpen(t, url, variant, token)
					require.NoError(t, db.PingContext(ctx), name)
					_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES (?)", name)
					require.NoError(t, err, name)
					var v string
					require.NoError(t, db.QueryRowContext(ctx, "SELECT v FROM "+table+" WHERE v = ?", name).Scan(&v), name)
					require.Equal(t, name, v)
					tx, err := db.BeginTx(ctx, nil)
					require.NoError(t, err)
					_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET v = v || '+tx' WHERE v = ?", name)
					require.NoError(t, err, name)
					require.NoError(t, tx.Commit(), name)
				}
				require.EqualValues(t, 4, countRows(t, rw, table))
				require.EqualValues(t, 3, countWhere(t, rw, table, "v LIKE '%+tx'"))
			})

			t.Run("read_only_token", func(t *testing.T) {
				ro := authOpen(t, url, variant, tok.ro)
				before := countRows(t, rw, table)
				require.NoError(t, ro.PingContext(ctx))
				require.Equal(t, before, countRows(t, ro, table), "reads work")
				if variant.WS() {
					// sqld 0.24.32 answers a write with a read-only token over
					// WebSocket by closing the socket, without a reason: the
					// driver can only report the connection lost. Nothing is
					// written, and the pool recovers on a new socket.
					_, err := ro.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('ro')")
					require.Error(t, err)
					t.Logf("insert: %v", err)
					require.Equal(t, before, countRows(t, rw, table), "nothing written")
					require.NoError(t, ro.PingContext(ctx), "the pool works again")
					return
				}

				writes := map[string]string{
					"insert":       "INSERT INTO " + table + " (v) VALUES ('ro')",
					"update":       "UPDATE " + table + " SET v = 'ro'",
					"delete":       "DELETE FROM " + table,
					"create_table": "CREATE TABLE auth_ro_never (x)",
				}
				for name, q := range writes {
					_, err := ro.ExecContext(ctx, q)
					le := relRequireHTTPError(t, err, http.StatusForbidden, libsql.ErrPermission, "permission")
					require.NotErrorIs(t, le, libsql.ErrTxLost, "%s: no transaction to lose", name)
					t.Logf("%s: %v", name, err)
				}
				// Query of a writing statement, too.
				_, err := ro.QueryContext(ctx, "INSERT INTO "+table+" (v) VALUES ('ro') RETURNING id")
				relRequireHTTPError(t, err, http.StatusForbidden, libsql.ErrPermission, "permission")

				// In a transaction: reads work, the write ends it (sqld drops
				// the stream on any HTTP error), COMMIT reports that.
				tx, err := ro.BeginTx(ctx, nil)
				require.NoError(t, err)
				var n int64
				require.NoError(t, tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
				require.Equal(t, before, n)
				_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('ro-tx')")
				le := relRequireHTTPError(t, err, http.StatusForbidden, libsql.ErrPermission, "permission")
				require.ErrorIs(t, le, libsql.ErrTxLost, "the server dropped the transaction: %v", err)
				require.True(t, errors.Is(err, libsql.ErrTxLost))
				err = tx.Commit()
				require.Error(t, err, "COMMIT of a lost transaction must fail")
				require.True(t, errors.Is(err, libsql.ErrPermission) || errors.Is(err, libsql.ErrTxLost), "commit: %v", err)

				// A transaction whose first statement writes (BEGIN rides with it).
				tx, err = ro.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = tx.ExecContext(ctx, "DELETE FROM "+table)
				relRequireHTTPError(t, err, http.StatusForbidden, libsql.ErrPermission, "permission")
				require.NoError(t, tx.Rollback())

				require.Equal(t, before, countRows(t, rw, table), "nothing was written")
				require.Equal(t, before, countRows(t, ro, table), "the read-only pool still works")
			})

			bad := []struct {
				name, token, reason string
			}{
				{"expired_token", tok.expired, "expired"},
				{"forged_token", tok.forged, "invalid"},
				{"malformed_token", tok.garbage, "invalid"},
				{"missing_token", "", "authorization header"},
			}
			for _, b := range bad {
				t.Run(b.name, func(t *testing.T) {
					db := authOpen(t, url, variant, b.token)
					before := countRows(t, rw, table)
					check := func(what string, err error) {
						t.Helper()
						le := relRequireHTTPError(t, err, httpOnly(variant, http.StatusUnauthorized), libsql.ErrAuth, b.reason)
						require.NotEmpty(t, le.Message, what)
						if b.token != "" {
							require.NotContains(t, err.Error(), b.token, "%s: the error shows the token", what)
						}
					}
					err := db.PingContext(ctx)
					check("ping", err)
					t.Logf("%v", err)
					_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('bad')")
					check("exec", err)
					_, err = db.QueryContext(ctx, "SELECT v FROM "+table)
					check("query", err)
					var n int
					check("query_row", db.QueryRowContext(ctx, "SELECT 1").Scan(&n))
					tx, err := db.BeginTx(ctx, nil)
					require.NoError(t, err, "BeginTx sends nothing")
					_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('bad-tx')")
					check("tx_exec", err)
					if variant.WS() {
						// The hello was refused before anything ran (Safe): the
						// transaction is still to begin, and committing it
						// commits nothing.
						_ = tx.Commit()
					} else {
						require.Error(t, tx.Commit(), "commit after a refused BEGIN")
					}
					require.Equal(t, before, countRows(t, rw, table), "nothing was written")
				})
			}
		})
	}
}
