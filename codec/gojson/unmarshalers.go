package gojson

// Deliberately independent of codec/direct: the differential tests (codec/codectest) compare them.

// This file: the types, with their JSON tags, that the library unmarshals
// pipeline responses, cursor lines and error bodies into; those of
// objects with rules of their own check what they decoded in their
// UnmarshalJSON. (The request types are in encode.go, the server messages
// in ws.go.)

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/goccy/go-json/jsontext"

	"github.com/gohrana/libsql/codec"
)

// Repeated keys. The last occurrence of a key wins, but every occurrence
// is decoded and checked when it is read, as a streaming decoder does (and
// as codec/direct does): the wire types below check themselves in their
// UnmarshalJSON methods, which the library calls once per occurrence. A
// member whose meaning depends on a "type" member of the same object (the
// response and error of a stream result, the result of a stream response,
// the members of a cursor entry) is checked when it is read only if the type
// read so far gives it a meaning; the last occurrence of the members that
// the final type uses is then decoded. Those objects are walked member by
// member in order with the library's jsontext decoder. Value objects are
// interpreted from the last occurrence of each member alone.

type pipelineRespW struct {
	Baton   string          `json:"baton"`
	BaseURL string          `json:"base_url"`
	Results []streamResultD `json:"results"`
}

type cursorHeaderW struct {
	Baton   string `json:"baton"`
	BaseURL string `json:"base_url"`
}

type httpErrorW struct {
	Message *string `json:"message"`
	Code    string  `json:"code"`
	Error   *string `json:"error"`
}

// rowD is a row: an array of value objects. It is read token by token
// with the library's jsontext decoder, which is much cheaper than a
// decoding call per value.
type rowD []codec.Value

// UnmarshalJSON implements the library's Unmarshaler.
func (r *rowD) UnmarshalJSON(raw []byte) error {
	*r = nil
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), decodeOptions)
	row, err := readRow(dec, nil, new(valueScratch))
	*r = row
	return err
}

// rowsD is the "rows" of a statement result; null is no rows.
type rowsD [][]codec.Value

// UnmarshalJSON implements the library's Unmarshaler.
func (rs *rowsD) UnmarshalJSON(raw []byte) error {
	*rs = nil
	if isNull(raw) {
		return nil
	}
	if !isArray(raw) {
		return errWrongType("an array of rows", raw)
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), decodeOptions)
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var rows [][]codec.Value
	var vals []codec.Value // one backing array for all the rows
	scratch := new(valueScratch)
	for dec.PeekKind() != ']' {
		start := len(vals)
		var err error
		if vals, err = readRow(dec, vals, scratch); err != nil {
			return err
		}
		rows = append(rows, vals[start:len(vals):len(vals)])
	}
	*rs = rows
	return nil
}

// valueScratch holds the members of the value object being read.
type valueScratch struct {
	value, base64 []byte
}

// readRow appends the values of the row that dec is at to dst.
func readRow(dec *jsontext.Decoder, dst []codec.Value, scratch *valueScratch) ([]codec.Value, error) {
	if k := dec.PeekKind(); k != '[' {
		return dst, errors.New("want an array of values, have " + kindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return dst, err
	}
	for dec.PeekKind() != ']' {
		v, err := readValue(dec, scratch)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
	}
	_, err := dec.ReadToken()
	return dst, err
}

// readValue reads the value object that dec is at. For each member the
// last occurrence counts; "type" must be a string or null in each.
func readValue(dec *jsontext.Decoder, scratch *valueScratch) (codec.Value, error) {
	if k := dec.PeekKind(); k != '{' {
		return codec.Value{}, errors.New("want a value object, have " + kindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return codec.Value{}, err
	}
	typ := ""
	value, b64 := scratch.value[:0], scratch.base64[:0]
	hasValue, hasB64 := false, false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return codec.Value{}, err
		}
		name := tok.String()
		raw, err := dec.ReadValue()
		if err != nil {
			return codec.Value{}, err
		}
		switch name {
		case "type":
			s, _, err := stringOrNull(raw)
			if err != nil {
				return codec.Value{}, fmt.Errorf("type: %w", err)
			}
			typ = s
		case "value":
			value, hasValue = append(value[:0], raw...), true
		case "base64":
			b64, hasB64 = append(b64[:0], raw...), true
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return codec.Value{}, err
	}
	scratch.value, scratch.base64 = value, b64
	if !hasValue {
		value = nil
	}
	if !hasB64 {
		b64 = nil
	}
	return convertValue(typ, value, b64)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '0':
		return "a number"
	}
	return "nothing"
}

// colD is a column object.
type colD codec.Col

// UnmarshalJSON implements the library's Unmarshaler.
func (c *colD) UnmarshalJSON(raw []byte) error {
	if !isObject(raw) {
		return errWrongType("a column object", raw)
	}
	var w struct {
		Name     string `json:"name"`
		Decltype string `json:"decltype"`
	}
	if err := unmarshal(raw, &w); err != nil {
		return err
	}
	*c = colD{Name: w.Name, Decltype: w.Decltype}
	return nil
}

// paramD is a describe parameter object.
type paramD codec.DescribeParam

