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
func BenchmarkExecute(b *testing.B) {
	f := newFake(b)
	c := newFakeClient(b, f, nil)
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
