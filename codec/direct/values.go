package direct

// This file: Value objects (a fast path for the server's spelling, the
// general path for the rest) and arrays of them: rows.

import (
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

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
		f := math.NaN() // null: a non-finite float (PROTOCOL.md §8.2); serde writes both infinities as null
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
		f := math.NaN()
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

// The array loops of row, cols, results and the rest are written out per
// element type on purpose: one generic helper taking the element decoder as
// a function value made every decode allocate, since escape analysis cannot
// see through the indirect call; walkers that avoid the allocation cost
// 3-9% (docs/dev/PERF.md, "Decoder loops").

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
