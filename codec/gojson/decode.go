package gojson

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/goccy/go-json/jsontext"
	jsonv2 "github.com/goccy/go-json/v2"

	"github.com/gohrana/libsql/codec"
)

// decodeOptions are the library options of every decode: repeated names are
// allowed (the last one wins) and invalid UTF-8 is allowed, which turns
// lone surrogate escapes into U+FFFD as encoding/json does. Raw invalid
// UTF-8 is rejected by precheck before the library runs.
var decodeOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// unmarshal decodes JSON that precheck has accepted (or a part of it).
func unmarshal(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, decodeOptions)
}

// --- the input as a whole ---

// precheck applies the rules the library does not: valid UTF-8 everywhere,
// no nesting deeper than codec.MaxDepth, and an object at the top.
func precheck(data []byte) error {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &codec.DecodeError{Codec: Name, Offset: off, Msg: "input is not valid UTF-8", Err: codec.ErrInvalidUTF8}
	}
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > codec.MaxDepth {
				return &codec.DecodeError{Codec: Name, Offset: i, Msg: "nesting deeper than " + strconv.Itoa(codec.MaxDepth)}
			}
		case '}', ']':
			depth--
		}
	}
	for i, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return nil
		}
		return &codec.DecodeError{Codec: Name, Offset: i, Msg: "want a JSON object"}
	}
	return &codec.DecodeError{Codec: Name, Offset: len(data), Msg: "empty input"}
}

// decodeTop runs precheck and decodes the whole input into w.
func decodeTop(data []byte, w any) error {
	if err := precheck(data); err != nil {
		return err
	}
	if err := unmarshal(data, w); err != nil {
		return libError(err)
	}
	return nil
}

// libError wraps an error of the library, with its offset when it has one.
func libError(err error) error {
	de := decodeErr("invalid JSON", err)
	var se *jsontext.SyntacticError
	var me *jsonv2.SemanticError
	switch {
	case errors.As(err, &se):
		de.Offset = int(se.ByteOffset)
	case errors.As(err, &me):
		de.Msg = "unexpected JSON"
		de.Offset = int(me.ByteOffset)
	}
	return de
}

// --- the Codec methods ---

// DecodePipelineResponse decodes a pipeline response body into resp.
func (jsonCodec) DecodePipelineResponse(data []byte, resp *codec.PipelineResponse) (err error) {
	defer recoverDecode(&err)
	resp.Reset()
	var w pipelineRespW
	if err := decodeTop(data, &w); err != nil {
		return err
	}
	resp.Baton = w.Baton
	resp.BaseURL = w.BaseURL
	results := resp.Results[:0]
	for i := range w.Results {
		var sr codec.StreamResult
		if i < cap(results) {
			sr = results[:i+1][i] // reuse the slices of the old element
		}
		setStreamResult(&sr, &w.Results[i])
		results = append(results, sr)
	}
	resp.Results = results
	return nil
}

// DecodeCursorHeader decodes the first line of a cursor response.
func (jsonCodec) DecodeCursorHeader(line []byte, h *codec.CursorHeader) (err error) {
	defer recoverDecode(&err)
	*h = codec.CursorHeader{}
	var w cursorHeaderW
	if err := decodeTop(line, &w); err != nil {
		return err
	}
	h.Baton = w.Baton
	h.BaseURL = w.BaseURL
	return nil
}

// DecodeCursorEntry decodes one later line of a cursor response.
func (jsonCodec) DecodeCursorEntry(line []byte, e *codec.CursorEntry) (err error) {
	defer recoverDecode(&err)
	e.Reset()
	if err := precheck(line); err != nil {
		return err
	}
	return decodeEntry(line, e)
}

// decodeEntry decodes the cursor entry object raw (the whole input, which
// precheck has accepted, or a part of it) into e, which it resets first.
func decodeEntry(raw []byte, e *codec.CursorEntry) error {
	e.Reset()
	// The library checks the syntax of the whole entry and the JSON type
	// of every "type" member; the members are then taken in order.
	var w struct {
		Type string `json:"type"`
	}
	if err := unmarshal(raw, &w); err != nil {
		return libError(err)
	}
	typ := codec.EntryUnknown
	var last [codec.NumEntryMembers][]byte
	var done [codec.NumEntryMembers]bool // the last occurrence is decoded into e
	err := members(raw, func(name string, value []byte) error {
		if name == "type" {
			s, _, _ := stringOrNull(value)
			typ = codec.ParseEntryType(s)
			return nil
		}
		m, ok := codec.ParseEntryMember(name)
		if !ok {
			return nil
		}
		if typ.Members().Has(m) {
			if err := entryMember(e, m, value); err != nil {
				return err
			}
			last[m], done[m] = value, true // decoded into e
		} else {
			last[m], done[m] = value, false
		}
		return nil
	})
	if err != nil {
		return asDecodeError(err)
	}
	// Keep the members of the final type, from their last occurrence.
	keepCols, keepRow := e.Cols[:0], e.Row[:0]
	final := codec.CursorEntry{Type: typ, Cols: keepCols, Row: keepRow}
	members := typ.Members()
	for m := range codec.NumEntryMembers {
		if !members.Has(m) || last[m] == nil {
			continue
		}
		if done[m] {
			copyEntryMember(&final, e, m)
			continue
		}
		if err := entryMember(&final, m, last[m]); err != nil {
			return err
		}
	}
	*e = final
	return nil
}

