package direct

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// This file maps the Hrana JSON messages onto the codec types, following
// the decoding rules of the codec package.
//
// Fields whose meaning depends on a "type" member (the "response" and
// "error" of a stream result, the "result" of a stream response, the
// members of a cursor entry, the payload of a value) may come before that
// "type". When the type is already known the field is decoded in place;
// otherwise its span is recorded (after a validating skip) and decoded
// once the object's closing brace has been read and the final type is
// known. Repeated keys: the last one wins.

var rawStrict = base64.RawStdEncoding.Strict()

func nilDest() error {
	return &codec.DecodeError{Codec: Name, Offset: -1, Msg: "nil destination"}
}

// DecodePipelineResponse decodes a pipeline response body into resp.
func (jsonCodec) DecodePipelineResponse(data []byte, resp *codec.PipelineResponse) error {
	if resp == nil {
		return nilDest()
	}
	oldBaton, oldURL := resp.Baton, resp.BaseURL
	resp.Reset()
	d := newDecoder(data)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "baton":
			resp.Baton, err = d.readGoString("baton", oldBaton, false)
		case "base_url":
			resp.BaseURL, err = d.readGoString("base_url", oldURL, true)
		case "results":
			err = d.results(&resp.Results)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	return d.finish()
}

// DecodeCursorHeader decodes the first line of a cursor response.
func (jsonCodec) DecodeCursorHeader(line []byte, h *codec.CursorHeader) error {
	if h == nil {
		return nilDest()
	}
	old := *h
	*h = codec.CursorHeader{}
	d := newDecoder(line)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "baton":
			h.Baton, err = d.readGoString("baton", old.Baton, false)
		case "base_url":
			h.BaseURL, err = d.readGoString("base_url", old.BaseURL, true)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	return d.finish()
}

// DecodeError decodes an HTTP error body: {"message":...,"code":...} or
// {"error":...}. When both "message" and "error" are present (not null),
// "message" wins; "code" is used whenever present. An object with neither
// decodes as an empty Error.
func (jsonCodec) DecodeError(data []byte, e *codec.Error) error {
	if e == nil {
		return nilDest()
	}
	old := *e
	*e = codec.Error{}
	d := newDecoder(data)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	var msg, errMsg string
	var hasMsg, hasErr bool
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "message":
			var b []byte
			b, hasMsg, err = d.readString("message")
			if err == nil && hasMsg {
				msg = d.st.str(b, old.Message, false)
			}
		case "error":
			var b []byte
			b, hasErr, err = d.readString("error")
			if err == nil && hasErr {
				errMsg = d.st.str(b, old.Message, false)
			}
		case "code":
			e.Code, err = d.readGoString("code", old.Code, true)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	switch {
	case hasMsg:
		e.Message = msg
	case hasErr:
		e.Message = errMsg
	}
	return d.finish()
}

// ---- scalar fields ----

// readString reads a string or null at d.pos. The bytes point into the
// input or, for strings with escapes, into scratch memory valid until the
// next use of scratch. present is false for null.
func (d *decoder) readString(field string) (b []byte, present bool, err error) {
	switch d.data[d.pos] {
	case '"':
		start := d.pos
		esc, err := d.scanString()
		if err != nil {
			return nil, false, err
		}
		return d.rawString(span{start: start, end: d.pos, esc: esc}), true, nil
	case 'n':
		return nil, false, d.literal("null")
	}
	return nil, false, d.typeErr(field, "a string or null")
}

// readGoString reads a string or null as a Go string ("" for null). old is
// the string previously in the destination field, reused when equal.
func (d *decoder) readGoString(field, old string, intern bool) (string, error) {
	b, present, err := d.readString(field)
	if err != nil || !present {
		return "", err
	}
	return d.st.str(b, old, intern), nil
}

// readIntText reads the text of an integer field: the inside of a string
// (unescaped), or a JSON number without fraction or exponent. present is
// false for null.
func (d *decoder) readIntText(field, want string) (lit []byte, present bool, err error) {
	start := d.pos
	switch c := d.data[start]; {
	case c == '"':
		return d.readString(field)
	case c == 'n':
		return nil, false, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		isInt, err := d.scanNumber()
		if err != nil {
			return nil, false, err
		}
		if !isInt {
			return nil, false, fieldErr(start, field, "expected an integer, got a number with a fraction or exponent")
		}
		return d.data[start:d.pos], true, nil
	}
	return nil, false, d.typeErr(field, want)
}

