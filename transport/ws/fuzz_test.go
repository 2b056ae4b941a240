package ws

import (
	"context"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// FuzzServerMessage: whatever the server sends before its answers (a
// message of any bytes: garbage, answers to requests never made or made by
// someone else, a second hello_ok, a hello_error), a Send returns (an
// answer or an error, within a bound) and the client does not panic. The
// requests of the Send below are open_stream (request id 1) and an execute
// (id 2).
func FuzzServerMessage(f *testing.F) {
	for _, seed := range []string{
		`{"type":"hello_ok"}`,
		`{"type":"hello_error","error":{"message":"no","code":"AUTH_JWT_INVALID"}}`,
		`{"type":"response_ok","request_id":1,"response":{"type":"open_stream"}}`,
		`{"type":"response_ok","request_id":2,"response":{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":0}}}`,
		`{"type":"response_ok","request_id":2,"response":{"type":"batch","result":{"step_results":[],"step_errors":[]}}}`,
		`{"type":"response_error","request_id":2,"error":{"message":"x","code":"SQLITE_ERROR"}}`,
		`{"type":"response_ok","request_id":99,"response":{"type":"open_stream"}}`,
		`{"type":"response_ok","request_id":-1,"response":{"type":"execute"}}`,
		`{"type":"request","request_id":1}`,
		`{}`,
		`null`,
		`not json`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		fk := newFake(t)
		fk.setHook(func(fc *fconn, m *cmsg) bool {
			if m.Type == "hello" {
				_ = fc.ws.Write(msg)
			}
			return false
		})
		c := newFakeClient(t, fk, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res := new(transport.Response)
		err := c.NewStream().Send(ctx, []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "x"}}}, true, res)
		if ctx.Err() != nil {
			t.Fatalf("the Send did not return: %v", err)
		}
		if err == nil && len(res.Pipeline.Results) != 1 {
			t.Fatalf("%d results for one request", len(res.Pipeline.Results))
		}
	})
}
