package itest

// libsql.WithAuthTokenProvider against a sqld that checks JWTs, on every
// variant: tokens that change and expire while the connections live on.

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// tokenBox is a token provider whose token a test replaces.
type tokenBox struct {
	mu    sync.Mutex
	token string
	calls int
}

func (b *tokenBox) set(tok string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.token = tok
}

func (b *tokenBox) get(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	return b.token, nil
}

func TestAuthTokenProvider(t *testing.T) {
	pub, priv := authKeyPair(t)
	url := authStartServer(t, pub)
	for _, variant := range variants {
		t.Run(variant.Name, func(t *testing.T) {
			ctx := t.Context()
			setup := authOpen(t, url, variant, authSign(t, priv, authClaims{"a": "rw"}))
			table := privateTable(t, setup, "tokens_"+variant.Name, "(v TEXT)")

			// A read-only token, then a read-write one, inside one
			// transaction on a pinned connection: the write can only pass
			// if the new token reached the server, and the transaction
			// only survives if its stream did (over WebSocket: a new hello
			// on the same socket, not a new socket).
			box := &tokenBox{token: authSign(t, priv, authClaims{"a": "ro"})}
			db := providerDB(t, url, variant, box.get)
			c, err := db.Conn(ctx)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.ExecContext(ctx, "BEGIN")
			require.NoError(t, err)
			var n int64
			require.NoError(t, c.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n))
			box.set(authSign(t, priv, authClaims{"a": "rw"}))
			_, err = c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('with the new token')")
			require.NoError(t, err, "a write after the token changed to read-write")
			_, err = c.ExecContext(ctx, "COMMIT")
			require.NoError(t, err, "the transaction outlived the token change")
			require.EqualValues(t, 1, countRows(t, setup, table))

			// A token that expires during the test is replaced by the
			// provider; statements go on as if nothing happened.
			short := time.Now().Add(2 * time.Second)
			box.set(authSign(t, priv, authClaims{"a": "rw", "exp": short.Unix()}))
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('before the expiry')")
			time.Sleep(time.Until(short) + 1500*time.Millisecond)
			box.set(authSign(t, priv, authClaims{"a": "rw", "exp": time.Now().Add(time.Hour).Unix()}))
			mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('after the expiry')")
			require.EqualValues(t, 3, countRows(t, db, table))
			require.NotZero(t, box.calls)
		})
	}
}

// providerDB opens a *sql.DB on url through the variant whose JWT comes from
// tokens, closed when the test ends.
func providerDB(t testing.TB, url string, variant testmatrix.Variant, tokens func(context.Context) (string, error)) *sql.DB {
	t.Helper()
	cfg, err := libsql.ParseDSN(variant.DSN(url))
	require.NoError(t, err)
	cfg.Timeout = 30 * time.Second
	return openConnector(t, cfg, libsql.WithAuthTokenProvider(tokens))
}