// readUint reads an unsigned integer field: a JSON integer literal without
// a minus sign, a string accepted by strconv.ParseUint(s, 10, 64) (so
// leading zeros are allowed in strings), or null (present == false). The
// value must not exceed max.
func (d *decoder) readUint(field string, max uint64) (uint64, bool, error) {
	start := d.pos
	lit, present, err := d.readIntText(field, "an unsigned integer (number or string)")
	if err != nil || !present {
		return 0, false, err
	}
	v, ok := parseDigits(lit, max)
	if !ok {
		return 0, false, fieldErr(start, field, "not an unsigned integer in range")
	}
	return v, true, nil
}

// readInt reads an int64 field: a JSON integer literal ("-0" is 0), a
// string accepted by strconv.ParseInt(s, 10, 64) ("+5" and "007" too), or
// null (present == false).
func (d *decoder) readInt(field string) (int64, bool, error) {
	start := d.pos
	lit, present, err := d.readIntText(field, "an integer (number or string)")
	if err != nil || !present {
		return 0, false, err
	}
	v, ok := parseIntStrconv(lit)
	if !ok {
		return 0, false, fieldErr(start, field, "not a 64-bit integer")
	}
	return v, true, nil
}

// readFloat reads a JSON number, or null as 0.
func (d *decoder) readFloat(field string) (float64, error) {
	start := d.pos
	switch c := d.data[start]; {
	case c == 'n':
		return 0, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		if _, err := d.scanNumber(); err != nil {
			return 0, err
		}
		f, err := strconv.ParseFloat(string(d.data[start:d.pos]), 64)
		if err != nil {
			return 0, &codec.DecodeError{Codec: Name, Offset: start, Msg: "field \"" + field + "\": number out of range", Err: err}
		}
		return f, nil
	}
	return 0, d.typeErr(field, "a number")
}

// readBool reads true, false or null (false).
func (d *decoder) readBool(field string) (bool, error) {
	switch d.data[d.pos] {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.typeErr(field, "a boolean")
}

// parseDigits parses a non-empty run of decimal digits not above max, as
// strconv.ParseUint(s, 10, 64) does (plus the bound).
func parseDigits(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n := uint64(c - '0')
		if v > (max-n)/10 {
			return 0, false
		}
		v = v*10 + n
	}
	return v, true
}

// parseIntStrconv parses b as strconv.ParseInt(b, 10, 64) does: an optional
// sign, then decimal digits (leading zeros allowed).
func parseIntStrconv(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	return signed(b, neg)
}

