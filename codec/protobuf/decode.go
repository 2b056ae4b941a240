package protobuf

// Deliberately independent of prototest's reference decoder: the differential tests (codec/protobuf/prototest) compare them.

// This file: decoding the response messages into the codec types. Each
// message function takes b, the input cut at the message's end (positions
// are offsets in the whole input), and the position of its first field.

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

func nilDest() error {
	return &codec.DecodeError{Codec: Name, Offset: -1, Msg: "nil destination"}
}

// DecodePipelineResponse decodes a PipelineRespBody.
func (pbCodec) DecodePipelineResponse(data []byte, resp *codec.PipelineResponse) error {
	if resp == nil {
		return nilDest()
	}
	oldBaton, oldURL := resp.Baton, resp.BaseURL
	resp.Reset()
	rs := resp.Results
	defer func() { resp.Results = rs }()
	f := fieldReader{b: data}
	for f.next() {
		switch f.num {
		case 1:
			resp.Baton = f.str("baton", oldBaton)
		case 2:
			resp.BaseURL = f.str("base_url", oldURL)
		case 3:
			if s, e, ok := f.msg("results"); ok {
				n := len(rs)
				rs = grow(rs)
				f.err = streamResult(data[:e], s, &rs[n])
			}
		default:
			f.skip()
		}
	}
	return f.err
}

// grow extends s by one element, reusing its capacity. The new element
// holds stale data from an earlier use, which the caller resets (keeping
// the capacity of the slices in it).
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	var zero T
	return append(s, zero)
}

// growValues returns vals with room for the rows left in the input, once
// the first row is known (rowValues values in rowBytes bytes, its key and
// length included) and remaining bytes of the message are left: a decode
// into an empty slice (a Result the pool lost) then allocates one slice of
// about the right size, as the direct codec's does, rather than a chain of
// append's steps, whose discarded copies add up to several times the final
// slice (27.8 MB against 6.9 MB for a 20,000-row, 6-column result). It allows
// 1/8 for rows longer than the first, and grows by at least 1.25x, which
// keeps appending amortized O(1) when the first row was unusually long.
func growValues(vals []codec.Value, rowValues, rowBytes, remaining int) []codec.Value {
	newCap := max(cap(vals)+cap(vals)/4, 16)
	if rowValues > 0 {
		rows := remaining/rowBytes + 1
		newCap = max(newCap, len(vals)+(rows+rows/8)*rowValues)
	}
	grown := make([]codec.Value, len(vals), newCap)
	copy(grown, vals)
	return grown
}

func resetStmtResult(r *codec.StmtResult) {
	*r = codec.StmtResult{Cols: r.Cols[:0], Values: r.Values[:0]}
}

func resetBatch(b *codec.BatchResult) {
	*b = codec.BatchResult{Steps: b.Steps[:0]}
}

func resetDescribe(d *codec.DescribeResult) {
	*d = codec.DescribeResult{Params: d.Params[:0], Cols: d.Cols[:0]}
}

func resetStreamResponse(r *codec.StreamResponse) {
	resetStmtResult(&r.Result)
	resetBatch(&r.Batch)
	resetDescribe(&r.Describe)
	r.Type, r.IsAutocommit = codec.RequestUnknown, false
}

func resetResponse(r *codec.SocketResponse) {
	resetStmtResult(&r.Result)
	resetBatch(&r.Batch)
	resetDescribe(&r.Describe)
	*r = codec.SocketResponse{Result: r.Result, Batch: r.Batch, Describe: r.Describe, Entries: r.Entries[:0]}
}

// streamResult decodes a StreamResult: oneof ok = 1 (StreamResponse),
// error = 2 (Error).
func streamResult(b []byte, i int, r *codec.StreamResult) error {
	start := i
	oldErr := r.Error
	r.OK, r.Error = false, codec.Error{}
	resetStreamResponse(&r.Response)
	which := 0
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch f.num {
		case 1:
			if s, e, ok := f.msg("ok"); ok {
				which = 1
				f.err = streamResponse(b[:e], s, &r.Response)
			}
		case 2:
			if s, e, ok := f.msg("error"); ok {
				which = 2
				f.err = errorMsg(b[:e], s, &r.Error, oldErr)
			}
		default:
			f.skip()
		}
	}
	if f.err != nil {
		return f.err
	}
	switch which {
	case 1:
		r.OK = true
		r.Error = codec.Error{}
	case 2:
		resetStreamResponse(&r.Response)
	default:
		return decodeErr(start, "stream result with neither ok nor error")
	}
	return nil
}

