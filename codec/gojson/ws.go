package gojson

// This file: the messages of Hrana over WebSocket (the "hrana3" and
// "hrana2" subprotocols, one JSON message per text frame): the hello and
// request messages the client sends and the server messages it decodes.

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

var _ codec.SocketCodec = jsonCodec{}

// Wire structs of the client messages.

type helloW struct {
	Type string  `json:"type"`
	JWT  *string `json:"jwt"`
}

type requestMsgW struct {
	Type      string         `json:"type"`
	RequestID int32          `json:"request_id"`
	Request   socketRequestW `json:"request"`
}

// socketRequestW holds the members of every request type; convertSocket
// sets those of the request's type, and the others are omitted.
type socketRequestW struct {
	Type     string  `json:"type"`
	StreamID *int32  `json:"stream_id,omitempty"`
	CursorID *int32  `json:"cursor_id,omitempty"`
	MaxCount *uint32 `json:"max_count,omitempty"`
	Stmt     *stmtW  `json:"stmt,omitempty"`
	Batch    *batchW `json:"batch,omitempty"`
	SQLID    *int32  `json:"sql_id,omitempty"`
	SQL      *string `json:"sql,omitempty"`
	// ReplicationIndex is sent as a decimal string, as sqld writes it.
	ReplicationIndex uint64 `json:"replication_index,omitempty,string"`
}

// AppendHello appends {"type":"hello","jwt":...} to dst, with a null jwt
// when jwt is "".
func (jsonCodec) AppendHello(dst []byte, jwt string) (out []byte, err error) {
	defer recoverEncode(&err)
	w := helloW{Type: "hello"}
	if jwt != "" {
		if err := checkUTF8(jwt, "jwt"); err != nil {
			return dst, err
		}
		w.JWT = &jwt
	}
	return marshalAppend(dst, &w)
}

// AppendSocketRequest appends
// {"type":"request","request_id":...,"request":{...}} to dst.
func (jsonCodec) AppendSocketRequest(dst []byte, req *codec.SocketRequest) (out []byte, err error) {
	defer recoverEncode(&err)
	if req == nil {
		return dst, encodeErr("nil request", nil)
	}
	w := requestMsgW{Type: "request", RequestID: req.RequestID}
	if w.Request, err = convertSocket(req); err != nil {
		return dst, err
	}
	return marshalAppend(dst, &w)
}

func convertSocket(r *codec.SocketRequest) (socketRequestW, error) {
	w := socketRequestW{Type: r.Type.String()}
	streamID, cursorID, sqlID, maxCount := r.StreamID, r.CursorID, r.SQLID, r.MaxCount
	var err error
	switch r.Type {
	case codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketGetAutocommit:
		w.StreamID = &streamID
	case codec.SocketExecute:
		w.StreamID = &streamID
		var s stmtW
		if s, err = convertStmt(&r.Stmt); err != nil {
			return w, err
		}
		w.Stmt = &s
		w.ReplicationIndex = r.ReplicationIndex
	case codec.SocketBatch, codec.SocketOpenCursor:
		w.StreamID = &streamID
		if r.Type == codec.SocketOpenCursor {
			w.CursorID = &cursorID
		}
		var b batchW
		if b, err = convertBatch(&r.Batch); err != nil {
			return w, err
		}
		w.Batch = &b
	case codec.SocketCloseCursor:
		w.CursorID = &cursorID
	case codec.SocketFetchCursor:
		w.CursorID, w.MaxCount = &cursorID, &maxCount
	case codec.SocketSequence, codec.SocketDescribe:
		w.StreamID = &streamID
		if r.HasSQLID {
			w.SQLID = &sqlID
		} else if w.SQL, err = sqlText(r.SQL); err != nil {
			return w, err
		}
		w.ReplicationIndex = r.ReplicationIndex
	case codec.SocketStoreSQL:
		w.SQLID = &sqlID
		if w.SQL, err = sqlText(r.SQL); err != nil {
			return w, err
		}
	case codec.SocketCloseSQL:
		w.SQLID = &sqlID
	default:
		return w, encodeErr("unknown socket request type "+strconv.Itoa(int(r.Type)), nil)
	}
	return w, nil
}