func signed(digits []byte, neg bool) (int64, bool) {
	max := uint64(math.MaxInt64)
	if neg {
		max++
	}
	u, ok := parseDigits(digits, max)
	if !ok {
		return 0, false
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

// ---- values ----

// value decodes a Hrana value object at d.pos into v.
func (d *decoder) value(v *codec.Value) error {
	if d.fastValue(v) {
		return nil
	}
	if d.data[d.pos] != '{' {
		return errAt(d.pos, "value: expected an object, got "+jsonKind(d.data[d.pos]))
	}
	objStart := d.pos
	if err := d.open(); err != nil {
		return err
	}
	var typ, val, b64 span
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		sp, err := d.skipValue()
		if err != nil {
			return err
		}
		switch string(key) {
		case "type":
			typ = sp
		case "value":
			val = sp
		case "base64":
			b64 = sp
		}
	}
	switch typ.kind {
	case kindString:
	case kindNone, kindNull:
		return errAt(objStart, "value without \"type\"")
	default:
		return errAt(typ.start, "value: field \"type\": expected a string, got "+jsonKind(d.data[typ.start]))
	}
	switch string(d.rawString(typ)) {
	case "null":
		*v = codec.Value{}
	case "integer":
		var i int64
		var ok bool
		switch val.kind {
		case kindString:
			i, ok = parseIntStrconv(d.rawString(val))
		case kindNumber:
			if !val.isInt {
				return errAt(val.start, "integer value: expected an integer, got a number with a fraction or exponent")
			}
			i, ok = parseIntStrconv(d.data[val.start:val.end])
		case kindNone, kindNull:
			return errAt(objStart, "integer value without \"value\"")
		default:
			return errAt(val.start, "integer value: expected a string or number, got "+jsonKind(d.data[val.start]))
		}
		if !ok {
			return errAt(val.start, "integer value: not a 64-bit integer")
		}
		*v = codec.Value{Type: codec.Integer, Int: i}
	case "float":
		f := math.Inf(1) // null: serde writes both infinities as null
		switch val.kind {
		case kindNumber:
			var err error
			f, err = strconv.ParseFloat(string(d.data[val.start:val.end]), 64)
			if err != nil {
				return &codec.DecodeError{Codec: Name, Offset: val.start, Msg: "float value: number out of range", Err: err}
			}
		case kindNull:
		case kindNone:
			return errAt(objStart, "float value without \"value\"")
		default:
			return errAt(val.start, "float value: expected a number or null, got "+jsonKind(d.data[val.start]))
		}
		*v = codec.Value{Type: codec.Float, Float: f}
	case "text":
		switch val.kind {
		case kindString:
		case kindNone, kindNull:
			return errAt(objStart, "text value without \"value\"")
		default:
			return errAt(val.start, "text value: expected a string, got "+jsonKind(d.data[val.start]))
		}
		raw := d.data[val.start+1 : val.end-1 : val.end-1]
		if val.esc {
			raw = d.commit(len(unescape(d.alloc(len(raw), val.start), raw)))
		}
		*v = codec.Value{Type: codec.Text, Bytes: raw}
	case "blob":
		switch b64.kind {
		case kindString:
		case kindNone, kindNull:
			return errAt(objStart, "blob value without \"base64\"")
		default:
			return errAt(b64.start, "blob value: expected a string, got "+jsonKind(d.data[b64.start]))
		}
		b, err := d.blob(b64)
		if err != nil {
			return err
		}
		*v = codec.Value{Type: codec.Blob, Bytes: b}
	default:
		return errAt(typ.start, "unknown value type")
	}
	return nil
}

// fastValue decodes the value object at d.pos when it is written exactly
// as the server writes it: {"type":"null"}, {"type":"integer","value":"N"},
// {"type":"float","value":F}, {"type":"text","value":"S"} or
// {"type":"blob","base64":"B"}, with no whitespace. For anything else,
// including every invalid input, it returns false with d.pos unchanged and
// the general path decides; on such input both give the same result.
func (d *decoder) fastValue(v *codec.Value) bool {
	const (
		pre     = `{"type":"`
		null    = `null"}`
		integer = `integer","value":"`
		float   = `float","value":`
		text    = `text","value":"`
		blob    = `blob","base64":"`
	)
	data, start := d.data, d.pos
	if len(data)-start < len(pre)+len(null) || string(data[start:start+len(pre)]) != pre || d.depth >= codec.MaxDepth {
		return false
	}
	p := start + len(pre)
	rest := data[p:]
	switch rest[0] {
	case 'n':
		if string(rest[:len(null)]) == null {
			*v = codec.Value{}
			d.pos = p + len(null)
			return true
		}
	case 'i':
		if len(rest) < len(integer) || string(rest[:len(integer)]) != integer {
			return false
		}
		q := p + len(integer)
		e := q
		for e < len(data) && data[e] != '"' && data[e] != '\\' {
			e++
		}
		if e+1 >= len(data) || data[e] != '"' || data[e+1] != '}' {
			return false
		}
		i, ok := parseIntStrconv(data[q:e])
		if !ok {
			return false
		}
		*v = codec.Value{Type: codec.Integer, Int: i}
		d.pos = e + 2
		return true
	case 'f':
		if len(rest) < len(float)+1 || string(rest[:len(float)]) != float {
			return false
		}
		q := p + len(float)
		f := math.Inf(1)
		if data[q] == 'n' {
			if len(data)-q < 5 || string(data[q:q+5]) != "null}" {
				return false
			}
			d.pos = q + 5
		} else {
			d.pos = q
			if _, err := d.scanNumber(); err != nil || d.pos >= len(data) || data[d.pos] != '}' {
				d.pos = start
				return false
			}
			var err error
			if f, err = strconv.ParseFloat(string(data[q:d.pos]), 64); err != nil {
				d.pos = start
				return false
			}
			d.pos++
		}
		*v = codec.Value{Type: codec.Float, Float: f}
		return true
	case 't':
		if len(rest) < len(text) || string(rest[:len(text)]) != text {
			return false
		}
		q := p + len(text) - 1 // the opening quote
		d.pos = q
		esc, err := d.scanString()
		if err != nil || d.pos >= len(data) || data[d.pos] != '}' {
			d.pos = start
			return false
		}
		raw := data[q+1 : d.pos-1 : d.pos-1]
		if esc {
			raw = d.commit(len(unescape(d.alloc(len(raw), q), raw)))
		}
		*v = codec.Value{Type: codec.Text, Bytes: raw}
		d.pos++
		return true
	case 'b':
		if len(rest) < len(blob) || string(rest[:len(blob)]) != blob {
			return false
		}
		q := p + len(blob) - 1
		d.pos = q
		esc, err := d.scanString()
		if err != nil || d.pos >= len(data) || data[d.pos] != '}' {
			d.pos = start
			return false
		}
		b, err := d.blob(span{start: q, end: d.pos, kind: kindString, esc: esc})
		if err != nil {
			d.pos = start
			return false
		}
		*v = codec.Value{Type: codec.Blob, Bytes: b}
		d.pos++
		return true
	}
	return false
}

// blob decodes the base64 string span sp into arena memory.
func (d *decoder) blob(sp span) ([]byte, error) {
	src := d.rawString(sp)
	if len(src) == 0 {
		return d.data[sp.start+1 : sp.start+1 : sp.start+1], nil
	}
	if n := len(src); src[n-1] == '=' {
		pad := 1
		if n >= 2 && src[n-2] == '=' {
			pad = 2
		}
		if n%4 != 0 || n > pad && src[n-pad-1] == '=' {
			return nil, errAt(sp.start, "blob value: invalid base64 padding")
		}
		src = src[:n-pad]
	}
	if bytes.IndexByte(src, '\n') >= 0 || bytes.IndexByte(src, '\r') >= 0 {
		return nil, errAt(sp.start, "blob value: line break in base64")
	}
	n := rawStrict.DecodedLen(len(src))
	buf := d.alloc(n, sp.start)[:n]
	m, err := rawStrict.Decode(buf, src)
	if err != nil {
		return nil, &codec.DecodeError{Codec: Name, Offset: sp.start, Msg: "blob value: invalid base64", Err: err}
	}
	return d.commit(m), nil
}

// The array loops of row, cols, results and the rest are written out per
// element type on purpose: one generic helper taking the element decoder as
// a function value made every decode allocate, since escape analysis cannot
// see through the indirect call.

// row decodes an array (or null) of values into *dst, reusing its capacity.
func (d *decoder) row(dst *[]codec.Value, field string) error {
	vals := (*dst)[:0]
	*dst = vals
	switch d.data[d.pos] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.typeErr(field, "an array of values")
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			*dst = vals
			return err
		}
		i := len(vals)
		if i < cap(vals) {
			vals = vals[:i+1]
		} else {
			vals = append(vals, codec.Value{})
		}
		if err := d.value(&vals[i]); err != nil {
			*dst = vals
			return err
		}
	}
}