// streamResponse decodes a StreamResponse: a oneof whose member numbers are
// the request types (close = 1 ... get_autocommit = 8).
func streamResponse(b []byte, i int, r *codec.StreamResponse) error {
	// A StreamResponse's members are among a SocketResponse's: decode into
	// one that holds r's slices, then take them back.
	sr := codec.SocketResponse{Result: r.Result, Batch: r.Batch, Describe: r.Describe}
	typ, err := responseOneof(b, i, &sr, streamMember, nil)
	*r = codec.StreamResponse{Type: codec.RequestType(typ), Result: sr.Result, Batch: sr.Batch,
		Describe: sr.Describe, IsAutocommit: sr.IsAutocommit}
	if err == nil && typ == 0 {
		err = decodeErr(i, "stream response without a known type")
	}
	return err
}

// streamMember is the memberFunc of StreamResponse.
func streamMember(num uint64) (uint8, codec.SocketRequestType) {
	t := responseType(num)
	return uint8(t), t.SocketType()
}

// responseType maps a StreamResponse member number to its request type,
// RequestUnknown for a field that is no member.
func responseType(num uint64) codec.RequestType {
	if num == 0 || num > uint64(codec.RequestGetAutocommit) {
		return codec.RequestUnknown
	}
	return codec.RequestType(num)
}

// errorMsg decodes an Error: message = 1, code = 2.
func errorMsg(b []byte, i int, e *codec.Error, old codec.Error) error {
	return stringPair(b, i, "message", "code", &e.Message, &e.Code, old.Message, old.Code)
}

// col decodes a Col (or a DescribeCol, the same fields): name = 1,
// decltype = 2. *c holds the strings of the earlier use to reuse.
func col(b []byte, i int, c *codec.Col) error {
	old := *c
	return stringPair(b, i, "name", "decltype", &c.Name, &c.Decltype, old.Name, old.Decltype)
}

// stmtResult decodes a StmtResult into r, which it resets first.
func stmtResult(b []byte, i int, r *codec.StmtResult) error {
	resetStmtResult(r)
	cols, vals := r.Cols, r.Values
	defer func() { r.Cols, r.Values = cols, vals }()
	rowLen, firstRow, badRow := -1, -1, -1
	rowBytes := 0 // the first row's length in the input, once known
	f := fieldReader{b: b, i: i}
	for {
		// A row's key, one byte, skips next's call: most of a result is
		// rows.
		if f.err == nil && f.i < len(b) && b[f.i] == 2<<3|wireLen {
			f.at, f.num, f.wt = f.i, 2, wireLen
			f.i++
		} else if !f.next() {
			break
		}
		switch f.num {
		case 1:
			if s, e, ok := f.msg("cols"); ok {
				n := len(cols)
				cols = grow(cols)
				f.err = col(b[:e], s, &cols[n])
			}
		case 2:
			if s, e, ok := f.msg("rows"); ok {
				before := len(vals)
				if rowBytes > 0 && cap(vals)-before < rowLen {
					vals = growValues(vals, rowLen, rowBytes, len(b)-f.at)
				}
				if vals, f.err = row(b[:e], s, vals); f.err == nil {
					switch n := len(vals) - before; {
					case rowLen < 0:
						rowLen, firstRow, rowBytes = n, f.at, e-f.at
					case n != rowLen && badRow < 0:
						badRow = f.at
					}
					r.NumRows++
				}
			}
		case 3:
			r.AffectedRowCount = f.varint("affected_row_count")
		case 4:
			r.LastInsertRowID, r.HasLastInsertRowID = zigzag(f.varint("last_insert_rowid")), true
		case 5:
			r.ReplicationIndex, r.HasReplicationIndex = f.varint("replication_index"), true
		case 6:
			r.RowsRead = f.varint("rows_read")
		case 7:
			r.RowsWritten = f.varint("rows_written")
		case 8:
			r.QueryDurationMS = f.double("query_duration_ms")
		default:
			f.skip()
		}
	}
	if f.err != nil {
		return f.err
	}
	if r.NumRows > 0 {
		switch {
		case badRow >= 0:
			return decodeErr(badRow, "rows of different lengths")
		case rowLen != len(cols):
			return decodeErr(firstRow, "row has "+strconv.Itoa(rowLen)+" values but there are "+strconv.Itoa(len(cols))+" columns")
		}
	}
	return nil
}

