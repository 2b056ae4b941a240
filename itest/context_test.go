package itest

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// ctxTarget is what *sql.DB and *sql.Conn have in common. Through *sql.DB
// database/sql itself notices a dead context before asking for a
// connection; through *sql.Conn the context reaches the driver.
type ctxTarget interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PingContext(ctx context.Context) error
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// TestContextDead runs every kind of call with an already-cancelled context
// and with a 1ns deadline, through the pool and through a pinned
// connection; each must fail with the context's error, send nothing, and
// leave the pool and the connection usable.
func TestContextDead(t *testing.T) {
	kinds := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline_1ns", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Nanosecond)
		}, context.DeadlineExceeded},
	}
	ops := []struct {
		name string
		run  func(ctx context.Context, c ctxTarget, table string) error
	}{
		{"ping", func(ctx context.Context, c ctxTarget, _ string) error { return c.PingContext(ctx) }},
		{"exec", func(ctx context.Context, c ctxTarget, table string) error {
			_, err := c.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('never')")
			return err
		}},
		{"query", func(ctx context.Context, c ctxTarget, table string) error {
			rows, err := c.QueryContext(ctx, "SELECT v FROM "+table)
			if err == nil {
				rows.Close()
			}
			return err
		}},
		{"query_row", func(ctx context.Context, c ctxTarget, table string) error {
			var n int64
			return c.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		}},
		{"begin", func(ctx context.Context, c ctxTarget, _ string) error {
			tx, err := c.BeginTx(ctx, nil)
			if err == nil {
				_ = tx.Rollback()
			}
			return err
		}},
	}
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "ctx_dead", "(id INTEGER PRIMARY KEY, v TEXT)")
		conn, err := db.Conn(t.Context())
		require.NoError(t, err)
		defer conn.Close()
		targets := []struct {
			name string
			c    ctxTarget
		}{{"db", db}, {"conn", conn}}
		for _, tg := range targets {
			for _, k := range kinds {
				for _, op := range ops {
					t.Run(tg.name+"/"+k.name+"/"+op.name, func(t *testing.T) {
						ctx, cancel := k.ctx()
						defer cancel()
						err := op.run(ctx, tg.c, table)
						require.Error(t, err)
						require.True(t, errors.Is(err, k.want), "want %v, got %v (%T)", k.want, err, err)
						require.NoError(t, tg.c.PingContext(t.Context()), "%s still works afterwards", tg.name)
					})
				}
			}
		}
		t.Run("nothing_was_written", func(t *testing.T) {
			require.Zero(t, countRows(t, db, table))
			_, err := conn.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('ok')")
			require.NoError(t, err, "the pinned connection still writes")
			require.EqualValues(t, 1, countRows(t, db, table))
		})
	})
}

// TestContextTxCancel cancels the context of a transaction after a write:
// database/sql rolls it back and nothing is applied.
func TestContextTxCancel(t *testing.T) {
	forEachVariant(t, func(t *testing.T, db *sql.DB, _ testmatrix.Variant) {
		table := freshTable(t, db, "ctx_tx", "(id INTEGER PRIMARY KEY, v TEXT)")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('cancelled')")
		require.NoError(t, err)
		cancel()
		err = tx.Commit()
		require.Error(t, err, "commit after the transaction's context was cancelled")
		require.True(t, errors.Is(err, context.Canceled) || errors.Is(err, sql.ErrTxDone),
			"want context.Canceled or sql.ErrTxDone, got %v", err)
		_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('late')")
		require.Error(t, err, "the transaction is over")

		// The pool writes normally (after the rollback released the lock).
		mustExec(t, db, "INSERT INTO "+table+" (v) VALUES ('after')")
		var v string
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT group_concat(v) FROM "+table).Scan(&v))
		require.Equal(t, "after", v, "the cancelled transaction was rolled back")
	})
}

// blockingRT holds POST requests while block is set, until their context
// ends, so that a test can cancel a request that is in flight.
type blockingRT struct {
	base    http.RoundTripper
	block   atomic.Bool
	entered chan struct{}
}

func (b *blockingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && b.block.Load() {
		b.entered <- struct{}{}
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return b.base.RoundTrip(req)
}

// TestContextCancelInFlight cancels requests while they are in flight.
func TestContextCancelInFlight(t *testing.T) {
	for _, variant := range httpVariants {
		t.Run(variant.Name, func(t *testing.T) {
			base := http.DefaultTransport.(*http.Transport).Clone()
			base.Proxy = nil
			rt := &blockingRT{base: base, entered: make(chan struct{}, 1)}
			cfg := libsql.NewConfig()
			cfg.URL = serverURL
			cfg.Codec = variant.Codec
			t.Cleanup(base.CloseIdleConnections)
			db := openConnector(t, cfg, libsql.WithRoundTripper(rt))
			table := freshTable(t, db, "ctx_flight", "(id INTEGER PRIMARY KEY, v TEXT)")

			// cancelWhenEntered cancels once the next POST is held.
			cancelWhenEntered := func(cancel context.CancelFunc) {
				rt.block.Store(true)
				go func() {
					<-rt.entered
					cancel()
				}()
			}

			t.Run("autocommit", func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				cancelWhenEntered(cancel)
				_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (v) VALUES ('x')")
				rt.block.Store(false)
				require.Error(t, err)
				require.True(t, errors.Is(err, context.Canceled), "want context.Canceled, got %v", err)
				require.NoError(t, db.PingContext(t.Context()), "pool works afterwards")
				require.Zero(t, countRows(t, db, table))
			})
			t.Run("in_read_transaction", func(t *testing.T) {
				// Only reads before the cancel: the stream left behind on
				// the server holds no write lock.
				tx, err := db.BeginTx(t.Context(), nil)
				require.NoError(t, err)
				require.Zero(t, countRows(t, tx, table))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				cancelWhenEntered(cancel)
				var n int64
				err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
				rt.block.Store(false)
				require.Error(t, err)
				require.True(t, errors.Is(err, context.Canceled), "want context.Canceled, got %v", err)
				require.True(t, errors.Is(err, libsql.ErrTxLost), "an interrupted request ends the transaction: %v", err)
				_, err = tx.ExecContext(t.Context(), "INSERT INTO "+table+" (v) VALUES ('x')")
				require.ErrorIs(t, err, libsql.ErrTxLost, "later statements report the lost transaction")
				require.NoError(t, tx.Rollback(), "rolling back a lost transaction succeeds")
				require.NoError(t, db.PingContext(t.Context()), "pool works afterwards")
				require.Zero(t, countRows(t, db, table))
			})
		})
	}
}

// TestContextDSNTimeout checks the DSN timeout parameter.
func TestContextDSNTimeout(t *testing.T) {
	for _, variant := range variants {
		t.Run(variant.Name, func(t *testing.T) {
			t.Run("expires", func(t *testing.T) {
				db, err := sql.Open("libsql", dsn(variant, "timeout=1ns"))
				require.NoError(t, err)
				defer db.Close()
				err = db.PingContext(t.Context())
				require.Error(t, err)
				require.True(t, errors.Is(err, context.DeadlineExceeded), "want DeadlineExceeded, got %v", err)
			})
			t.Run("generous", func(t *testing.T) {
				db, err := sql.Open("libsql", dsn(variant, "timeout=30s"))
				require.NoError(t, err)
				defer db.Close()
				var one int64
				require.NoError(t, db.QueryRowContext(t.Context(), "SELECT 1").Scan(&one))
				require.EqualValues(t, 1, one)
			})
		})
	}
}
