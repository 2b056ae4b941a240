package itest

// BenchmarkBatchVsTx: ten INSERTs through libsql.Batch against the same ten
// in a BeginTx transaction, over both transports (docs/dev/PERF.md "Batch"):
//
//	cd itest && LIBSQL_ITEST_IMAGE=... go test -run '^$' -bench BatchVsTx -count 5 .
//
// requests/op counts the HTTP requests (over WebSocket the same requests go
// as messages on a socket).

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/internal/testmatrix"
)

func BenchmarkBatchVsTx(b *testing.B) {
	const n = 10
	for _, variant := range []testmatrix.Variant{testmatrix.New(testmatrix.HTTP, "direct"), testmatrix.New(testmatrix.WebSocket, "direct")} {
		db, err := sql.Open("libsql", dsn(variant))
		require.NoError(b, err)
		table := freshTable(b, db, "batch_bench", "(id INTEGER PRIMARY KEY, v INTEGER)")
		ins := "INSERT INTO " + table + " (v) VALUES (?)"
		stmts := make([]libsql.Statement, n)
		for i := range stmts {
			stmts[i] = libsql.Statement{SQL: ins, Args: []any{i}}
		}
		ctx := context.Background()
		batch := func(db *sql.DB) error {
			c, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = libsql.Batch(ctx, c, stmts)
			return err
		}
		tx := func(db *sql.DB) error {
			t, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			for i := range n {
				if _, err := t.ExecContext(ctx, ins, i); err != nil {
					_ = t.Rollback()
					return err
				}
			}
			return t.Commit()
		}
		for _, w := range []struct {
			name string
			run  func(*sql.DB) error
		}{{"batch", batch}, {"tx", tx}} {
			b.Run(fmt.Sprintf("%s/%s", variant.Name, w.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := w.run(db); err != nil {
						b.Fatal(err)
					}
				}
				if variant.Transport == testmatrix.HTTP {
					b.ReportMetric(requestsPerRun(b, variant, w.run), "requests/op")
				}
			})
		}
		_ = db.Close()
	}
}

// requestsPerRun counts the HTTP requests of one run of fn on a database
// of its own (countingDB).
func requestsPerRun(b *testing.B, variant testmatrix.Variant, fn func(*sql.DB) error) float64 {
	db, ct := countingDB(b, serverURL, variant)
	before := ct.posts.Load()
	require.NoError(b, fn(db))
	return float64(ct.posts.Load() - before)
}