// row decodes a Row (values = 1) and appends its values to vals.
func row(b []byte, i int, vals []codec.Value) ([]codec.Value, error) {
	for i < len(b) {
		// The fast path: a value as sqld writes it, shorter than 128 bytes,
		// with its one member and nothing else. Anything else (longer
		// values, other layouts, malformed input) takes the general path
		// below, which gives the same result or the error.
		if b[i] == 1<<3|wireLen && i+1 < len(b) && b[i+1] < 0x80 {
			s := i + 2
			e := s + int(b[i+1])
			if s < e && e <= len(b) {
				n := len(vals)
				vals = grow(vals)
				if fastValue(b[:e], s, &vals[n]) {
					i = e
					continue
				}
				vals = vals[:n]
			}
		}
		if b[i] == 1<<3|wireLen {
			s, e := readLen(b, i+1)
			if s < 0 {
				return vals, posErr(i, s, "field \"values\"")
			}
			vals = grow(vals)
			if err := value(b[:e], s, &vals[len(vals)-1]); err != nil {
				return vals, err
			}
			i = e
			continue
		}
		at := i
		num, wt, j, err := readTag(b, i)
		if err != nil {
			return vals, err
		}
		if num == 1 {
			return vals, wireTypeErr(at, "values", wt)
		}
		if j, err = skipField(b, num, wt, j); err != nil {
			return vals, err
		}
		i = j
	}
	return vals, nil
}

// fastValue decodes the Value message b[s:] (not empty) if it is a single
// member with a one-byte key and, for text and blobs, a one-byte length,
// and reports whether it did.
func fastValue(b []byte, s int, v *codec.Value) bool {
	e := len(b)
	switch b[s] {
	case 1<<3 | wireLen: // null
		if e == s+2 && b[s+1] == 0 {
			*v = codec.Value{}
			return true
		}
	case 2<<3 | wireVarint: // integer
		if u, j := readVarint(b, s+1); j == e {
			*v = codec.Value{Type: codec.Integer, Int: zigzag(u)}
			return true
		}
	case 3<<3 | wireI64: // float
		if e == s+9 {
			u, _ := readFixed64(b, s+1)
			*v = codec.Value{Type: codec.Float, Float: math.Float64frombits(u)}
			return true
		}
	case 4<<3 | wireLen: // text
		if s+2 <= e && s+2+int(b[s+1]) == e {
			p := b[s+2 : e : e]
			if !validUTF8(p) {
				return false // the general path reports it
			}
			*v = codec.Value{Type: codec.Text, Bytes: p}
			return true
		}
	case 5<<3 | wireLen: // blob
		if s+2 <= e && s+2+int(b[s+1]) == e {
			*v = codec.Value{Type: codec.Blob, Bytes: b[s+2 : e : e]}
			return true
		}
	}
	return false
}

// validUTF8 is utf8.Valid with the check of short ASCII strings inlined:
// most text values are short and ASCII.
func validUTF8(p []byte) bool {
	for len(p) >= 8 {
		if binary.LittleEndian.Uint64(p)&0x8080808080808080 != 0 {
			return utf8.Valid(p)
		}
		p = p[8:]
	}
	for _, c := range p {
		if c >= utf8.RuneSelf {
			return utf8.Valid(p)
		}
	}
	return true
}

// value decodes a Value: oneof null = 1 (an empty message), integer = 2
// (sint64), float = 3 (double), text = 4 (string), blob = 5 (bytes). Text
// and blob point into the input.
func value(b []byte, i int, v *codec.Value) error {
	start := i
	*v = codec.Value{Type: 0xff} // no member seen yet
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch f.num {
		case 1:
			if s, e, ok := f.msg("null"); ok {
				// The Null message has no fields; unknown ones must still
				// be well formed.
				f.err = skipAll(b[:e], s)
				*v = codec.Value{}
			}
		case 2:
			*v = codec.Value{Type: codec.Integer, Int: zigzag(f.varint("integer"))}
		case 3:
			*v = codec.Value{Type: codec.Float, Float: f.double("float")}
		case 4:
			if s, e, ok := f.msg("text"); ok {
				if !validUTF8(b[s:e]) {
					return utf8Err(s, "text")
				}
				*v = codec.Value{Type: codec.Text, Bytes: b[s:e:e]}
			}
		case 5:
			if s, e, ok := f.msg("blob"); ok {
				*v = codec.Value{Type: codec.Blob, Bytes: b[s:e:e]}
			}
		default:
			f.skip()
		}
	}
	if f.err != nil {
		return f.err
	}
	if v.Type == 0xff {
		*v = codec.Value{}
		return decodeErr(start, "value without a type")
	}
	return nil
}

