// Command capture-ws records the server messages of real Hrana-over-WebSocket
// sessions with sqld, in the "hrana3" (JSON text frames) and
// "hrana3-protobuf" (binary frames) subprotocols, as the fixtures of
// codec/codectest (testdata/sqld/ws_*; the README there says what each
// holds).
//
// It starts sqld processes of its own on 127.0.0.1 (a fresh database for
// each session, so that both encodings see the same replication indexes),
// runs the same lockstep session in each subprotocol (one request, then its
// response), then a hello with a bad JWT against a sqld that requires one,
// and kills every sqld it started. Requests are encoded by the codecs under
// test (codec/direct and codec/protobuf), so a capture also checks that
// sqld accepts what they send; every response is decoded by them too, and
// the run fails if one is not the answer it waited for.
//
// Usage, from this directory:
//
//	go run . -sqld ../../../.cache/sqld/sqld -out ../../../codec/codectest/testdata/sqld
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/sqldproc"
)

func main() {
	bin := flag.String("sqld", "sqld", "the sqld binary")
	out := flag.String("out", ".", "the directory the fixtures are written to")
	flag.Parse()
	if err := run(*bin, *out); err != nil {
		log.Fatal(err)
	}
}

// subprotocol is one encoding of the messages.
type subprotocol struct {
	name  string            // the WebSocket subprotocol
	codec codec.SocketCodec // encodes the requests, checks the responses
	file  string            // the session's fixture file
	// frame turns the frames of a session into the file's content.
	frames func([][]byte) []byte
}

var subprotocols = []subprotocol{
	{"hrana3", direct.Codec.(codec.SocketCodec), "ws_session.ndjson", ndjson},
	{"hrana3-protobuf", protobuf.Codec.(codec.SocketCodec), "ws_session.pb", delimited},
}

