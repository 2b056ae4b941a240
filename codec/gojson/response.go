package gojson

// This file: what the response objects of HTTP pipelines and of WebSocket
// sockets share. Both are {"type":...} objects whose other members depend
// on the type, so one wire type decodes both, and one conversion fills a
// codec.SocketResponse (whose members include every member of a
// codec.StreamResponse). It also holds objMember, for the members that
// must be objects under some types of their enclosing object ("response"
// and "error" of stream results and server messages).

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/goccy/go-json/jsontext"

	"github.com/gohrana/libsql/codec"
)

// typeParser maps the "type" of a response to its type code (a
// codec.RequestType or codec.SocketRequestType, 0 when unknown) and the
// socket request type whose response carries the same members
// (codec.RequestType.SocketType), by which the members are decoded.
type typeParser func(name string) (uint8, codec.SocketRequestType)

// responseD is a response object.
type responseD struct {
	typ      uint8                   // from the typeParser
	members  codec.SocketRequestType // from the typeParser
	stmt     stmtResultD             // SocketExecute
	batch    batchResultD            // SocketBatch
	describe describeD               // SocketDescribe
	auto     bool                    // SocketGetAutocommit
	entries  []codec.CursorEntry     // SocketFetchCursor
	done     bool                    // SocketFetchCursor
}

// decodeResult decodes raw as the result of a response of type t.
func (r *responseD) decodeResult(t codec.SocketRequestType, raw []byte) error {
	switch t {
	case codec.SocketExecute:
		return r.stmt.UnmarshalJSON(raw)
	case codec.SocketBatch:
		return r.batch.UnmarshalJSON(raw)
	case codec.SocketDescribe:
		return r.describe.UnmarshalJSON(raw)
	}
	return nil
}

// decode decodes the response object raw. "result" and "entries" are
// decoded as they are read when the type read so far has them (and they
// have the right JSON type), and otherwise once the final type is known;
// "is_autocommit" and "done" are taken from their last occurrence. Members
// of other types are ignored whatever their JSON type.
func (r *responseD) decode(raw []byte, parse typeParser) error {
	*r = responseD{}
	if !isObject(raw) {
		return errWrongType("a response object", raw)
	}
	var typ uint8
	sh := codec.SocketUnknown // the members the type read so far carries
	typPresent := false
	var result, entries, auto, done []byte
	resultAs := codec.SocketUnknown // the type the last result was decoded as
	entriesDone := false            // the last entries were decoded
	err := members(raw, func(name string, value []byte) error {
		switch name {
		case "type":
			s, present, err := stringOrNull(value)
			if err != nil {
				return fmt.Errorf("type: %w", err)
			}
			typ, sh = parse(s)
			typPresent = present
		case "result":
			result, resultAs = value, codec.SocketUnknown
			if sh.HasResult() && isObject(value) {
				if err := r.decodeResult(sh, value); err != nil {
					return fmt.Errorf("result: %w", err)
				}
				resultAs = sh
			}
		case "entries":
			entries, entriesDone = value, false
			if sh == codec.SocketFetchCursor && isArray(value) {
				if err := r.decodeEntries(value); err != nil {
					return fmt.Errorf("entries: %w", err)
				}
				entriesDone = true
			}
		case "is_autocommit":
			auto = value
		case "done":
			done = value
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case !typPresent:
		return errors.New(`response without "type"`)
	case typ == 0:
		return errors.New("unknown response type")
	}
	switch sh {
	case codec.SocketExecute, codec.SocketBatch, codec.SocketDescribe:
		switch {
		case isNull(result):
			resultAs = codec.SocketUnknown
		case !isObject(result):
			return errWrongType("a result object", result)
		case resultAs != sh:
			if err := r.decodeResult(sh, result); err != nil {
				return fmt.Errorf("result: %w", err)
			}
			resultAs = sh
		}
	case codec.SocketGetAutocommit:
		if r.auto, err = parseBool(auto); err != nil {
			return fmt.Errorf("is_autocommit: %w", err)
		}
	case codec.SocketFetchCursor:
		switch {
		case isNull(entries):
			r.entries = nil
		case !isArray(entries):
			return errWrongType("an array of cursor entries", entries)
		case !entriesDone:
			if err := r.decodeEntries(entries); err != nil {
				return fmt.Errorf("entries: %w", err)
			}
		}
		if r.done, err = parseBool(done); err != nil {
			return fmt.Errorf("done: %w", err)
		}
	}
	// A result decoded from an earlier occurrence, or under an earlier
	// type, that the last occurrence (a null one) overrode.
	if resultAs != sh {
		r.stmt, r.batch, r.describe = stmtResultD{}, batchResultD{}, describeD{}
	}
	r.typ, r.members = typ, sh
	return nil
}

// decodeEntries decodes the "entries" array raw of a fetch_cursor
// response: cursor entry objects, each decoded as DecodeCursorEntry does.
func (r *responseD) decodeEntries(raw []byte) error {
	r.entries = nil
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), decodeOptions)
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if !isObject(value) {
			return errWrongType("a cursor entry object", value)
		}
		var e codec.CursorEntry
		// The library promises value only until its next call, and the
		// entry's values are copies: nothing of value is kept.
		if err := decodeEntry(value, &e); err != nil {
			return err
		}
		r.entries = append(r.entries, e)
	}
	return nil
}

// setResponse fills dst, whose slices may hold capacity to reuse, from w.
// It does not set dst.Type, whose type depends on the kind of response.
func setResponse(dst *codec.SocketResponse, w *responseD) {
	old := *dst
	*dst = codec.SocketResponse{}
	switch w.members {
	case codec.SocketExecute:
		dst.Result = codec.StmtResult{Cols: old.Result.Cols[:0], Values: old.Result.Values[:0]}
		setStmtResult(&dst.Result, &w.stmt)
	case codec.SocketBatch:
		setBatchResult(&dst.Batch, old.Batch.Steps[:0], &w.batch)
	case codec.SocketDescribe:
		d := &w.describe
		params := old.Describe.Params[:0]
		for _, p := range d.Params {
			params = append(params, codec.DescribeParam(p))
		}
		dst.Describe = codec.DescribeResult{Params: params, Cols: appendCols(old.Describe.Cols[:0], d.Cols),
			IsExplain: d.IsExplain, IsReadonly: d.IsReadonly}
	case codec.SocketGetAutocommit:
		dst.IsAutocommit = w.auto
	case codec.SocketFetchCursor:
		dst.Entries = append(old.Entries[:0], w.entries...)
		dst.Done = w.done
	}
}

// objMember is a member that must be an object under some types of its
// enclosing object and is ignored under the others: the "response" and
// "error" of stream results and server messages.
type objMember struct {
	raw  []byte // the last occurrence
	done bool   // raw was decoded, under the type read so far
}

// read takes one occurrence of the member: when use says that the type
// read so far has it and it is an object, decode decodes it now.
func (m *objMember) read(value []byte, use bool, field string, decode func([]byte) error) error {
	m.raw, m.done = value, false
	if use && isObject(value) {
		if err := decode(value); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		m.done = true
	}
	return nil
}

// settle finishes the member once the final type of its object, named
// owner in errors, is known to require it: it must be an object, decoded
// from its last occurrence unless that was done as it was read.
func (m *objMember) settle(field, owner string, decode func([]byte) error) error {
	switch {
	case isNull(m.raw):
		return errors.New(owner + ` without "` + field + `"`)
	case !isObject(m.raw):
		return fmt.Errorf("%s: %w", field, errWrongType("an object", m.raw))
	case !m.done:
		if err := decode(m.raw); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	return nil
}
