package direct

// This file: what the response objects of HTTP pipelines and of WebSocket
// sockets share. Both are {"type":...} objects whose other members depend
// on the type, so one walker decodes both, into a codec.SocketResponse
// (whose members include every member of a codec.StreamResponse). It also
// holds the handling of members that must be objects under some types of
// their enclosing object ("response" and "error" of stream results and
// server messages).

import "github.com/gohrana/libsql/codec"

// typeParser maps the "type" of a response to its type code (a
// codec.RequestType or codec.SocketRequestType, 0 when unknown) and the
// socket request type whose response carries the same members
// (codec.RequestType.SocketType), by which the members are decoded.
type typeParser func(name []byte) (uint8, codec.SocketRequestType)

func resetResponse(r *codec.SocketResponse) {
	resetStmtResult(&r.Result)
	*r = codec.SocketResponse{
		Result:   r.Result,
		Batch:    codec.BatchResult{Steps: r.Batch.Steps[:0]},
		Describe: codec.DescribeResult{Params: r.Describe.Params[:0], Cols: r.Describe.Cols[:0]},
		Entries:  r.Entries[:0],
	}
}

// response decodes the response object at d.pos into r, which it resets
// first, and returns its type code. "result" and "entries" are decoded in
// place when the type read so far has them (and they have the right JSON
// type), otherwise recorded and decoded once the final type is known;
// "is_autocommit" and "done" are read from their last occurrence then.
// Members of other types are ignored whatever their JSON type.
func (d *decoder) response(r *codec.SocketResponse, parse typeParser) (uint8, error) {
	objStart := d.pos
	resetResponse(r)
	if err := d.open(); err != nil {
		return 0, err
	}
	var typ uint8
	sh := codec.SocketUnknown // the members the type read so far carries
	typPresent := false
	var res, ents, auto, done span
	resAs := codec.SocketUnknown // the type res was decoded as in place, if any
	entsDone := false            // ents was decoded in place
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "type":
			var b []byte
			b, typPresent, err = d.readString("type")
			typ, sh = parse(b)
		case "result":
			if sh.HasResult() && d.data[d.pos] == '{' {
				res = span{start: d.pos, depth: d.depth, kind: kindObject}
				resAs = sh
				err = d.resultAs(r, sh)
			} else {
				resAs = codec.SocketUnknown
				res, err = d.skipValue()
			}
		case "entries":
			if sh == codec.SocketFetchCursor && d.data[d.pos] == '[' {
				ents = span{start: d.pos, depth: d.depth, kind: kindArray}
				entsDone = true
				err = d.entries(&r.Entries)
			} else {
				entsDone = false
				ents, err = d.skipValue()
			}
		case "is_autocommit":
			auto, err = d.skipValue()
		case "done":
			done, err = d.skipValue()
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return 0, err
		}
	}
	if !typPresent {
		return 0, errAt(objStart, "response without \"type\"")
	}
	if typ == 0 {
		return 0, errAt(objStart, "unknown response type")
	}
	var err error
	switch sh {
	case codec.SocketExecute, codec.SocketBatch, codec.SocketDescribe:
		switch res.kind {
		case kindObject:
			if resAs != sh {
				p, dp := d.seek(res)
				err = d.resultAs(r, sh)
				d.restore(p, dp)
				resAs = sh
			}
		case kindNone, kindNull:
			resAs = codec.SocketUnknown
		default:
			return 0, errAt(res.start, "field \"result\": expected an object, got "+jsonKind(d.data[res.start]))
		}
	case codec.SocketGetAutocommit:
		r.IsAutocommit, err = d.boolSpan(auto, "is_autocommit")
	case codec.SocketFetchCursor:
		switch ents.kind {
		case kindArray:
			if !entsDone {
				p, dp := d.seek(ents)
				err = d.entries(&r.Entries)
				d.restore(p, dp)
			}
		case kindNone, kindNull:
			r.Entries = r.Entries[:0]
		default:
			return 0, errAt(ents.start, "field \"entries\": expected an array, got "+jsonKind(d.data[ents.start]))
		}
		if err == nil {
			r.Done, err = d.boolSpan(done, "done")
		}
	}
	if err != nil {
		return 0, err
	}
	// Drop whatever an earlier, overridden "type" or member left behind.
	if sh != codec.SocketExecute || resAs != sh {
		resetStmtResult(&r.Result)
	}
	if sh != codec.SocketBatch || resAs != sh {
		r.Batch = codec.BatchResult{Steps: r.Batch.Steps[:0]}
	}
	if sh != codec.SocketDescribe || resAs != sh {
		r.Describe = codec.DescribeResult{Params: r.Describe.Params[:0], Cols: r.Describe.Cols[:0]}
	}
	if sh != codec.SocketFetchCursor {
		r.Entries = r.Entries[:0]
	}
	return typ, nil
}

