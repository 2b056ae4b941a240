package protobuf

// This file: what the responses of HTTP pipelines (StreamResponse) and of
// WebSocket sockets (ResponseOkMsg) share. Both are a oneof of one message
// per request type, holding the result, if any, in its field 1; so one
// walker decodes both, into a codec.SocketResponse (whose members include
// every member of a codec.StreamResponse).

import "github.com/gohrana/libsql/codec"

// memberFunc maps a field number of a response oneof to the type code of
// its member (a codec.RequestType or codec.SocketRequestType, 0 for a
// field that is no member) and the socket request type whose response
// carries the same fields (codec.RequestType.SocketType), by which the
// member's message is decoded.
type memberFunc func(num uint64) (uint8, codec.SocketRequestType)

// responseOneof decodes the message b[i:] that holds a response oneof into
// r, and returns the type code of its member, 0 if it has none. Of the
// members, the last one wins as a whole. With id set the message is a
// ResponseOkMsg, whose field 1 is the request_id it stores in *id.
func responseOneof(b []byte, i int, r *codec.SocketResponse, member memberFunc, id *int32) (uint8, error) {
	resetResponse(r)
	var typ uint8
	for i < len(b) {
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return 0, err
		}
		if num == 1 && id != nil {
			if *id, j, err = int32Field(b, j, at, wt, "request_id"); err != nil {
				return 0, err
			}
			i = j
			continue
		}
		t, sh := member(num)
		if t == 0 {
			if j, err = skipField(b, num, wt, j); err != nil {
				return 0, err
			}
			i = j
			continue
		}
		s, e, err := lenField(b, j, at, wt, memberName(t, id != nil))
		if err != nil {
			return 0, err
		}
		// Drop what another member, or an earlier occurrence of this one,
		// left behind.
		resetResponse(r)
		if err := responseBody(b[:e], s, sh, r); err != nil {
			return 0, err
		}
		typ = t
		i = e
	}
	return typ, nil
}

// memberName names the member of type code t, for errors.
func memberName(t uint8, socket bool) string {
	if socket {
		return codec.SocketRequestType(t).String()
	}
	return codec.RequestType(t).String()
}

// responseBody decodes the message b[i:] of a response member into r; sh
// says which fields it carries.
func responseBody(b []byte, i int, sh codec.SocketRequestType, r *codec.SocketResponse) error {
	for i < len(b) {
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return err
		}
		switch {
		case num == 1 && sh.HasResult():
			var s, e int
			if s, e, err = lenField(b, j, at, wt, "result"); err == nil {
				err = resultAs(b[:e], s, sh, r)
				j = e
			}
		case num == 1 && sh == codec.SocketGetAutocommit:
			var v uint64
			v, j, err = varintField(b, j, at, wt, "is_autocommit")
			r.IsAutocommit = v != 0
		case num == 1 && sh == codec.SocketFetchCursor:
			var s, e int
			if s, e, err = lenField(b, j, at, wt, "entries"); err == nil {
				r.Entries = grow(r.Entries)
				err = cursorEntry(b[:e], s, &r.Entries[len(r.Entries)-1])
				j = e
			}
		case num == 2 && sh == codec.SocketFetchCursor:
			var v uint64
			v, j, err = varintField(b, j, at, wt, "done")
			r.Done = v != 0
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

// resultAs decodes the result message b[i:] of a response of type t (one
// with a result).
func resultAs(b []byte, i int, t codec.SocketRequestType, r *codec.SocketResponse) error {
	switch t {
	case codec.SocketExecute:
		return stmtResult(b, i, &r.Result)
	case codec.SocketBatch:
		return batchResult(b, i, &r.Batch)
	default:
		return describeResult(b, i, &r.Describe)
	}
}