// ---- columns, errors ----

// cols decodes an array (or null) of columns into *dst, reusing its
// capacity and the strings already in it.
func (d *decoder) cols(dst *[]codec.Col, field string) error {
	cols := (*dst)[:0]
	*dst = cols
	switch d.data[d.pos] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.typeErr(field, "an array of columns")
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			*dst = cols
			return err
		}
		i := len(cols)
		if i < cap(cols) {
			cols = cols[:i+1]
		} else {
			cols = append(cols, codec.Col{})
		}
		if err := d.col(&cols[i]); err != nil {
			*dst = cols
			return err
		}
	}
}

// col decodes one column object; *c holds the previous strings to reuse.
func (d *decoder) col(c *codec.Col) error {
	if d.data[d.pos] != '{' {
		return d.typeErr("cols", "column objects")
	}
	old := *c
	*c = codec.Col{}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "name":
			c.Name, err = d.readGoString("name", old.Name, true)
		case "decltype":
			c.Decltype, err = d.readGoString("decltype", old.Decltype, true)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// errorObj decodes a Hrana error object; old holds the previous strings to
// reuse.
func (d *decoder) errorObj(e *codec.Error, old codec.Error, field string) error {
	if d.data[d.pos] != '{' {
		return d.typeErr(field, "an error object")
	}
	*e = codec.Error{}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "message":
			e.Message, err = d.readGoString("message", old.Message, false)
		case "code":
			e.Code, err = d.readGoString("code", old.Code, true)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// ---- pipeline results ----

func resetStmtResult(r *codec.StmtResult) {
	*r = codec.StmtResult{Cols: r.Cols[:0], Values: r.Values[:0]}
}

func resetStreamResponse(r *codec.StreamResponse) {
	resetStmtResult(&r.Result)
	*r = codec.StreamResponse{
		Result:   r.Result,
		Batch:    codec.BatchResult{Steps: r.Batch.Steps[:0]},
		Describe: codec.DescribeResult{Params: r.Describe.Params[:0], Cols: r.Describe.Cols[:0]},
	}
}

// results decodes the "results" array (or null) into *dst.
func (d *decoder) results(dst *[]codec.StreamResult) error {
	rs := (*dst)[:0]
	*dst = rs
	switch d.data[d.pos] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.typeErr("results", "an array")
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			*dst = rs
			return err
		}
		i := len(rs)
		if i < cap(rs) {
			rs = rs[:i+1]
		} else {
			rs = append(rs, codec.StreamResult{})
		}
		if err := d.streamResult(&rs[i]); err != nil {
			*dst = rs
			return err
		}
	}
}