// UnmarshalJSON implements the library's Unmarshaler.
func (p *paramD) UnmarshalJSON(raw []byte) error {
	if !isObject(raw) {
		return errWrongType("a parameter object", raw)
	}
	var w struct {
		Name string `json:"name"`
	}
	if err := unmarshal(raw, &w); err != nil {
		return err
	}
	*p = paramD{Name: w.Name}
	return nil
}

// errorD is an Error object.
type errorD codec.Error

// UnmarshalJSON implements the library's Unmarshaler.
func (e *errorD) UnmarshalJSON(raw []byte) error {
	if !isObject(raw) {
		return errWrongType("an error object", raw)
	}
	var w struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	}
	if err := unmarshal(raw, &w); err != nil {
		return err
	}
	*e = errorD{Message: w.Message, Code: w.Code}
	return nil
}

// stmtResultD is a StmtResult object; its rows are checked against its
// columns once the whole object is read.
type stmtResultD struct {
	Cols             []colD           `json:"cols"`
	Rows             rowsD            `json:"rows"`
	AffectedRowCount integerW[uint64] `json:"affected_row_count"`
	LastInsertRowID  integerW[int64]  `json:"last_insert_rowid"`
	ReplicationIndex integerW[uint64] `json:"replication_index"`
	RowsRead         integerW[uint64] `json:"rows_read"`
	RowsWritten      integerW[uint64] `json:"rows_written"`
	QueryDurationMS  floatW           `json:"query_duration_ms"`
}

// UnmarshalJSON implements the library's Unmarshaler.
func (s *stmtResultD) UnmarshalJSON(raw []byte) error {
	*s = stmtResultD{}
	if !isObject(raw) {
		return errWrongType("a statement result object", raw)
	}
	type plain stmtResultD
	if err := unmarshal(raw, (*plain)(s)); err != nil {
		return err
	}
	for i, row := range s.Rows {
		if len(row) != len(s.Cols) {
			return fmt.Errorf("row %d has %d values for %d columns", i, len(row), len(s.Cols))
		}
	}
	return nil
}

// batchResultD is a BatchResult object; a step with both a result and an
// error is rejected once the whole object is read.
type batchResultD struct {
	StepResults      []*stmtResultD   `json:"step_results"`
	StepErrors       []*errorD        `json:"step_errors"`
	ReplicationIndex integerW[uint64] `json:"replication_index"`
}

// UnmarshalJSON implements the library's Unmarshaler.
func (b *batchResultD) UnmarshalJSON(raw []byte) error {
	*b = batchResultD{}
	if !isObject(raw) {
		return errWrongType("a batch result object", raw)
	}
	type plain batchResultD
	if err := unmarshal(raw, (*plain)(b)); err != nil {
		return err
	}
	for i := 0; i < len(b.StepResults) && i < len(b.StepErrors); i++ {
		if b.StepResults[i] != nil && b.StepErrors[i] != nil {
			return fmt.Errorf("batch step %d has both a result and an error", i)
		}
	}
	return nil
}

// describeD is a DescribeResult object.
type describeD struct {
	Params     []paramD `json:"params"`
	Cols       []colD   `json:"cols"`
	IsExplain  bool     `json:"is_explain"`
	IsReadonly bool     `json:"is_readonly"`
}

// UnmarshalJSON implements the library's Unmarshaler.
func (d *describeD) UnmarshalJSON(raw []byte) error {
	*d = describeD{}
	if !isObject(raw) {
		return errWrongType("a describe result object", raw)
	}
	type plain describeD
	return unmarshal(raw, (*plain)(d))
}

// streamResultD is an element of "results".
type streamResultD struct {
	ok   bool
	resp responseD   // when ok
	err  codec.Error // when !ok
}

// UnmarshalJSON implements the library's Unmarshaler.
func (r *streamResultD) UnmarshalJSON(raw []byte) error {
	*r = streamResultD{}
	if !isObject(raw) {
		return errWrongType("a stream result object", raw)
	}
	const (
		typeNone = iota
		typeOK
		typeError
		typeOther
	)
	typ := typeNone
	var resp, errm objMember
	decodeResp := func(raw []byte) error { return r.resp.decode(raw, streamType) }
	decodeErr := func(raw []byte) error { return (*errorD)(&r.err).UnmarshalJSON(raw) }
	err := members(raw, func(name string, value []byte) error {
		switch name {
		case "type":
			s, present, err := stringOrNull(value)
			switch {
			case err != nil:
				return fmt.Errorf("type: %w", err)
			case !present:
				typ = typeNone
			case s == "ok":
				typ = typeOK
			case s == "error":
				typ = typeError
			default:
				typ = typeOther
			}
		case "response":
			return resp.read(value, typ == typeOK, "response", decodeResp)
		case "error":
			return errm.read(value, typ == typeError, "error", decodeErr)
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch typ {
	case typeOK:
		if err := resp.settle("response", `stream result of type "ok"`, decodeResp); err != nil {
			return err
		}
		r.ok, r.err = true, codec.Error{}
	case typeError:
		if err := errm.settle("error", `stream result of type "error"`, decodeErr); err != nil {
			return err
		}
		r.ok, r.resp = false, responseD{}
	case typeNone:
		return errors.New(`stream result without "type"`)
	default:
		return errors.New("unknown stream result type")
	}
	return nil
}

// streamType is the typeParser of stream responses.
func streamType(name string) (uint8, codec.SocketRequestType) {
	t := codec.ParseRequestType([]byte(name))
	return uint8(t), t.SocketType()
}