// resultAs decodes the "result" object at d.pos as the result of a
// response of type t (one with a result).
func (d *decoder) resultAs(r *codec.SocketResponse, t codec.SocketRequestType) error {
	switch t {
	case codec.SocketExecute:
		return d.stmtResult(&r.Result)
	case codec.SocketBatch:
		return d.batchResult(&r.Batch)
	default:
		return d.describeResult(&r.Describe)
	}
}

// boolSpan interprets a recorded boolean member: true, false, or null or
// absent (false).
func (d *decoder) boolSpan(sp span, field string) (bool, error) {
	switch sp.kind {
	case kindBool:
		return d.data[sp.start] == 't', nil
	case kindNone, kindNull:
		return false, nil
	}
	return false, errAt(sp.start, "field \""+field+"\": expected a boolean, got "+jsonKind(d.data[sp.start]))
}

// entries decodes the "entries" array at d.pos (a '[') of a fetch_cursor
// response into *dst, reusing its capacity and the entries in it. Each
// element is a cursor entry object, decoded as DecodeCursorEntry does.
func (d *decoder) entries(dst *[]codec.CursorEntry) error {
	es := (*dst)[:0]
	*dst = es
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			*dst = es
			return err
		}
		i := len(es)
		if i < cap(es) {
			es = es[:i+1] // the stale entry is reset by cursorEntry
		} else {
			es = append(es, codec.CursorEntry{})
		}
		if err := d.cursorEntry(&es[i]); err != nil {
			*dst = es
			return err
		}
	}
}

// objMember is a member that must be an object under some types of its
// enclosing object and is ignored under the others: the "response" and
// "error" of stream results and server messages.
type objMember struct {
	sp   span // the last occurrence
	done bool // sp was decoded in place, under the type read so far
}

// readObjMember reads one occurrence of m at d.pos: when use says that the
// type read so far has the member and it is an object, decode decodes it
// in place; otherwise it is validated, skipped and recorded.
func (d *decoder) readObjMember(m *objMember, use bool, decode func() error) error {
	if use && d.data[d.pos] == '{' {
		m.sp, m.done = span{start: d.pos, depth: d.depth, kind: kindObject}, true
		return decode()
	}
	var err error
	m.sp, err = d.skipValue()
	m.done = false
	return err
}

// settleObjMember finishes m once the final type of the object starting at
// objStart, named owner in errors, is known to require it: it must be an
// object, decoded from its last occurrence unless that was done in place.
func (d *decoder) settleObjMember(m *objMember, objStart int, field, owner string, decode func() error) error {
	switch m.sp.kind {
	case kindObject:
	case kindNone, kindNull:
		return errAt(objStart, owner+" without \""+field+"\"")
	default:
		return errAt(m.sp.start, "field \""+field+"\": expected an object, got "+jsonKind(d.data[m.sp.start]))
	}
	if m.done {
		return nil
	}
	p, dp := d.seek(m.sp)
	err := decode()
	d.restore(p, dp)
	return err
}
