package libsql

// BenchmarkScan over WebSocket, with the canned WebSocket server it needs
// (the Hrana socket protocol in both subprotocols): a file of its own
// beside bench_test.go because docs/dev/PERF.md names it.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/fixture"
)

// BenchmarkScanWS is BenchmarkScan over the WebSocket transport: db.Query
// and a typed rows.Scan of the standard 20,000-row result, served by a
// canned WebSocket server in the same process, in the Protobuf subprotocol
// (hrana3-protobuf) and in JSON (hrana3, decoded by direct). B/op and
// allocs/op are the point: the decoded values' capacity must be reused from
// one scan to the next even when the garbage collector runs often (run it
// with GOGC=25) and, in the gc sub-benchmarks, when a collection runs
// between every two scans, as in a busy process (see docs/dev/PERF.md,
// "WebSocket at its floor").
func BenchmarkScanWS(b *testing.B) {
	const n = 20000
	srv := cannedWSServer(b, n)
	for _, bc := range []struct {
		name string
		gc   bool
	}{{"protobuf", false}, {"protobuf", true}, {"direct", false}, {"direct", true}} {
		name := bc.name
		if bc.gc {
			name += "/gc"
		}
		b.Run(name, func(b *testing.B) {
			db, err := sql.Open(DriverName, srv+"?codec="+bc.name)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if got := scanAll(b, ctx, db, "typed"); got != n { // dial and warm up
				b.Fatalf("%d rows", got)
			}
			b.ReportAllocs()
			for b.Loop() {
				if bc.gc {
					runtime.GC()
				}
				if got := scanAll(b, ctx, db, "typed"); got != n {
					b.Fatalf("%d rows", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

// cannedWSServer starts a WebSocket server that speaks just enough Hrana
// for a scan: it accepts hrana3-protobuf or hrana3, answers the hello, and
// answers every open_stream, close_stream and batch with an empty
// response_ok and every execute with the standard n-row result, encoded
// once. It returns its ws:// URL.
func cannedWSServer(tb testing.TB, n int) string {
	tb.Helper()
	pbExec, jsonExec := cannedExecute(tb, n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"hrana3-protobuf", "hrana3"}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		pb := ws.Subprotocol() == "hrana3-protobuf"
		ctx := r.Context()
		var out []byte
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var id int32
			var typ codec.SocketRequestType
			if pb {
				id, typ, err = parsePBClientMsg(msg)
			} else {
				id, typ, err = parseJSONClientMsg(msg)
			}
			if err != nil {
				tb.Error(err)
				return
			}
			switch {
			case typ == codec.SocketUnknown: // the hello
				if pb {
					out = append(out[:0], 0x0a, 0) // ServerMsg { hello_ok = 1: {} }
				} else {
					out = append(out[:0], `{"type":"hello_ok"}`...)
				}
			case pb:
				body := []byte(nil) // an empty response message
				if typ == codec.SocketExecute {
					body = pbExec
				}
				out = appendPBResponse(out[:0], id, typ, body)
			default:
				out = append(out[:0], `{"type":"response_ok","request_id":`...)
				out = strconv.AppendInt(out, int64(id), 10)
				out = append(out, `,"response":{"type":"`...)
				out = append(out, typ.String()...)
				out = append(out, '"')
				switch typ {
				case codec.SocketExecute:
					out = append(append(out, `,"result":`...), jsonExec...)
				case codec.SocketBatch:
					out = append(out, `,"result":{"step_results":[],"step_errors":[]}`...)
				}
				out = append(out, "}}"...)
			}
			typ2 := websocket.MessageText
			if pb {
				typ2 = websocket.MessageBinary
			}
			if err := ws.Write(ctx, typ2, out); err != nil {
				return
			}
		}
	}))
	tb.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// cannedExecute returns the standard n-row execute result as the body of
// a Protobuf ExecuteResp and as a JSON StmtResult object.
func cannedExecute(tb testing.TB, n int) (pb, js []byte) {
	var resp codec.PipelineResponse
	if err := direct.Codec.DecodePipelineResponse(fixture.Response(n), &resp); err != nil {
		tb.Fatal(err)
	}
	msg := codectest.ProtobufInput(&codectest.Result{Kind: codectest.KindServerMsg, Server: codec.ServerMsg{
		Type:     codec.ServerResponseOK,
		Response: codec.SocketResponse{Type: codec.SocketExecute, Result: resp.Results[0].Response.Result},
	}})
	// msg is ServerMsg { response_ok = 3: { execute = 4: body } }, with no
	// request_id (0): peel the two length-delimited headers.
	for range 2 {
		_, k := binary.Uvarint(msg)
		_, l := binary.Uvarint(msg[k:])
		msg = msg[k+l:]
	}
	return msg, fixture.AppendResult(nil, n)
}

// appendPBResponse appends ServerMsg { response_ok = 3: ResponseOkMsg
// { request_id = 1; <the member of typ> = body } }.
func appendPBResponse(dst []byte, id int32, typ codec.SocketRequestType, body []byte) []byte {
	member := binary.AppendUvarint(nil, uint64(typ+1)<<3|2)
	member = binary.AppendUvarint(member, uint64(len(body)))
	idField := binary.AppendUvarint([]byte{1 << 3}, uint64(int64(id)))
	inner := len(idField) + len(member) + len(body)
	dst = append(dst, 3<<3|2)
	dst = binary.AppendUvarint(dst, uint64(inner))
	dst = append(append(append(dst, idField...), member...), body...)
	return dst
}

// parsePBClientMsg returns the request id and type of a ClientMsg
// { hello = 1 | request = 2: RequestMsg { int32 request_id = 1; oneof
// request 2..13 } }; SocketUnknown for a hello.
func parsePBClientMsg(msg []byte) (int32, codec.SocketRequestType, error) {
	fields := func(b []byte, f func(num uint64, v uint64, sub []byte)) error {
		for len(b) > 0 {
			tag, k := binary.Uvarint(b)
			if k <= 0 {
				return errors.New("bad tag")
			}
			b = b[k:]
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return errors.New("bad varint")
			}
			b = b[k:]
			switch tag & 7 {
			case 0:
				f(tag>>3, v, nil)
			case 2:
				if v > uint64(len(b)) {
					return errors.New("bad length")
				}
				f(tag>>3, 0, b[:v])
				b = b[v:]
			default:
				return errors.New("unexpected wire type")
			}
		}
		return nil
	}
	var id int32
	typ := codec.SocketUnknown
	var req []byte
	err := fields(msg, func(num, _ uint64, sub []byte) {
		if num == 2 {
			req = sub
		}
	})
	if err == nil && req != nil {
		err = fields(req, func(num, v uint64, _ []byte) {
			if num == 1 {
				id = int32(v)
			} else {
				typ = codec.SocketRequestType(num - 1)
			}
		})
		if err == nil && typ == codec.SocketUnknown {
			err = errors.New("a request without a member")
		}
	}
	return id, typ, err
}

// parseJSONClientMsg is parsePBClientMsg for a JSON client message.
func parseJSONClientMsg(msg []byte) (int32, codec.SocketRequestType, error) {
	var m struct {
		Type      string `json:"type"`
		RequestID int32  `json:"request_id"`
		Request   struct {
			Type string `json:"type"`
		} `json:"request"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return 0, 0, err
	}
	if m.Type == "hello" {
		return 0, codec.SocketUnknown, nil
	}
	for t := codec.SocketOpenStream; t.String() != ""; t++ {
		if t.String() == m.Request.Type {
			return m.RequestID, t, nil
		}
	}
	return 0, 0, errors.New("unknown request " + strconv.Quote(m.Request.Type))
}