// entryMember decodes member m of a cursor entry into e.
func entryMember(e *codec.CursorEntry, m codec.EntryMember, raw []byte) error {
	var err error
	switch m {
	case codec.MemberStep:
		e.Step, err = parseUint32(raw)
	case codec.MemberCols:
		e.Cols = e.Cols[:0]
		if !isNull(raw) {
			var cols []colD
			if err = unmarshal(raw, &cols); err == nil {
				for _, c := range cols {
					e.Cols = append(e.Cols, codec.Col(c))
				}
			}
		}
	case codec.MemberRow:
		e.Row = e.Row[:0]
		if !isNull(raw) {
			var row rowD
			if err = row.UnmarshalJSON(raw); err == nil {
				e.Row = append(e.Row, row...)
			}
		}
	case codec.MemberAffectedRowCount:
		e.AffectedRowCount, _, err = parseUint(raw)
	case codec.MemberLastInsertRowID:
		e.LastInsertRowID, e.HasLastInsertRowID, err = parseInt(raw)
	case codec.MemberError:
		e.Error = codec.Error{}
		if !isNull(raw) {
			err = (*errorD)(&e.Error).UnmarshalJSON(raw)
		}
	case codec.MemberReplicationIndex:
		e.ReplicationIndex, e.HasReplicationIndex, err = parseUint(raw)
	}
	if err != nil {
		return decodeErr(m.String(), err)
	}
	return nil
}

// copyEntryMember copies member m from src to dst.
func copyEntryMember(dst, src *codec.CursorEntry, m codec.EntryMember) {
	switch m {
	case codec.MemberStep:
		dst.Step = src.Step
	case codec.MemberCols:
		dst.Cols = src.Cols
	case codec.MemberRow:
		dst.Row = src.Row
	case codec.MemberAffectedRowCount:
		dst.AffectedRowCount = src.AffectedRowCount
	case codec.MemberLastInsertRowID:
		dst.LastInsertRowID, dst.HasLastInsertRowID = src.LastInsertRowID, src.HasLastInsertRowID
	case codec.MemberError:
		dst.Error = src.Error
	case codec.MemberReplicationIndex:
		dst.ReplicationIndex, dst.HasReplicationIndex = src.ReplicationIndex, src.HasReplicationIndex
	}
}

// asDecodeError wraps err unless it already is a *codec.DecodeError.
func asDecodeError(err error) error {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		return err
	}
	return decodeErr("invalid cursor entry", err)
}

// DecodeError decodes an HTTP error body, {"message":...,"code":...} or
// {"error":...}. "message" takes precedence over "error".
func (jsonCodec) DecodeError(data []byte, e *codec.Error) (err error) {
	defer recoverDecode(&err)
	*e = codec.Error{}
	var w httpErrorW
	if err := decodeTop(data, &w); err != nil {
		return err
	}
	switch {
	case w.Message != nil:
		e.Message = *w.Message
	case w.Error != nil:
		e.Message = *w.Error
	}
	e.Code = w.Code
	return nil
}

// --- conversion from the checked wire types; it cannot fail ---

// setStreamResult fills dst, whose slices may hold capacity to reuse.
func setStreamResult(dst *codec.StreamResult, w *streamResultD) {
	if !w.ok {
		*dst = codec.StreamResult{Error: w.err}
		return
	}
	// A StreamResponse's members are among a SocketResponse's: fill one
	// that holds dst's slices, then take them back.
	old := &dst.Response
	sr := codec.SocketResponse{Result: old.Result, Batch: old.Batch, Describe: old.Describe}
	setResponse(&sr, &w.resp)
	*dst = codec.StreamResult{OK: true, Response: codec.StreamResponse{Type: codec.RequestType(w.resp.typ),
		Result: sr.Result, Batch: sr.Batch, Describe: sr.Describe, IsAutocommit: sr.IsAutocommit}}
}