// skipAll checks the fields of a message that has no known fields.
func skipAll(b []byte, i int) error {
	f := fieldReader{b: b, i: i}
	for f.next() {
		f.skip()
	}
	return f.err
}

// batchResult decodes a BatchResult: step_results = 1 and step_errors = 2,
// each a map<uint32, message> written as repeated entries {key = 1,
// value = 2}.
func batchResult(b []byte, i int, br *codec.BatchResult) error {
	start := i
	steps := br.Steps[:0]
	*br = codec.BatchResult{}
	defer func() { br.Steps = steps }()
	f := fieldReader{b: b, i: i}
	for f.next() {
		if f.num != 1 && f.num != 2 {
			f.skip()
			continue
		}
		field := "step_results"
		if f.num == 2 {
			field = "step_errors"
		}
		s, e, ok := f.msg(field)
		if !ok {
			break
		}
		// The map entry: the key and the value's bounds (an absent value
		// is an empty message), decoded once the key is known.
		var key uint64
		vs, ve := e, e
		m := fieldReader{b: b[:e], i: s}
		for m.next() {
			switch m.num {
			case 1:
				key = uint64(m.uint32("key"))
			case 2:
				vs, ve, _ = m.msg("value")
			default:
				m.skip()
			}
		}
		if m.err != nil {
			return m.err
		}
		if key >= MaxBatchSteps {
			return decodeErr(f.at, "batch step index "+strconv.FormatUint(key, 10)+" is too large")
		}
		idx := int(key)
		for len(steps) <= idx {
			// The stale error stays until the end, for errorMsg to reuse
			// its strings.
			steps = grow(steps)
			st := &steps[len(steps)-1]
			st.Status = codec.StepSkipped
			resetStmtResult(&st.Result)
		}
		st := &steps[idx]
		// Status doubles as the set of maps the step was seen in (StepOK is
		// 1, StepFailed 2); 3 is checked below.
		if f.num == 1 {
			st.Status |= codec.StepOK
			f.err = stmtResult(b[:ve], vs, &st.Result)
		} else {
			st.Status |= codec.StepFailed
			f.err = errorMsg(b[:ve], vs, &st.Error, st.Error)
		}
	}
	if f.err != nil {
		return f.err
	}
	for k := range steps {
		st := &steps[k]
		switch st.Status {
		case codec.StepOK, codec.StepSkipped:
			st.Error = codec.Error{}
		case codec.StepFailed:
			resetStmtResult(&st.Result)
		default:
			return decodeErr(start, "batch step "+strconv.Itoa(k)+" has both a result and an error")
		}
	}
	return nil
}

// describeResult decodes a DescribeResult: params = 1, cols = 2,
// is_explain = 3, is_readonly = 4.
func describeResult(b []byte, i int, r *codec.DescribeResult) error {
	resetDescribe(r)
	params, cols := r.Params, r.Cols
	defer func() { r.Params, r.Cols = params, cols }()
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch f.num {
		case 1:
			if s, e, ok := f.msg("params"); ok {
				params = grow(params)
				f.err = param(b[:e], s, &params[len(params)-1])
			}
		case 2:
			if s, e, ok := f.msg("cols"); ok {
				cols = grow(cols)
				f.err = col(b[:e], s, &cols[len(cols)-1])
			}
		case 3:
			r.IsExplain = f.varint("is_explain") != 0
		case 4:
			r.IsReadonly = f.varint("is_readonly") != 0
		default:
			f.skip()
		}
	}
	return f.err
}

// param decodes a DescribeParam: name = 1.
func param(b []byte, i int, p *codec.DescribeParam) error {
	old := p.Name
	p.Name = ""
	f := fieldReader{b: b, i: i}
	for f.next() {
		if f.num == 1 {
			p.Name = f.str("name", old)
		} else {
			f.skip()
		}
	}
	return f.err
}