// DecodeServerMsg decodes one server message (a text frame) into m.
func (jsonCodec) DecodeServerMsg(data []byte, m *codec.ServerMsg) (err error) {
	defer recoverDecode(&err)
	if m == nil {
		return decodeErr("nil destination", nil)
	}
	m.Reset()
	var w serverMsgD
	if err := decodeTop(data, &w); err != nil {
		return err
	}
	m.Type, m.RequestID, m.Error = w.typ, w.id, w.err
	if w.typ == codec.ServerResponseOK {
		setResponse(&m.Response, &w.resp)
		m.Response.Type = codec.SocketRequestType(w.resp.typ)
	}
	return nil
}

// serverMsgD is a server message. Its "response" and "error" are handled
// like those of a stream result; "request_id" is taken from its last
// occurrence once the type is known.
type serverMsgD struct {
	typ  codec.ServerMsgType
	id   int32       // ServerResponseOK, ServerResponseError
	err  codec.Error // ServerHelloError, ServerResponseError
	resp responseD   // ServerResponseOK
}

// UnmarshalJSON implements the library's Unmarshaler.
func (m *serverMsgD) UnmarshalJSON(raw []byte) error {
	*m = serverMsgD{}
	if !isObject(raw) {
		return errWrongType("a server message object", raw)
	}
	typ, typPresent := codec.ServerMsgUnknown, false
	var id []byte
	var resp, errm objMember
	decodeResp := func(raw []byte) error { return m.resp.decode(raw, socketType) }
	decodeErr := func(raw []byte) error { return (*errorD)(&m.err).UnmarshalJSON(raw) }
	err := members(raw, func(name string, value []byte) error {
		switch name {
		case "type":
			s, present, err := stringOrNull(value)
			if err != nil {
				return fmt.Errorf("type: %w", err)
			}
			typ, typPresent = codec.ParseServerMsgType(s), present
		case "request_id":
			id = value
		case "response":
			return resp.read(value, typ == codec.ServerResponseOK, "response", decodeResp)
		case "error":
			return errm.read(value, typ == codec.ServerHelloError || typ == codec.ServerResponseError, "error", decodeErr)
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch typ {
	case codec.ServerMsgUnknown:
		if !typPresent {
			return errors.New(`server message without "type"`)
		}
		return errors.New("unknown server message type")
	case codec.ServerHelloOK:
	case codec.ServerHelloError:
		err = errm.settle("error", "hello_error message", decodeErr)
	case codec.ServerResponseOK:
		if m.id, err = parseRequestID(id); err == nil {
			err = resp.settle("response", "response_ok message", decodeResp)
		}
	case codec.ServerResponseError:
		if m.id, err = parseRequestID(id); err == nil {
			err = errm.settle("error", "response_error message", decodeErr)
		}
	}
	if err != nil {
		return err
	}
	// Drop what was decoded under an earlier, overridden type.
	if typ != codec.ServerResponseOK {
		m.resp = responseD{}
	}
	if typ == codec.ServerHelloOK || typ == codec.ServerResponseOK {
		m.err = codec.Error{}
	}
	m.typ = typ
	return nil
}

// parseRequestID reads "request_id": an int32 as a number or a string
// (like last_insert_rowid); null or absent is 0.
func parseRequestID(raw []byte) (int32, error) {
	v, _, err := parseInteger(raw, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 32) })
	if err != nil {
		return 0, fmt.Errorf("request_id: %w", err)
	}
	return int32(v), nil
}

// socketType is the typeParser of socket responses.
func socketType(name string) (uint8, codec.SocketRequestType) {
	t := codec.ParseSocketRequestType(name)
	return uint8(t), t
}