// ndjson writes one text frame per line (sqld's JSON has no raw newlines).
func ndjson(frames [][]byte) []byte {
	var b bytes.Buffer
	for _, f := range frames {
		b.Write(f)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// delimited writes each binary frame after its length as a varint, as
// protobuf.SplitDelimited reads them.
func delimited(frames [][]byte) []byte {
	var b []byte
	for _, f := range frames {
		n := uint64(len(f))
		for n >= 0x80 {
			b = append(b, byte(n)|0x80)
			n >>= 7
		}
		b = append(b, byte(n))
		b = append(b, f...)
	}
	return b
}

func run(bin, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, sp := range subprotocols {
		frames, err := withSQLD(ctx, bin, nil, func(addr string) ([][]byte, error) { return session(ctx, addr, sp) })
		if err != nil {
			return fmt.Errorf("%s session: %w", sp.name, err)
		}
		if err := os.WriteFile(filepath.Join(out, sp.file), sp.frames(frames), 0o644); err != nil {
			return err
		}
		log.Printf("%s: %d messages", sp.file, len(frames))
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	env := []string{"SQLD_AUTH_JWT_KEY=" + base64.RawURLEncoding.EncodeToString(pub)}
	for _, sp := range subprotocols {
		frames, err := withSQLD(ctx, bin, env, func(addr string) ([][]byte, error) { return badHello(ctx, addr, sp) })
		if err != nil {
			return fmt.Errorf("%s hello_error: %w", sp.name, err)
		}
		name := "ws_hello_error.json"
		if sp.codec.Format() == codec.FormatProtobuf {
			name = "ws_hello_error.pb"
		}
		if err := os.WriteFile(filepath.Join(out, name), frames[0], 0o644); err != nil {
			return err
		}
		log.Printf("%s: %d bytes", name, len(frames[0]))
	}
	return nil
}

// withSQLD starts a sqld of its own (internal/sqldproc: a port of
// 127.0.0.1, a fresh database, /health awaited), calls f with its address
// and kills it.
func withSQLD(ctx context.Context, bin string, env []string, f func(addr string) ([][]byte, error)) ([][]byte, error) {
	srv, err := sqldproc.Start(ctx, sqldproc.Config{Bin: bin, Env: env})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	frames, err := f(srv.Addr())
	if err != nil {
		return nil, fmt.Errorf("%w\nsqld's log:\n%s", err, srv.Log())
	}
	return frames, nil
}

// conn is one WebSocket connection in a subprotocol, used in lockstep.
type conn struct {
	ws     *websocket.Conn
	sp     subprotocol
	frames [][]byte
	buf    []byte
}

func dial(ctx context.Context, addr string, sp subprotocol) (*conn, error) {
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/", &websocket.DialOptions{Subprotocols: []string{sp.name}})
	if err != nil {
		return nil, err
	}
	if got := ws.Subprotocol(); got != sp.name {
		ws.CloseNow()
		return nil, fmt.Errorf("the server chose subprotocol %q", got)
	}
	ws.SetReadLimit(16 << 20)
	return &conn{ws: ws, sp: sp}, nil
}

// exchange sends the message in c.buf and records the one frame that
// answers it, decoded into m.
func (c *conn) exchange(ctx context.Context, m *codec.ServerMsg) error {
	typ := websocket.MessageText
	if c.sp.codec.Format() == codec.FormatProtobuf {
		typ = websocket.MessageBinary
	}
	if err := c.ws.Write(ctx, typ, c.buf); err != nil {
		return err
	}
	got, data, err := c.ws.Read(ctx)
	if err != nil {
		return err
	}
	if got != typ {
		return fmt.Errorf("a %v frame in answer", got)
	}
	c.frames = append(c.frames, data)
	return c.sp.codec.DecodeServerMsg(data, m)
}

func badHello(ctx context.Context, addr string, sp subprotocol) ([][]byte, error) {
	c, err := dial(ctx, addr, sp)
	if err != nil {
		return nil, err
	}
	defer c.ws.CloseNow()
	if c.buf, err = sp.codec.AppendHello(nil, "not-a-jwt"); err != nil {
		return nil, err
	}
	var m codec.ServerMsg
	if err := c.exchange(ctx, &m); err != nil {
		return nil, err
	}
	if m.Type != codec.ServerHelloError {
		return nil, fmt.Errorf("%s in answer to a bad JWT", m.Type)
	}
	return c.frames, nil
}

// The statements of the session. values returns a row of every value type
// and edge (the extremes of int64, -0.0, the largest and smallest
// doubles, ±Inf, empty and non-BMP text, text that JSON escapes, empty and
// odd-length blobs, NULL), then a row of NULLs; its arguments come back in
// its last columns.
const (
	values = `select 1 as i, -9223372036854775808 as imin, 9223372036854775807 as imax, 1.5 as f, -0.0 as negzero, ` +
		`1.7976931348623157e308 as big, 5e-324 as tiny, 9e999 as inf, -9e999 as neginf, '' as et, 'héllo 😀' as t, ` +
		`'q"\' || char(10) || char(9) || char(0) || char(127) as esc, x'' as eb, x'00ff10' as b, null as n, ` +
		`?1 as ai, ?2 as af, ?3 as at, ?4 as ab ` +
		`union all select null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, ` +
		`null, null, null, null`
	schema = `create table ws_capture(id integer primary key, v text unique, f real, b blob); ` +
		`insert into ws_capture(v, f, b) values ('a', 0.5, x'01')`
)

func session(ctx context.Context, addr string, sp subprotocol) ([][]byte, error) {
	c, err := dial(ctx, addr, sp)
	if err != nil {
		return nil, err
	}
	defer c.ws.CloseNow()
	var m codec.ServerMsg
	if c.buf, err = sp.codec.AppendHello(nil, ""); err != nil {
		return nil, err
	}
	if err := c.exchange(ctx, &m); err != nil {
		return nil, err
	}
	if m.Type != codec.ServerHelloOK {
		return nil, fmt.Errorf("%s in answer to hello", m.Type)
	}
	stmt := func(sql string, args ...codec.Value) codec.Stmt {
		return codec.Stmt{SQL: sql, Args: args, WantRows: true}
	}
	ok := func(n int32) *codec.BatchCond { return &codec.BatchCond{Type: codec.CondOK, Step: uint32(n)} }
	var index uint64 // a replication index the server sent, for a later execute
	steps := []struct {
		req     codec.SocketRequest
		wantErr bool // a response_error
		after   func(*codec.ServerMsg)
	}{
		{req: codec.SocketRequest{Type: codec.SocketOpenStream, StreamID: 1}},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt(values,
			codec.IntValue(-42), codec.FloatValue(0.25), codec.StringValue("arg"), codec.BlobValue([]byte{0xca, 0xfe}))}},
		{req: codec.SocketRequest{Type: codec.SocketStoreSQL, SQLID: 1, SQL: "select ?1 + 1 as n, :x as x"}},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: codec.Stmt{SQLID: 1, HasSQLID: true, WantRows: true,
			Args: []codec.Value{codec.IntValue(41)}}}, wantErr: true}, // :x is bound only by name: ARGS_INVALID
		{req: codec.SocketRequest{Type: codec.SocketDescribe, StreamID: 1, SQLID: 1, HasSQLID: true}},
		{req: codec.SocketRequest{Type: codec.SocketSequence, StreamID: 1, SQL: schema}},
		{req: codec.SocketRequest{Type: codec.SocketBatch, StreamID: 1, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Stmt: stmt("insert into ws_capture(v, f, b) values (?, ?, ?)", codec.StringValue("b"), codec.FloatValue(-1), codec.BlobValue(nil))},
			{Condition: ok(0), Stmt: stmt("insert into ws_capture(v) values ('a')")}, // UNIQUE fails
			{Condition: ok(1), Stmt: stmt("select 'skipped'")},
			{Condition: &codec.BatchCond{Type: codec.CondNot, Cond: ok(1)}, Stmt: stmt("select id, v, f, b from ws_capture order by id")},
			{Condition: &codec.BatchCond{Type: codec.CondIsAutocommit}, Stmt: stmt("update ws_capture set f = f * 2")},
		}}}},
		{req: codec.SocketRequest{Type: codec.SocketDescribe, StreamID: 1, SQL: "select id, v as name from ws_capture where id = ? and v = :v"}},
		{req: codec.SocketRequest{Type: codec.SocketGetAutocommit, StreamID: 1}},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt("begin")}},
		{req: codec.SocketRequest{Type: codec.SocketGetAutocommit, StreamID: 1}},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt("rollback")},
			// Protobuf's BatchResult has no replication index; a StmtResult has.
			after: func(m *codec.ServerMsg) { index = m.Response.Result.ReplicationIndex }},
		{req: codec.SocketRequest{Type: codec.SocketOpenCursor, StreamID: 1, CursorID: 1, Batch: codec.Batch{Steps: []codec.BatchStep{
			{Stmt: stmt("select id, v, f, b from ws_capture order by id")},
			{Stmt: stmt("insert into ws_capture(v) values (?)", codec.StringValue("c"))},
			{Stmt: stmt("select * from ws_capture_missing")},
			{Condition: ok(2), Stmt: stmt("select 'skipped'")},
			{Stmt: stmt("select ?1", codec.IntValue(1), codec.IntValue(2))}, // too many arguments
			{Stmt: stmt("select 1.5 as x, null as y")},
		}}}},
		{req: codec.SocketRequest{Type: codec.SocketFetchCursor, CursorID: 1, MaxCount: 4}},
		{req: codec.SocketRequest{Type: codec.SocketFetchCursor, CursorID: 1, MaxCount: 100}},
		{req: codec.SocketRequest{Type: codec.SocketCloseCursor, CursorID: 1}},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt("selec 1")}, wantErr: true},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt("select * from ws_capture_missing")}, wantErr: true},
		{req: codec.SocketRequest{Type: codec.SocketExecute, StreamID: 1, Stmt: stmt("select count(*) as n from ws_capture")}},
		{req: codec.SocketRequest{Type: codec.SocketCloseSQL, SQLID: 1}},
		{req: codec.SocketRequest{Type: codec.SocketSequence, StreamID: 1, SQL: "drop table ws_capture"}},
		{req: codec.SocketRequest{Type: codec.SocketCloseStream, StreamID: 1}},
	}
	for i := range steps {
		st := &steps[i]
		st.req.RequestID = int32(i + 1)
		if st.req.Type == codec.SocketExecute && strings.HasPrefix(st.req.Stmt.SQL, "select count(*)") {
			st.req.ReplicationIndex = index // the execute's own field, which sqld reads
		}
		if c.buf, err = sp.codec.AppendSocketRequest(c.buf[:0], &st.req); err != nil {
			return nil, err
		}
		if err := c.exchange(ctx, &m); err != nil {
			return nil, fmt.Errorf("request %d (%s): %w", st.req.RequestID, st.req.Type, err)
		}
		want := codec.ServerResponseOK
		if st.wantErr {
			want = codec.ServerResponseError
		}
		if m.Type != want || m.RequestID != st.req.RequestID || want == codec.ServerResponseOK && m.Response.Type != st.req.Type {
			return nil, fmt.Errorf("request %d (%s): answered by %s %d %s %q", st.req.RequestID, st.req.Type,
				m.Type, m.RequestID, m.Response.Type, m.Error.Message)
		}
		if st.after != nil {
			st.after(&m)
		}
	}
	if index == 0 {
		return nil, errors.New("no replication index in the rollback's result")
	}
	// sqld drops the connection rather than answering a close frame, so
	// the closing handshake fails; the session is over either way.
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	return c.frames, nil
}
