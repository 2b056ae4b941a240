package session_test

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

// rowsOf answers an execute with n one-column text rows, decoding into the
// Result's capacity as the codecs do.
func rowsOf(n int) func([]codec.StreamRequest, *transport.Response) error {
	return func(reqs []codec.StreamRequest, res *transport.Response) error {
		resp := &res.Pipeline
		resp.Results = resp.Results[:0]
		for _, r := range reqs {
			i := len(resp.Results)
			if i < cap(resp.Results) {
				resp.Results = resp.Results[:i+1]
			} else {
				resp.Results = append(resp.Results, codec.StreamResult{})
			}
			sr := &resp.Results[i]
			sr.OK, sr.Response.Type = true, r.Type
			st := &sr.Response.Result
			st.Cols, st.Values, st.NumRows = []codec.Col{{Name: "x"}}, st.Values[:0], n
			for range n {
				st.Values = append(st.Values, codec.TextValue([]byte("body")))
			}
		}
		return nil
	}
}

// TestResultSpare: the Conn keeps its last Result, released, for its next
// operation, with the decoded values zeroed (they pinned the body), even
// across garbage collections; a Result whose values exceed MaxSpareValues
// is left to the pool, which a collection empties.
func TestResultSpare(t *testing.T) {
	valueSize := int(reflect.TypeFor[codec.Value]().Size())
	for _, tc := range []struct {
		name string
		rows int
		kept bool
	}{
		{"small", 10, true},
		{"20k rows x 6", 120000, true},
		{"over MaxSpareValues", session.MaxSpareValues/valueSize + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newConn(t, rowsOf(tc.rows), rowsOf(1))
			st := &codec.Stmt{SQL: "SELECT x", WantRows: true}
			res, err := c.Execute(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			vals := res.Stmt().Values
			res.ReleaseShared()
			runtime.GC()
			runtime.GC() // a sync.Pool keeps nothing across two
			if tc.kept {
				for i, v := range vals {
					if v.Bytes != nil {
						t.Fatalf("value %d still points into the body after Release", i)
					}
				}
			}
			res2, err := c.Execute(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			defer res2.Release()
			if got := res2.Stmt().Values; len(got) != 1 || string(got[0].Bytes) != "body" {
				t.Fatalf("second result %v", got)
			}
			reused := &res2.Stmt().Values[0] == &vals[0]
			if reused != tc.kept || (res2 == res) != tc.kept {
				t.Fatalf("%d values: the next operation reused them: %v (same Result: %v), want %v", tc.rows, reused, res2 == res, tc.kept)
			}
		})
	}
}