// streamResult decodes {"type":"ok","response":...} or
// {"type":"error","error":...}.
func (d *decoder) streamResult(r *codec.StreamResult) error {
	if d.data[d.pos] != '{' {
		return d.typeErr("results", "stream result objects")
	}
	objStart := d.pos
	oldErr := r.Error
	r.OK = false
	r.Error = codec.Error{}
	resetStreamResponse(&r.Response)
	if err := d.open(); err != nil {
		return err
	}
	const (
		typeNone = iota
		typeOK
		typeError
		typeOther
	)
	typ := typeNone
	var resp, errSp span
	var respDone, errDone bool
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
			var present bool
			b, present, err = d.readString("type")
			switch {
			case !present:
				typ = typeNone
			case string(b) == "ok":
				typ = typeOK
			case string(b) == "error":
				typ = typeError
			default:
				typ = typeOther
			}
		case "response":
			if typ == typeOK && d.data[d.pos] == '{' {
				resp = span{start: d.pos, depth: d.depth, kind: kindObject}
				respDone = true
				err = d.streamResponse(&r.Response)
			} else {
				respDone = false
				resp, err = d.skipValue()
			}
		case "error":
			if typ == typeError && d.data[d.pos] == '{' {
				errSp = span{start: d.pos, depth: d.depth, kind: kindObject}
				errDone = true
				err = d.errorObj(&r.Error, oldErr, "error")
			} else {
				errDone = false
				errSp, err = d.skipValue()
			}
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	switch typ {
	case typeOK:
		switch resp.kind {
		case kindObject:
		case kindNone, kindNull:
			return errAt(objStart, "stream result of type \"ok\" without \"response\"")
		default:
			return errAt(resp.start, "field \"response\": expected an object, got "+jsonKind(d.data[resp.start]))
		}
		if !respDone {
			p, dp := d.seek(resp)
			err := d.streamResponse(&r.Response)
			d.restore(p, dp)
			if err != nil {
				return err
			}
		}
		r.OK = true
		r.Error = codec.Error{}
	case typeError:
		switch errSp.kind {
		case kindObject:
		case kindNone, kindNull:
			return errAt(objStart, "stream result of type \"error\" without \"error\"")
		default:
			return errAt(errSp.start, "field \"error\": expected an object, got "+jsonKind(d.data[errSp.start]))
		}
		if !errDone {
			p, dp := d.seek(errSp)
			err := d.errorObj(&r.Error, oldErr, "error")
			d.restore(p, dp)
			if err != nil {
				return err
			}
		}
		r.OK = false
		resetStreamResponse(&r.Response)
	case typeNone:
		return errAt(objStart, "stream result without \"type\"")
	default:
		return errAt(objStart, "unknown stream result type")
	}
	return nil
}

// streamResponse decodes the response object of an ok stream result.
func (d *decoder) streamResponse(r *codec.StreamResponse) error {
	objStart := d.pos
	resetStreamResponse(r)
	if err := d.open(); err != nil {
		return err
	}
	var typ codec.RequestType
	typPresent := false
	var res, auto span
	var resAs codec.RequestType // the type res was decoded as in place, if any
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
			typ = codec.ParseRequestType(b)
		case "result":
			if hasResult(typ) && d.data[d.pos] == '{' {
				res = span{start: d.pos, depth: d.depth, kind: kindObject}
				resAs = typ
				err = d.resultAs(r, typ)
			} else {
				resAs = codec.RequestUnknown
				res, err = d.skipValue()
			}
		case "is_autocommit":
			auto, err = d.skipValue()
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	if !typPresent {
		return errAt(objStart, "response without \"type\"")
	}
	if typ == codec.RequestUnknown {
		return errAt(objStart, "unknown response type")
	}
	if hasResult(typ) {
		switch res.kind {
		case kindObject:
			if resAs != typ {
				p, dp := d.seek(res)
				err := d.resultAs(r, typ)
				d.restore(p, dp)
				if err != nil {
					return err
				}
				resAs = typ
			}
		case kindNone, kindNull:
			resAs = codec.RequestUnknown
		default:
			return errAt(res.start, "field \"result\": expected an object, got "+jsonKind(d.data[res.start]))
		}
	}
	if typ == codec.RequestGetAutocommit {
		switch auto.kind {
		case kindBool:
			r.IsAutocommit = d.data[auto.start] == 't'
		case kindNone, kindNull:
		default:
			return errAt(auto.start, "field \"is_autocommit\": expected a boolean, got "+jsonKind(d.data[auto.start]))
		}
	}
	// Drop whatever an earlier, overridden "type" or "result" left behind.
	if typ != codec.RequestExecute || resAs != typ {
		resetStmtResult(&r.Result)
	}
	if typ != codec.RequestBatch || resAs != typ {
		r.Batch = codec.BatchResult{Steps: r.Batch.Steps[:0]}
	}
	if typ != codec.RequestDescribe || resAs != typ {
		r.Describe = codec.DescribeResult{Params: r.Describe.Params[:0], Cols: r.Describe.Cols[:0]}
	}
	r.Type = typ
	return nil
}

