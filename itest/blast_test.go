package itest

// The blast radius of a bad statement. sqld answers some failures of one
// request by closing the whole WebSocket (a result that is not valid
// UTF-8, a write with a read-only token), which ends every server stream
// on that socket. No other connection's transaction may end with it, on
// any variant: over WebSocket each transaction runs on a socket of its
// own, and the connections outside a transaction, which share sockets,
// carry on on new streams.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/testmatrix"
)

// blastTxs is how many transactions are open when the bad statement runs:
// more than the connector's shared sockets, so that over WebSocket they
// would share them with it.
const blastTxs = 8

// requireContained opens blastTxs read transactions on db, half with
// BeginTx and half begun with SQL on a pinned connection, and a few
// connections outside a transaction; runs bad on another connection; then
// checks that every transaction carries on and commits, and that the other
// connections still work. bad's error must name what happened in the
// user's terms, without the WebSocket library's internals: over WebSocket,
// that the server closed the connection with the statement in flight.
func requireContained(t *testing.T, db *sql.DB, variant testmatrix.Variant, table string, bad func(ctx context.Context, c *sql.Conn) error) {
	ctx := t.Context()
	db.SetMaxIdleConns(2 * blastTxs)
	read := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) error {
		var n int64
		return q.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
	}

	type open struct {
		tx   *sql.Tx   // BeginTx
		conn *sql.Conn // BEGIN on a pinned connection
	}
	var txs []open
	for i := range blastTxs {
		if i%2 == 0 {
			tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
			require.NoError(t, err)
			require.NoError(t, read(tx))
			txs = append(txs, open{tx: tx})
			continue
		}
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.ExecContext(ctx, "BEGIN")
		require.NoError(t, err)
		require.NoError(t, read(c))
		txs = append(txs, open{conn: c})
	}
	var idle []*sql.Conn
	for range 4 {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, read(c))
		idle = append(idle, c)
	}

	culprit, err := db.Conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = culprit.Close() })
	err = bad(ctx, culprit)
	require.Error(t, err, "the bad statement succeeded")
	t.Logf("the bad statement: %v", err)
	for _, internal := range []string{"failed to get reader", "frame header", "websocket", "EOF"} {
		require.NotContains(t, err.Error(), internal, "the error shows library internals")
	}
	if variant.Transport == testmatrix.WebSocket {
		require.Contains(t, err.Error(), "the server closed the connection while the request was in flight: it may have run")
	}

	lost := 0
	for i, o := range txs {
		var err error
		if o.tx != nil {
			if err = read(o.tx); err == nil {
				err = o.tx.Commit()
			} else {
				_ = o.tx.Rollback()
			}
		} else if err = read(o.conn); err == nil {
			_, err = o.conn.ExecContext(ctx, "COMMIT")
		}
		if err != nil {
			lost++
			t.Errorf("transaction %d of %d ended with the other connection's bad statement: %v", i+1, blastTxs, err)
		}
	}
	require.Zero(t, lost, "%d of %d transactions lost", lost, blastTxs)
	for i, c := range idle {
		require.NoError(t, read(c), "connection %d outside a transaction", i+1)
	}
	// The culprit's connection serves the next statement.
	require.NoError(t, read(culprit), "the culprit's connection afterwards")
}

func TestBlastRadius(t *testing.T) {
	t.Run("invalid_utf8", func(t *testing.T) {
		forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
			table := freshTable(t, db, "blast", "(v INTEGER)")
			requireContained(t, db, variant, table, func(ctx context.Context, c *sql.Conn) error {
				var s string
				return c.QueryRowContext(ctx, "SELECT CAST(x'c328ff' AS TEXT)").Scan(&s)
			})
		})
	})
	t.Run("invalid_utf8_in_a_transaction", func(t *testing.T) {
		forEachVariant(t, func(t *testing.T, db *sql.DB, variant testmatrix.Variant) {
			table := freshTable(t, db, "blast", "(v INTEGER)")
			requireContained(t, db, variant, table, func(ctx context.Context, c *sql.Conn) error {
				tx, err := c.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback() }()
				var s string
				return tx.QueryRowContext(ctx, "SELECT CAST(x'c328ff' AS TEXT)").Scan(&s)
			})
		})
	})
	t.Run("read_only_token_write", func(t *testing.T) {
		pub, priv := authKeyPair(t)
		url := authStartServer(t, pub)
		rw := authSign(t, priv, authClaims{"a": "rw"})
		ro := authSign(t, priv, authClaims{"a": "ro"})
		for _, variant := range variants {
			t.Run(variant.Name, func(t *testing.T) {
				table := privateTable(t, authOpen(t, url, variant, rw), "blast_"+strings.ReplaceAll(variant.Name, "-", "_"), "(v INTEGER)")
				db := authOpen(t, url, variant, ro)
				requireContained(t, db, variant, table, func(ctx context.Context, c *sql.Conn) error {
					_, err := c.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES (1)", table))
					return err
				})
			})
		}
	})
}
