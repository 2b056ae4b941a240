package direct

// Deliberately independent of codec/gojson: the differential tests (codec/codectest) compare them.

import (
	"math"
	"strconv"

	"github.com/gohrana/libsql/codec"
)

// This file: pipeline responses (stream results, statement, batch and
// describe results) and HTTP error bodies. With cursor.go, values.go and
// scalars.go it maps the Hrana JSON messages onto the codec types,
// following the decoding rules of docs/CODECS.md.
//
// Fields whose meaning depends on a "type" member (the "response" and
// "error" of a stream result, the "result" of a stream response, the
// members of a cursor entry, the payload of a value) may come before that
// "type". When the type is already known the field is decoded in place;
// otherwise its span is recorded (after a validating skip) and decoded
// once the object's closing brace has been read and the final type is
// known. Repeated keys: the last one wins.

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
	var resp, errm objMember
	decodeResp := func() error { return d.streamResponse(&r.Response) }
	decodeErr := func() error { return d.errorObj(&r.Error, oldErr, "error") }
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
			err = d.readObjMember(&resp, typ == typeOK, decodeResp)
		case "error":
			err = d.readObjMember(&errm, typ == typeError, decodeErr)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	switch typ {
	case typeOK:
		if err := d.settleObjMember(&resp, objStart, "response", `stream result of type "ok"`, decodeResp); err != nil {
			return err
		}
		r.OK = true
		r.Error = codec.Error{}
	case typeError:
		if err := d.settleObjMember(&errm, objStart, "error", `stream result of type "error"`, decodeErr); err != nil {
			return err
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
	// A StreamResponse's members are among a SocketResponse's: decode into
	// one that holds r's slices, then take them back.
	sr := codec.SocketResponse{Result: r.Result, Batch: r.Batch, Describe: r.Describe}
	typ, err := d.response(&sr, streamType)
	*r = codec.StreamResponse{Type: codec.RequestType(typ), Result: sr.Result, Batch: sr.Batch,
		Describe: sr.Describe, IsAutocommit: sr.IsAutocommit}
	return err
}

// streamType is the typeParser of stream responses.
func streamType(name []byte) (uint8, codec.SocketRequestType) {
	t := codec.ParseRequestType(name)
	return uint8(t), t.SocketType()
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