// DecodeError decodes a Protobuf Error message (message = 1, code = 2), the
// body sqld sends for STREAM_EXPIRED on the Protobuf routes.
func (pbCodec) DecodeError(data []byte, e *codec.Error) error {
	if e == nil {
		return nilDest()
	}
	return errorMsg(data, 0, e, *e)
}

// DecodeCursorHeader decodes a CursorRespBody: baton = 1, base_url = 2.
// data is one message, without its length prefix (see SplitDelimited).
func (pbCodec) DecodeCursorHeader(data []byte, h *codec.CursorHeader) error {
	if h == nil {
		return nilDest()
	}
	old := *h
	return stringPair(data, 0, "baton", "base_url", &h.Baton, &h.BaseURL, old.Baton, old.BaseURL)
}

// entryType maps a CursorEntry member number to its entry type.
func entryType(num uint64) codec.EntryType {
	switch num {
	case 1:
		return codec.EntryStepBegin
	case 2:
		return codec.EntryStepEnd
	case 3:
		return codec.EntryStepError
	case 4:
		return codec.EntryRow
	case 5:
		return codec.EntryError
	case 6:
		return codec.EntryReplicationIndex
	}
	return codec.EntryUnknown
}

// DecodeCursorEntry decodes a CursorEntry: oneof step_begin = 1,
// step_end = 2, step_error = 3, row = 4, error = 5, replication_index = 6
// (sqld's extension: a message whose field 1 is the index). data is one
// message, without its length prefix. An entry with no known member
// (including a zero-length one) decodes as EntryUnknown.
func (pbCodec) DecodeCursorEntry(data []byte, e *codec.CursorEntry) error {
	if e == nil {
		return nilDest()
	}
	return cursorEntry(data, 0, e)
}

// cursorEntry decodes the CursorEntry b[i:] into e, which it resets first
// (keeping the strings of its error to reuse).
func cursorEntry(b []byte, i int, e *codec.CursorEntry) error {
	oldErr := e.Error
	e.Reset()
	f := fieldReader{b: b, i: i}
	for f.next() {
		t := entryType(f.num)
		if t == codec.EntryUnknown {
			f.skip()
			continue
		}
		s, end, ok := f.msg(entryName(t))
		if !ok {
			break
		}
		// The last member wins as a whole.
		e.Reset()
		e.Type = t
		if t == codec.EntryRow {
			e.Row, f.err = row(b[:end], s, e.Row)
		} else {
			f.err = entryMember(b[:end], s, e, oldErr)
		}
	}
	return f.err
}

func entryName(t codec.EntryType) string {
	switch t {
	case codec.EntryStepBegin:
		return "step_begin"
	case codec.EntryStepEnd:
		return "step_end"
	case codec.EntryStepError:
		return "step_error"
	case codec.EntryRow:
		return "row"
	case codec.EntryError:
		return "error"
	}
	return "replication_index"
}

// entryMember decodes the message of a cursor entry of type e.Type other
// than a row.
func entryMember(b []byte, i int, e *codec.CursorEntry, oldErr codec.Error) error {
	if e.Type == codec.EntryError {
		return errorMsg(b, i, &e.Error, oldErr)
	}
	if e.Type == codec.EntryReplicationIndex {
		e.HasReplicationIndex = true
	}
	f := fieldReader{b: b, i: i}
	for f.next() {
		switch num := f.num; {
		case e.Type == codec.EntryStepBegin && num == 1, e.Type == codec.EntryStepError && num == 1:
			e.Step = f.uint32("step")
		case e.Type == codec.EntryStepBegin && num == 2:
			if s, end, ok := f.msg("cols"); ok {
				e.Cols = grow(e.Cols)
				f.err = col(b[:end], s, &e.Cols[len(e.Cols)-1])
			}
		case e.Type == codec.EntryStepError && num == 2:
			if s, end, ok := f.msg("error"); ok {
				f.err = errorMsg(b[:end], s, &e.Error, oldErr)
			}
		case e.Type == codec.EntryStepEnd && num == 1:
			e.AffectedRowCount = f.varint("affected_row_count")
		case e.Type == codec.EntryStepEnd && num == 2:
			e.LastInsertRowID, e.HasLastInsertRowID = zigzag(f.varint("last_insert_rowid")), true
		case e.Type == codec.EntryReplicationIndex && num == 1:
			e.ReplicationIndex = f.varint("replication_index")
		default:
			f.skip()
		}
	}
	return f.err
}