func appendCols(dst []codec.Col, cols []colD) []codec.Col {
	for _, c := range cols {
		dst = append(dst, codec.Col(c))
	}
	return dst
}

// setStmtResult fills dst, whose slices may hold capacity to reuse.
func setStmtResult(dst *codec.StmtResult, w *stmtResultD) {
	cols := appendCols(dst.Cols[:0], w.Cols)
	vals := dst.Values[:0]
	for _, row := range w.Rows {
		vals = append(vals, row...)
	}
	*dst = codec.StmtResult{
		Cols:                cols,
		Values:              vals,
		NumRows:             len(w.Rows),
		AffectedRowCount:    w.AffectedRowCount.v,
		LastInsertRowID:     w.LastInsertRowID.v,
		HasLastInsertRowID:  w.LastInsertRowID.set,
		ReplicationIndex:    w.ReplicationIndex.v,
		HasReplicationIndex: w.ReplicationIndex.set,
		RowsRead:            w.RowsRead.v,
		RowsWritten:         w.RowsWritten.v,
		QueryDurationMS:     w.QueryDurationMS.v,
	}
}

func setBatchResult(dst *codec.BatchResult, steps []codec.StepOutcome, w *batchResultD) {
	n := max(len(w.StepResults), len(w.StepErrors))
	for i := 0; i < n; i++ {
		var old codec.StepOutcome
		if i < cap(steps) {
			old = steps[:i+1][i]
		}
		out := codec.StepOutcome{Result: codec.StmtResult{Cols: old.Result.Cols[:0], Values: old.Result.Values[:0]}}
		switch {
		case i < len(w.StepResults) && w.StepResults[i] != nil:
			out.Status = codec.StepOK
			setStmtResult(&out.Result, w.StepResults[i])
		case i < len(w.StepErrors) && w.StepErrors[i] != nil:
			out.Status = codec.StepFailed
			out.Error = codec.Error(*w.StepErrors[i])
		default:
			out.Status = codec.StepSkipped
		}
		steps = append(steps, out)
	}
	*dst = codec.BatchResult{Steps: steps, ReplicationIndex: w.ReplicationIndex.v, HasReplicationIndex: w.ReplicationIndex.set}
}

// convertValue applies the Value rules of the codec package to the last
// occurrence of each member of a value object.
func convertValue(typ string, value, b64 []byte) (codec.Value, error) {
	switch typ {
	case "null":
		return codec.Value{}, nil
	case "integer":
		if isNull(value) {
			return codec.Value{}, errors.New(`integer value without "value"`)
		}
		v, _, err := parseInt(value)
		if err != nil {
			return codec.Value{}, err
		}
		return codec.IntValue(v), nil
	case "float":
		switch {
		case len(value) == 0:
			return codec.Value{}, errors.New(`float value without "value"`)
		case isNull(value):
			return codec.FloatValue(math.NaN()), nil
		case !isNumber(value):
			return codec.Value{}, errWrongType("a number", value)
		}
		f, err := strconv.ParseFloat(string(value), 64)
		if err != nil {
			return codec.Value{}, err
		}
		return codec.FloatValue(f), nil
	case "text":
		s, err := neededString(value, `text value without "value"`)
		if err != nil {
			return codec.Value{}, err
		}
		// value may be scratch memory: the text is copied.
		return codec.TextValue(append([]byte{}, s...)), nil
	case "blob":
		s, err := neededString(b64, `blob value without "base64"`)
		if err != nil {
			return codec.Value{}, err
		}
		b, err := decodeBase64(s)
		if err != nil {
			return codec.Value{}, err
		}
		return codec.BlobValue(b), nil
	case "":
		return codec.Value{}, errors.New(`value without "type"`)
	}
	return codec.Value{}, errors.New("unknown value type " + strconv.Quote(typ))
}

// neededString returns the content of raw, the string member that a value
// of its type needs; absent or null, it is the error missing.
func neededString(raw []byte, missing string) ([]byte, error) {
	if isNull(raw) {
		return nil, errors.New(missing)
	}
	return unquote(raw)
}

// decodeBase64 decodes a blob payload under the codec package's base64
// rules (codec.TrimBase64, codec.Base64).
func decodeBase64(s []byte) ([]byte, error) {
	s, err := codec.TrimBase64(s)
	if err != nil {
		return nil, err
	}
	out := make([]byte, codec.Base64.DecodedLen(len(s)))
	n, err := codec.Base64.Decode(out, s)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}
