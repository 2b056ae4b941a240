package codectest

// This file: the allocation checks of the socket methods, for the codecs
// that decode into a reused destination and encode into a reused buffer
// without allocating (direct, protobuf).

import (
	"bytes"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// CheckSocketAllocs checks that c allocates nothing when it decodes three
// server messages of the session captured from sqld (ws_session.ndjson, or
// ws_session.pb for a Protobuf codec) into a reused destination (an execute
// response with a value of every type, a batch response and a fetch_cursor
// response), nor when it encodes a hello carrying jwt, an execute request of
// stmt and an open_cursor request of batch into a reused buffer. Under -race
// or -cover, where allocation counts mean nothing, it skips t.
func CheckSocketAllocs(t *testing.T, c codec.SocketCodec, jwt string, stmt codec.Stmt, batch codec.Batch) {
	if raceEnabled || testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful under -race or -cover")
	}
	t.Run("DecodeServerMsg", func(t *testing.T) {
		var msgs [][]byte
		if c.Format() == codec.FormatProtobuf {
			msgs = splitDelimited(SQLDFile("ws_session.pb"))
		} else {
			msgs = bytes.Split(SQLDFile("ws_session.ndjson"), []byte("\n"))
		}
		for _, tc := range []struct {
			name string
			msg  int
		}{
			{"execute response_ok of every value type", 2},
			{"batch response_ok", 7},
			{"fetch_cursor response_ok", 15},
		} {
			data := msgs[tc.msg]
			var m codec.ServerMsg
			if err := c.DecodeServerMsg(data, &m); err != nil {
				t.Fatal(err)
			}
			n := testing.AllocsPerRun(100, func() {
				if err := c.DecodeServerMsg(data, &m); err != nil {
					t.Fatal(err)
				}
			})
			if n != 0 {
				t.Errorf("%s into a reused destination: %v allocations, want 0", tc.name, n)
			}
		}
	})
	t.Run("Encode", func(t *testing.T) {
		exec := &codec.SocketRequest{RequestID: 7, Type: codec.SocketExecute, StreamID: 1, Stmt: stmt, ReplicationIndex: 9}
		cursor := &codec.SocketRequest{RequestID: 8, Type: codec.SocketOpenCursor, StreamID: 1, CursorID: 2, Batch: batch}
		buf, _ := c.AppendSocketRequest(nil, cursor)
		n := testing.AllocsPerRun(100, func() {
			buf, _ = c.AppendHello(buf[:0], jwt)
			buf, _ = c.AppendSocketRequest(buf[:0], exec)
			buf, _ = c.AppendSocketRequest(buf[:0], cursor)
		})
		if n != 0 {
			t.Errorf("encoding into a reused buffer: %v allocations, want 0", n)
		}
	})
}
