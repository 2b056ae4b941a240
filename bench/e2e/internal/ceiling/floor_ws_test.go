package ceiling

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/internal/fakesqld"
	"github.com/gohrana/libsql/internal/fixture"
)

// fakePointServer answers hello, open_stream and point SELECTs as sqld
// does (fixture rows), with column a off by one for the request whose id
// is badID on each socket. From
// request id from on, it answers each group of `group` requests in reverse
// order (before, one by one: the warm-up is lockstep).
func fakePointServer(t *testing.T, from int32, group int, badID int32) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := fakesqld.AcceptWS(w, r, wsSubprotocol)
		if err != nil {
			return
		}
		defer c.Drop()
		ctx := r.Context()
		var held [][]byte
		for {
			b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				Type      string `json:"type"`
				RequestID int32  `json:"request_id"`
				Request   struct {
					Type string `json:"type"`
					Stmt struct {
						Args []struct{ Value string } `json:"args"`
					} `json:"stmt"`
				} `json:"request"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("client message %s: %v", b, err)
				return
			}
			var answer []byte
			switch {
			case m.Type == "hello":
				answer = fakesqld.HelloOK
			case m.Request.Type == "open_stream":
				answer = fakesqld.OKFrame(m.RequestID, `{"type":"open_stream"}`)
			case m.Request.Type == "execute" && len(m.Request.Stmt.Args) == 1:
				id, _ := strconv.Atoi(m.Request.Stmt.Args[0].Value)
				row := fixture.MakeRow(id)
				if m.RequestID == badID {
					row.A++
				}
				answer = fakesqld.OKFrame(m.RequestID, fmt.Sprintf(`{"type":"execute","result":{"cols":[%s],"rows":[%s],"affected_row_count":0}}`,
					`{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"},{"name":"f"}`, fixture.AppendRow(nil, row)))
			default:
				answer = fakesqld.ErrorFrame(m.RequestID, "", "unexpected "+m.Request.Type)
			}
			if m.Type == "hello" || m.Request.Type == "open_stream" {
				held = [][]byte{answer}
			} else {
				held = append(held, answer)
			}
			if len(held) < group && m.RequestID >= from {
				continue
			}
			for i := len(held) - 1; i >= 0; i-- {
				if err := c.Write(held[i]); err != nil {
					return
				}
			}
			held = held[:0]
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// TestPointFloorWS runs the point floors against fakePointServer: answers
// out of order are matched by id when pipelined and refused in lockstep,
// and wrong rows are caught.
func TestPointFloorWS(t *testing.T) {
	const n = 40
	// The ids: 1 is open_stream, the 200 warm-up queries follow, then the
	// measured ones.
	const firstMeasured = 202
	for _, c := range []struct {
		name      string
		pipelined bool
		group     int
		badID     int32
		wantErr   string
	}{
		{name: "lockstep", group: 1},
		{name: "lockstep wrong row", group: 1, badID: firstMeasured + 5, wantErr: "a = "},
		{name: "pipelined in order", pipelined: true, group: 1},
		{name: "pipelined out of order", pipelined: true, group: 4},
		{name: "pipelined wrong row", pipelined: true, group: 4, badID: firstMeasured + 9, wantErr: "a = "},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := fakePointServer(t, firstMeasured, c.group, c.badID)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := pointFloorWS(ctx, base, workload.Options{N: n, Seed: 1}, c.pipelined)
			if checkRun(t, err, c.wantErr) && (r.N != n || r.Rate <= 0 || !c.pipelined && r.P50Micros <= 0) {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

// TestConcurrentFloorWS runs the (d) floors, without and with database/sql,
// against fakePointServer: every goroutine's rows are checked, and a wrong
// row fails the run.
func TestConcurrentFloorWS(t *testing.T) {
	for _, c := range []struct {
		name    string
		run     func(context.Context, string, workload.Options) (workload.Result, error)
		badID   int32
		wantErr string
	}{
		{name: "raw", run: ConcurrentFloorWS},
		{name: "raw wrong row", run: ConcurrentFloorWS, badID: 30, wantErr: "a = "},
		{name: "database/sql", run: ConcurrentFloorWSSQL},
		{name: "database/sql wrong row", run: ConcurrentFloorWSSQL, badID: 30, wantErr: "a = "},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := fakePointServer(t, 1<<30, 1, c.badID)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r, err := c.run(ctx, base, workload.Options{Conc: 3, Duration: 400 * time.Millisecond, Seed: 1})
			if checkRun(t, err, c.wantErr) && (r.N <= 0 || r.Rate <= 0 || r.P50Micros <= 0) {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

// checkRun fails the test unless err is what the case wants (an error
// containing wantErr, or none if wantErr is empty); it reports whether the
// run succeeded, so that its result is to be checked.
func checkRun(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	switch {
	case wantErr != "":
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one with %q", err, wantErr)
		}
		return false
	case err != nil:
		t.Fatal(err)
	}
	return true
}