func hasResult(t codec.RequestType) bool {
	return t == codec.RequestExecute || t == codec.RequestBatch || t == codec.RequestDescribe
}

// resultAs decodes the "result" object at d.pos as the result of a request
// of type t.
func (d *decoder) resultAs(r *codec.StreamResponse, t codec.RequestType) error {
	switch t {
	case codec.RequestExecute:
		return d.stmtResult(&r.Result)
	case codec.RequestBatch:
		return d.batchResult(&r.Batch)
	default:
		return d.describeResult(&r.Describe)
	}
}

// stmtResult decodes a StmtResult object at d.pos.
func (d *decoder) stmtResult(r *codec.StmtResult) error {
	if d.data[d.pos] != '{' {
		return d.typeErr("result", "an object")
	}
	resetStmtResult(r)
	if err := d.open(); err != nil {
		return err
	}
	rowLen, firstRow, badRow := -1, -1, -1
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "cols":
			err = d.cols(&r.Cols, "cols")
		case "rows":
			r.Values, r.NumRows = r.Values[:0], 0
			rowLen, firstRow, badRow = -1, -1, -1
			err = d.rows(r, &rowLen, &firstRow, &badRow)
		case "affected_row_count":
			r.AffectedRowCount, _, err = d.readUint("affected_row_count", math.MaxUint64)
		case "last_insert_rowid":
			r.LastInsertRowID, r.HasLastInsertRowID, err = d.readInt("last_insert_rowid")
		case "replication_index":
			r.ReplicationIndex, r.HasReplicationIndex, err = d.readUint("replication_index", math.MaxUint64)
		case "rows_read":
			r.RowsRead, _, err = d.readUint("rows_read", math.MaxUint64)
		case "rows_written":
			r.RowsWritten, _, err = d.readUint("rows_written", math.MaxUint64)
		case "query_duration_ms":
			r.QueryDurationMS, err = d.readFloat("query_duration_ms")
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	if r.NumRows > 0 {
		switch {
		case badRow >= 0:
			return errAt(badRow, "rows of different lengths")
		case rowLen != len(r.Cols):
			return errAt(firstRow, "row has "+strconv.Itoa(rowLen)+" values but there are "+strconv.Itoa(len(r.Cols))+" columns")
		}
	}
	return nil
}

// rows decodes the "rows" array (or null) of a StmtResult, appending the
// values to r.Values. It records the length of the first row, its offset,
// and the offset of the first row whose length differs.
func (d *decoder) rows(r *codec.StmtResult, rowLen, firstRow, badRow *int) error {
	switch d.data[d.pos] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.typeErr("rows", "an array of rows")
	}
	if err := d.open(); err != nil {
		return err
	}
	vals := r.Values
	defer func() { r.Values = vals }()
	rowBytes := 0 // length of the first row in the input, once known
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			return err
		}
		start := d.pos
		if d.data[start] != '[' {
			return d.typeErr("rows", "arrays of values")
		}
		if err := d.open(); err != nil {
			return err
		}
		count := 0
		for m := 0; ; {
			ok, err := d.nextElem(&m)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			i := len(vals)
			if i == cap(vals) {
				vals = growValues(vals, *rowLen, rowBytes, len(d.data)-d.pos)
			}
			vals = vals[:i+1]
			if err := d.value(&vals[i]); err != nil {
				return err
			}
			count++
		}
		r.NumRows++
		switch {
		case *rowLen < 0:
			*rowLen, *firstRow = count, start
			rowBytes = d.pos - start
		case count != *rowLen && *badRow < 0:
			*badRow = start
		}
	}
}

// growValues returns vals with room for more values. Once the first row is
// known (rowValues values in rowBytes bytes of input), it sizes the slice
// for as many rows of that length as the rest of the input could hold, so a
// large result costs one or two allocations of about the right size rather
// than a chain of append's 1.25x steps, whose discarded copies add up to
// several times the final slice.
//
// The estimate gets 1/8 of slack, since rows vary in length (NULLs are
// short), and the capacity grows by at least 1.25x whatever the estimate
// says, which keeps appending amortized O(1) when the first row was
// unusually long.
func growValues(vals []codec.Value, rowValues, rowBytes, remaining int) []codec.Value {
	newCap := max(cap(vals)+cap(vals)/4, 16)
	if rowValues > 0 && rowBytes > 0 {
		rows := remaining/rowBytes + 1
		newCap = max(newCap, len(vals)+(rows+rows/8)*rowValues)
	}
	grown := make([]codec.Value, len(vals), newCap)
	copy(grown, vals)
	return grown
}

