package ws

import (
	"context"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
)

// BenchmarkExecute: one execute on an open stream against the fake. The
// allocations counted are the fake's (encoding/json and fmt): a memory
// profile shows none in the client's steady state.
// Sub-benchmarks: on a shared socket (a reader goroutine hands each
// answer over) and on a socket of the stream's own (sockets=conn: the
// waiting goroutine reads it, lockstep.go).
func BenchmarkExecute(b *testing.B) {
	b.Run("shared", func(b *testing.B) { benchmarkExecute(b, 0) })
	b.Run("own", func(b *testing.B) { benchmarkExecute(b, -1) })
}

func benchmarkExecute(b *testing.B, sockets int) {
	f := newFake(b)
	c := newFakeClient(b, f, func(o *options) { o.Sockets = sockets })
	conn := session.NewConn(c.NewStream())
	ctx := context.Background()
	st := &codec.Stmt{SQL: "SELECT 1", WantRows: true}
	b.ReportAllocs()
	for b.Loop() {
		res, err := conn.Execute(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		res.Release()
	}
}
