package protobuf

// This file: what the responses of HTTP pipelines (StreamResponse) and of
// WebSocket sockets (ResponseOkMsg) share. Both are a oneof of one message
// per request type, holding the result, if any, in its field 1; so one
// walker decodes both, into a codec.SocketResponse (whose members include
// every member of a codec.StreamResponse).

import "github.com/gohrana/libsql/codec"

// shape says what the message of a response member holds.
type shape uint8

const (
	shapeEmpty      shape = iota
	shapeExecute          // result = 1: StmtResult
	shapeBatch            // result = 1: BatchResult
	shapeDescribe         // result = 1: DescribeResult
	shapeAutocommit       // is_autocommit = 1
	shapeCursor           // entries = 1 (repeated CursorEntry), done = 2
)

func (s shape) hasResult() bool {
	return s == shapeExecute || s == shapeBatch || s == shapeDescribe
}

// memberFunc maps a field number of a response oneof to the type code of
// its member (a codec.RequestType or codec.SocketRequestType, 0 for a
// field that is no member) and the member's shape.
type memberFunc func(num uint64) (uint8, shape)

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

// responseBody decodes the message b[i:] of a response member of shape sh
// into r.
func responseBody(b []byte, i int, sh shape, r *codec.SocketResponse) error {
	for i < len(b) {
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return err
		}
		switch {
		case num == 1 && sh.hasResult():
			var s, e int
			if s, e, err = lenField(b, j, at, wt, "result"); err == nil {
				err = resultAs(b[:e], s, sh, r)
				j = e
			}
		case num == 1 && sh == shapeAutocommit:
			var v uint64
			v, j, err = varintField(b, j, at, wt, "is_autocommit")
			r.IsAutocommit = v != 0
		case num == 1 && sh == shapeCursor:
			var s, e int
			if s, e, err = lenField(b, j, at, wt, "entries"); err == nil {
				r.Entries = grow(r.Entries)
				err = cursorEntry(b[:e], s, &r.Entries[len(r.Entries)-1])
				j = e
			}
		case num == 2 && sh == shapeCursor:
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

// resultAs decodes the result message b[i:] of a response of shape s (one
// with a result).
func resultAs(b []byte, i int, s shape, r *codec.SocketResponse) error {
	switch s {
	case shapeExecute:
		return stmtResult(b, i, &r.Result)
	case shapeBatch:
		return batchResult(b, i, &r.Batch)
	default:
		return describeResult(b, i, &r.Describe)
	}
}
