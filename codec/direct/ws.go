package direct

// This file: the messages of Hrana over WebSocket (the "hrana3" and
// "hrana2" subprotocols, one JSON message per text frame): the hello and
// request messages the client sends and the server messages it decodes.

import (
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

var _ codec.SocketCodec = jsonCodec{}

// AppendHello appends {"type":"hello","jwt":...} to dst, with a null jwt
// when jwt is "".
func (jsonCodec) AppendHello(dst []byte, jwt string) ([]byte, error) {
	orig := len(dst)
	dst = append(dst, `{"type":"hello","jwt":`...)
	dst, err := appendNullable(dst, jwt, "jwt")
	if err != nil {
		return dst[:orig], exportErr(err)
	}
	return append(dst, '}'), nil
}

// AppendSocketRequest appends
// {"type":"request","request_id":...,"request":{...}} to dst.
func (jsonCodec) AppendSocketRequest(dst []byte, req *codec.SocketRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	orig := len(dst)
	dst = appendIntMember(append(dst, `{"type":"request"`...), `,"request_id":`, int64(req.RequestID))
	dst = append(dst, `,"request":`...)
	dst, err := appendSocketRequest(dst, req)
	if err != nil {
		return dst[:orig], exportErr(prefixErr(err, "request", -1, ""))
	}
	return append(dst, '}'), nil
}

// appendSocketRequest appends the request object of req, with the members
// its type carries.
func appendSocketRequest(dst []byte, r *codec.SocketRequest) ([]byte, error) {
	name := r.Type.String()
	if name == "" {
		return dst, encErr("unknown socket request type "+strconv.Itoa(int(r.Type)), nil)
	}
	dst = appendTypeMember(dst, name)
	var err error
	switch r.Type {
	case codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketGetAutocommit:
		dst = appendIntMember(dst, `,"stream_id":`, int64(r.StreamID))
	case codec.SocketExecute:
		dst = appendIntMember(dst, `,"stream_id":`, int64(r.StreamID))
		dst = append(dst, `,"stmt":`...)
		if dst, err = appendStmt(dst, &r.Stmt); err != nil {
			return dst, prefixErr(err, "stmt", -1, "")
		}
		dst = appendReplicationIndex(dst, r.ReplicationIndex)
	case codec.SocketBatch, codec.SocketOpenCursor:
		dst = appendIntMember(dst, `,"stream_id":`, int64(r.StreamID))
		if r.Type == codec.SocketOpenCursor {
			dst = appendIntMember(dst, `,"cursor_id":`, int64(r.CursorID))
		}
		dst = append(dst, `,"batch":`...)
		if dst, err = appendBatch(dst, &r.Batch); err != nil {
			return dst, prefixErr(err, "batch", -1, "")
		}
	case codec.SocketCloseCursor:
		dst = appendIntMember(dst, `,"cursor_id":`, int64(r.CursorID))
	case codec.SocketFetchCursor:
		dst = appendIntMember(dst, `,"cursor_id":`, int64(r.CursorID))
		dst = appendIntMember(dst, `,"max_count":`, int64(r.MaxCount))
	case codec.SocketSequence, codec.SocketDescribe:
		dst = appendIntMember(dst, `,"stream_id":`, int64(r.StreamID))
		if dst, err = appendSQLRef(dst, r.SQL, r.SQLID, r.HasSQLID); err != nil {
			return dst, err
		}
		dst = appendReplicationIndex(dst, r.ReplicationIndex)
	case codec.SocketStoreSQL:
		if dst, err = appendStoreSQL(dst, r.SQLID, r.SQL); err != nil {
			return dst, err
		}
	case codec.SocketCloseSQL:
		dst = appendIntMember(dst, `,"sql_id":`, int64(r.SQLID))
	}
	return append(dst, '}'), nil
}

// DecodeServerMsg decodes one server message (a text frame) into m.
func (jsonCodec) DecodeServerMsg(data []byte, m *codec.ServerMsg) error {
	if m == nil {
		return nilDest()
	}
	oldErr := m.Error
	m.Reset()
	d := newDecoder(data)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.serverMsg(m, oldErr); err != nil {
		return err
	}
	return d.finish()
}

// serverMsg decodes the server message object at d.pos. "response" and
// "error" are objects whose meaning depends on "type", handled like those
// of a stream result; "request_id" is read from its last occurrence once
// the type is known.
func (d *decoder) serverMsg(m *codec.ServerMsg, oldErr codec.Error) error {
	objStart := d.pos
	if err := d.open(); err != nil {
		return err
	}
	typ := codec.ServerMsgUnknown
	typPresent := false
	var id span
	var resp, errm objMember
	decodeResp := func() error { return d.socketResponse(&m.Response) }
	decodeErr := func() error { return d.errorObj(&m.Error, oldErr, "error") }
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "type":
			var b []byte
			b, typPresent, err = d.readString("type")
			typ = codec.ParseServerMsgType(b)
		case "request_id":
			id, err = d.skipValue()
		case "response":
			err = d.readObjMember(&resp, typ == codec.ServerResponseOK, decodeResp)
		case "error":
			err = d.readObjMember(&errm, typ == codec.ServerHelloError || typ == codec.ServerResponseError, decodeErr)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	var err error
	switch typ {
	case codec.ServerMsgUnknown:
		if !typPresent {
			return errAt(objStart, "server message without \"type\"")
		}
		return errAt(objStart, "unknown server message type")
	case codec.ServerHelloOK:
	case codec.ServerHelloError:
		err = d.settleObjMember(&errm, objStart, "error", "hello_error message", decodeErr)
	case codec.ServerResponseOK:
		if m.RequestID, err = d.requestID(id); err == nil {
			err = d.settleObjMember(&resp, objStart, "response", "response_ok message", decodeResp)
		}
	case codec.ServerResponseError:
		if m.RequestID, err = d.requestID(id); err == nil {
			err = d.settleObjMember(&errm, objStart, "error", "response_error message", decodeErr)
		}
	}
	if err != nil {
		return err
	}
	// Drop what was decoded in place under an earlier, overridden type.
	if typ != codec.ServerResponseOK {
		resetResponse(&m.Response)
	}
	if typ == codec.ServerHelloOK || typ == codec.ServerResponseOK {
		m.Error = codec.Error{}
	}
	m.Type = typ
	return nil
}

// requestID interprets the last "request_id": an int32, as a number or a
// string (like last_insert_rowid); null or absent is 0.
func (d *decoder) requestID(sp span) (int32, error) {
	if sp.kind == kindNone {
		return 0, nil
	}
	p, dp := d.seek(sp)
	v, _, err := d.readInt("request_id")
	d.restore(p, dp)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		err = fieldErr(sp.start, "request_id", "not a 32-bit integer")
	}
	if err != nil {
		return 0, err
	}
	return int32(v), nil
}

// socketResponse decodes the response object of a response_ok message.
func (d *decoder) socketResponse(r *codec.SocketResponse) error {
	typ, err := d.response(r, socketType)
	r.Type = codec.SocketRequestType(typ)
	return err
}

// socketType is the typeParser of socket responses.
func socketType(name []byte) (uint8, codec.SocketRequestType) {
	t := codec.ParseSocketRequestType(name)
	return uint8(t), t
}
