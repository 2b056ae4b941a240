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
	b := data
	for i := 0; i < len(b); {
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return err
		}
		if num < 1 || num > 4 {
			if j, err = skipField(b, num, wt, j); err != nil {
				return err
			}
			i = j
			continue
		}
		t := codec.ServerMsgType(num)
		s, e, err := lenField(b, j, at, wt, t.String())
		if err != nil {
			return err
		}
		// The last member wins as a whole.
		m.Type, m.RequestID, m.Error = t, 0, codec.Error{}
		resetResponse(&m.Response)
		switch t {
		case codec.ServerHelloOK:
			err = skipAll(b[:e], s)
		case codec.ServerHelloError:
			err = errorHolder(b[:e], s, nil, &m.Error, oldErr)
		case codec.ServerResponseOK:
			var rt uint8
			rt, err = responseOneof(b[:e], s, &m.Response, socketMember, &m.RequestID)
			if err == nil && rt == 0 {
				err = decodeErr(at, "response_ok message without a response")
			}
			m.Response.Type = codec.SocketRequestType(rt)
		case codec.ServerResponseError:
			err = errorHolder(b[:e], s, &m.RequestID, &m.Error, oldErr)
		}
		if err != nil {
			return err
		}
		i = e
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
	for i < len(b) {
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return err
		}
		switch {
		case num == errNum:
			var s, end int
			if s, end, err = lenField(b, j, at, wt, "error"); err == nil {
				err = errorMsg(b[:end], s, e, old)
				j = end
			}
		case num == 1 && id != nil:
			*id, j, err = int32Field(b, j, at, wt, "request_id")
		default:
			j, err = skipField(b, num, wt, j)
		}
		if err != nil {
			return err
		}
		i = j
	}
	return nil
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