// batchResult decodes a BatchResult object at d.pos.
func (d *decoder) batchResult(b *codec.BatchResult) error {
	if d.data[d.pos] != '{' {
		return d.typeErr("result", "an object")
	}
	objStart := d.pos
	steps := b.Steps[:0]
	flags := d.st.flags[:0]
	*b = codec.BatchResult{}
	defer func() {
		b.Steps = steps
		d.st.flags = flags
	}()
	if err := d.open(); err != nil {
		return err
	}
	nres, nerr := 0, 0
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "step_results", "step_errors":
			bit := uint8(1)
			if string(key) == "step_errors" {
				bit = 2
			}
			var count int
			steps, flags, count, err = d.stepArray(steps, flags, bit)
			if bit == 1 {
				nres = count
			} else {
				nerr = count
			}
		case "replication_index":
			b.ReplicationIndex, b.HasReplicationIndex, err = d.readUint("replication_index", math.MaxUint64)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	total := max(nres, nerr)
	steps = steps[:total]
	for i := range steps {
		st := &steps[i]
		switch flags[i] {
		case 1:
			st.Status = codec.StepOK
			st.Error = codec.Error{}
		case 2:
			st.Status = codec.StepFailed
			resetStmtResult(&st.Result)
		case 3:
			return errAt(objStart, "batch step "+strconv.Itoa(i)+" has both a result and an error")
		default:
			st.Status = codec.StepSkipped
			st.Error = codec.Error{}
			resetStmtResult(&st.Result)
		}
	}
	return nil
}

// stepArray decodes "step_results" (bit 1) or "step_errors" (bit 2): an
// array (or null) whose elements are null or an object. steps and flags
// grow together to cover every index seen; count is the array's length.
func (d *decoder) stepArray(steps []codec.StepOutcome, flags []uint8, bit uint8) (_ []codec.StepOutcome, _ []uint8, count int, err error) {
	for i := range flags {
		flags[i] &^= bit
	}
	field := "step_results"
	if bit == 2 {
		field = "step_errors"
	}
	switch d.data[d.pos] {
	case 'n':
		return steps, flags, 0, d.literal("null")
	case '[':
	default:
		return steps, flags, 0, d.typeErr(field, "an array")
	}
	if err := d.open(); err != nil {
		return steps, flags, 0, err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			return steps, flags, count, err
		}
		i := count
		count++
		if len(steps) <= i {
			if i < cap(steps) {
				steps = steps[:i+1] // stale contents are reset below or in batchResult
			} else {
				steps = append(steps, codec.StepOutcome{})
			}
			flags = append(flags, 0)
		}
		st := &steps[i]
		switch d.data[d.pos] {
		case 'n':
			err = d.literal("null")
		case '{':
			flags[i] |= bit
			if bit == 1 {
				err = d.stmtResult(&st.Result)
			} else {
				err = d.errorObj(&st.Error, st.Error, field)
			}
		default:
			err = d.typeErr(field, "an object or null")
		}
		if err != nil {
			return steps, flags, count, err
		}
	}
}

// describeResult decodes a DescribeResult object at d.pos.
func (d *decoder) describeResult(r *codec.DescribeResult) error {
	if d.data[d.pos] != '{' {
		return d.typeErr("result", "an object")
	}
	*r = codec.DescribeResult{Params: r.Params[:0], Cols: r.Cols[:0]}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil || !ok {
			return err
		}
		switch string(key) {
		case "params":
			err = d.params(&r.Params)
		case "cols":
			err = d.cols(&r.Cols, "cols")
		case "is_explain":
			r.IsExplain, err = d.readBool("is_explain")
		case "is_readonly":
			r.IsReadonly, err = d.readBool("is_readonly")
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
}

// params decodes the "params" array (or null) of a DescribeResult.
func (d *decoder) params(dst *[]codec.DescribeParam) error {
	ps := (*dst)[:0]
	*dst = ps
	switch d.data[d.pos] {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.typeErr("params", "an array")
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			*dst = ps
			return err
		}
		if d.data[d.pos] != '{' {
			*dst = ps
			return d.typeErr("params", "parameter objects")
		}
		i := len(ps)
		if i < cap(ps) {
			ps = ps[:i+1]
		} else {
			ps = append(ps, codec.DescribeParam{})
		}
		p := &ps[i]
		old := p.Name
		p.Name = ""
		if err := d.open(); err != nil {
			*dst = ps
			return err
		}
		for m := 0; ; {
			key, ok, err := d.nextKey(&m)
			if err == nil && ok {
				if string(key) == "name" {
					p.Name, err = d.readGoString("name", old, true)
				} else {
					_, err = d.skipValue()
				}
			}
			if err != nil {
				*dst = ps
				return err
			}
			if !ok {
				break
			}
		}
	}
}

