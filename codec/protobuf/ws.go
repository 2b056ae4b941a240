package protobuf

// This file: the messages of Hrana over WebSocket in the "hrana3-protobuf"
// subprotocol (one message per binary frame; libsql-server's
// hrana/ws/proto.rs and protobuf.rs): the ClientMsg the client sends and
// the ServerMsg it decodes.

import (
	"strconv"

	"github.com/gohrana/libsql/codec"
)

var _ codec.SocketCodec = pbCodec{}

// AppendHello appends ClientMsg { hello = 1: HelloMsg { optional string
// jwt = 1 } } to dst; "" sends no jwt.
func (pbCodec) AppendHello(dst []byte, jwt string) ([]byte, error) {
	orig := len(dst)
	dst, start := beginMsg(dst, 1)
	if jwt != "" {
		var err error
		if dst, err = appendStringField(dst, 1, jwt, "jwt"); err != nil {
			return dst[:orig], exportErr(err)
		}
	}
	return endMsg(dst, start), nil
}

// AppendSocketRequest appends ClientMsg { request = 2: RequestMsg
// { int32 request_id = 1; oneof request 2..13 } } to dst. The member number
// of a request type is its codec.SocketRequestType plus one.
func (pbCodec) AppendSocketRequest(dst []byte, req *codec.SocketRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	if req.Type.String() == "" {
		return dst, exportErr(prefixErr(encErr("unknown socket request type "+strconv.Itoa(int(req.Type)), nil), "request", -1, ""))
	}
	orig := len(dst)
	dst, msg := beginMsg(dst, 2)
	dst = appendNonZeroInt32(dst, 1, req.RequestID)
	dst, member := beginMsg(dst, int(req.Type)+1)
	dst, err := appendSocketRequest(dst, req)
	if err != nil {
		return dst[:orig], exportErr(prefixErr(err, "request", -1, ""))
	}
	dst = endMsg(dst, member)
	return endMsg(dst, msg), nil
}

// appendSocketRequest writes the fields of the member message of r. Zero
// int32 and uint32 fields are left out, as proto3 does.
func appendSocketRequest(dst []byte, r *codec.SocketRequest) ([]byte, error) {
	var err error
	switch r.Type {
	case codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketGetAutocommit:
		// { int32 stream_id = 1 }
		dst = appendNonZeroInt32(dst, 1, r.StreamID)
	case codec.SocketExecute:
		// { int32 stream_id = 1; Stmt stmt = 2; optional uint64
		//   replication_index = 3 }
		dst = appendNonZeroInt32(dst, 1, r.StreamID)
		if dst, err = appendStmtField(dst, 2, &r.Stmt); err != nil {
			return dst, err
		}
		if r.ReplicationIndex != 0 {
			dst = appendUintField(dst, 3, r.ReplicationIndex)
		}
	case codec.SocketBatch:
		// { int32 stream_id = 1; Batch batch = 2 }
		dst = appendNonZeroInt32(dst, 1, r.StreamID)
		dst, err = appendBatchField(dst, 2, &r.Batch)
	case codec.SocketOpenCursor:
		// { int32 stream_id = 1; int32 cursor_id = 2; Batch batch = 3 }
		dst = appendNonZeroInt32(dst, 1, r.StreamID)
		dst = appendNonZeroInt32(dst, 2, r.CursorID)
		dst, err = appendBatchField(dst, 3, &r.Batch)
	case codec.SocketCloseCursor:
		// { int32 cursor_id = 1 }
		dst = appendNonZeroInt32(dst, 1, r.CursorID)
	case codec.SocketFetchCursor:
		// { int32 cursor_id = 1; uint32 max_count = 2 }
		dst = appendNonZeroInt32(dst, 1, r.CursorID)
		if r.MaxCount != 0 {
			dst = appendUintField(dst, 2, uint64(r.MaxCount))
		}
	case codec.SocketSequence, codec.SocketDescribe:
		// { int32 stream_id = 1; optional string sql = 2; optional int32
		//   sql_id = 3; optional uint64 replication_index = 4 }
		dst = appendNonZeroInt32(dst, 1, r.StreamID)
		dst, err = appendSQLRef(dst, 2, r.SQL, r.SQLID, r.HasSQLID, r.ReplicationIndex)
	case codec.SocketStoreSQL:
		dst, err = appendStoreSQL(dst, r.SQLID, r.SQL)
	case codec.SocketCloseSQL:
		// { int32 sql_id = 1 }
		dst = appendNonZeroInt32(dst, 1, r.SQLID)
	}
	return dst, err
}

// DecodeServerMsg decodes a ServerMsg: oneof hello_ok = 1 (HelloOkMsg {}),
// hello_error = 2 (HelloErrorMsg { Error error = 1 }), response_ok = 3
// (ResponseOkMsg { int32 request_id = 1; oneof response 2..13 }),
// response_error = 4 (ResponseErrorMsg { int32 request_id = 1; Error
// error = 2 }). data is one binary frame.
func (pbCodec) DecodeServerMsg(data []byte, m *codec.ServerMsg) error {
	if m == nil {
		return nilDest()
	}
	oldErr := m.Error
	m.Reset()
	f := fieldReader{b: data}
	for f.next() {
		if f.num < 1 || f.num > 4 {
			f.skip()
			continue
		}
		t := codec.ServerMsgType(f.num)
		s, e, ok := f.msg(t.String())
		if !ok {
			break
		}
		// The last member wins as a whole.
		m.Type, m.RequestID, m.Error = t, 0, codec.Error{}
		resetResponse(&m.Response)
		switch t {
		case codec.ServerHelloOK:
			f.err = skipAll(data[:e], s)
		case codec.ServerHelloError:
			f.err = errorHolder(data[:e], s, nil, &m.Error, oldErr)
		case codec.ServerResponseOK:
			var rt uint8
			rt, f.err = responseOneof(data[:e], s, &m.Response, socketMember, &m.RequestID)
			if f.err == nil && rt == 0 {
				f.err = decodeErr(f.at, "response_ok message without a response")
			}
			m.Response.Type = codec.SocketRequestType(rt)
		case codec.ServerResponseError:
			f.err = errorHolder(data[:e], s, &m.RequestID, &m.Error, oldErr)
		}
	}
	if f.err != nil {
		return f.err
	}
	if m.Type == codec.ServerMsgUnknown {
		return decodeErr(0, "server message without a known member")
	}
	return nil
}

// errorHolder decodes HelloErrorMsg (error = 1) or, with id set,
// ResponseErrorMsg (request_id = 1, stored in *id; error = 2). An absent
// error is an empty one, as for every absent message.
func errorHolder(b []byte, i int, id *int32, e *codec.Error, old codec.Error) error {
	errNum := uint64(1)
	if id != nil {
		errNum = 2
	}
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch {
		case f.num == errNum:
			if s, end, ok := f.msg("error"); ok {
				f.err = errorMsg(b[:end], s, e, old)
			}
		case f.num == 1 && id != nil:
			*id = f.int32("request_id")
		default:
			f.skip()
		}
	}
	return f.err
}

// socketMember is the memberFunc of ResponseOkMsg: the member number of a
// response type is its codec.SocketRequestType plus one.
func socketMember(num uint64) (uint8, codec.SocketRequestType) {
	if num < 2 || num > uint64(codec.SocketGetAutocommit)+1 {
		return 0, codec.SocketUnknown
	}
	t := codec.SocketRequestType(num - 1)
	return uint8(t), t
}
