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
	f := fieldReader{b: b, i: i}
	for f.next() {
		if f.num == 1 && id != nil {
			*id = f.int32("request_id")
			continue
		}
		t, sh := member(f.num)
		if t == 0 {
			f.skip()
			continue
		}
		s, e, ok := f.msg(memberName(t, id != nil))
		if !ok {
			break
		}
		// Drop what another member, or an earlier occurrence of this one,
		// left behind.
		resetResponse(r)
		f.err = responseBody(b[:e], s, sh, r)
		typ = t
	}
	if f.err != nil {
		return 0, f.err
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
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch {
		case f.num == 1 && sh.HasResult():
			if s, e, ok := f.msg("result"); ok {
				f.err = resultAs(b[:e], s, sh, r)
			}
		case f.num == 1 && sh == codec.SocketGetAutocommit:
			r.IsAutocommit = f.varint("is_autocommit") != 0
		case f.num == 1 && sh == codec.SocketFetchCursor:
			if s, e, ok := f.msg("entries"); ok {
				r.Entries = grow(r.Entries)
				f.err = cursorEntry(b[:e], s, &r.Entries[len(r.Entries)-1])
			}
		case f.num == 2 && sh == codec.SocketFetchCursor:
			r.Done = f.varint("done") != 0
		default:
			f.skip()
		}
	}
	return f.err
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