// ---- cursor entries ----

// The members of a cursor entry, as bit positions.
const (
	fStep = iota
	fCols
	fRow
	fAffected
	fLastID
	fError
	fRepl
	numEntryFields
)

// entryFields[t] has bit f set when member f belongs to entries of type t.
var entryFields = [...]uint8{
	codec.EntryUnknown:          0,
	codec.EntryStepBegin:        1<<fStep | 1<<fCols,
	codec.EntryStepEnd:          1<<fAffected | 1<<fLastID,
	codec.EntryStepError:        1<<fStep | 1<<fError,
	codec.EntryRow:              1 << fRow,
	codec.EntryError:            1 << fError,
	codec.EntryReplicationIndex: 1 << fRepl,
}

func entryField(key []byte) int {
	switch string(key) {
	case "step":
		return fStep
	case "cols":
		return fCols
	case "row":
		return fRow
	case "affected_row_count":
		return fAffected
	case "last_insert_rowid":
		return fLastID
	case "error":
		return fError
	case "replication_index":
		return fRepl
	}
	return -1
}

// DecodeCursorEntry decodes one line of a cursor response after the header.
// Entries of an unknown type, or without a type, decode as EntryUnknown.
func (jsonCodec) DecodeCursorEntry(line []byte, e *codec.CursorEntry) error {
	if e == nil {
		return nilDest()
	}
	oldErr := e.Error
	e.Reset()
	d := newDecoder(line)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	typ := codec.EntryUnknown
	var spans [numEntryFields]span
	var done [numEntryFields]bool
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if string(key) == "type" {
			b, _, err := d.readString("type")
			if err != nil {
				return err
			}
			typ = codec.ParseEntryType(b)
			continue
		}
		f := entryField(key)
		switch {
		case f < 0:
			_, err = d.skipValue()
		case entryFields[typ]&(1<<f) != 0:
			spans[f] = span{start: d.pos, depth: d.depth, kind: kindObject}
			done[f] = true
			err = d.entryMember(e, f, oldErr)
		default:
			done[f] = false
			spans[f], err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	mask := entryFields[typ]
	for f := 0; f < numEntryFields; f++ {
		switch {
		case mask&(1<<f) != 0:
			if !done[f] && spans[f].kind != kindNone {
				p, dp := d.seek(spans[f])
				err := d.entryMember(e, f, oldErr)
				d.restore(p, dp)
				if err != nil {
					return err
				}
			}
		case done[f]:
			clearEntryMember(e, f)
		}
	}
	e.Type = typ
	return d.finish()
}

// entryMember decodes member f of a cursor entry at d.pos.
func (d *decoder) entryMember(e *codec.CursorEntry, f int, oldErr codec.Error) error {
	var err error
	switch f {
	case fStep:
		var v uint64
		v, _, err = d.readUint("step", math.MaxUint32)
		e.Step = uint32(v)
	case fCols:
		err = d.cols(&e.Cols, "cols")
	case fRow:
		err = d.row(&e.Row, "row")
	case fAffected:
		e.AffectedRowCount, _, err = d.readUint("affected_row_count", math.MaxUint64)
	case fLastID:
		e.LastInsertRowID, e.HasLastInsertRowID, err = d.readInt("last_insert_rowid")
	case fError:
		e.Error = codec.Error{}
		if d.data[d.pos] == 'n' {
			err = d.literal("null")
		} else {
			err = d.errorObj(&e.Error, oldErr, "error")
		}
	case fRepl:
		e.ReplicationIndex, e.HasReplicationIndex, err = d.readUint("replication_index", math.MaxUint64)
	}
	return err
}

func clearEntryMember(e *codec.CursorEntry, f int) {
	switch f {
	case fStep:
		e.Step = 0
	case fCols:
		e.Cols = e.Cols[:0]
	case fRow:
		e.Row = e.Row[:0]
	case fAffected:
		e.AffectedRowCount = 0
	case fLastID:
		e.LastInsertRowID, e.HasLastInsertRowID = 0, false
	case fError:
		e.Error = codec.Error{}
	case fRepl:
		e.ReplicationIndex, e.HasReplicationIndex = 0, false
	}
}
