package fakesqld

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Col is a result column.
type Col struct {
	Name     string
	Decltype string // "" is sent as null (an expression or untyped column)
}

// Cols makes columns without declared types.
func Cols(names ...string) []Col {
	c := make([]Col, len(names))
	for i, n := range names {
		c[i].Name = n
	}
	return c
}

func appendCols(dst []byte, cols []Col) []byte {
	dst = append(dst, '[')
	for i, c := range cols {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(append(dst, `{"name":`...), c.Name)
		dst = append(dst, `,"decltype":`...)
		if c.Decltype == "" {
			dst = append(dst, "null"...)
		} else {
			dst = appendString(dst, c.Decltype)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendRow(dst []byte, row []Value) []byte {
	dst = append(dst, '[')
	for i, v := range row {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = v.appendJSON(dst)
	}
	return append(dst, ']')
}

// appendString writes s as a JSON string the way serde_json does: without
// escaping <, > and &.
func appendString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// StmtResult is the result of one statement, written as sqld writes it.
type StmtResult struct {
	Cols []Col
	Rows [][]Value
	// AffectedRowCount is what sqld reports for INSERT, UPDATE and DELETE;
	// 0 for other statements.
	AffectedRowCount uint64
	// LastInsertRowID is sent when HasRowID (INSERT statements only);
	// otherwise last_insert_rowid is null.
	LastInsertRowID int64
	HasRowID        bool
	// ReplicationIndex is sent as replication_index; 0 sends null.
	ReplicationIndex uint64
}

// Empty is the result of a statement without rows or changes (BEGIN,
// COMMIT, DDL).
func Empty() StmtResult { return StmtResult{} }

// Inserted is the result of an INSERT.
func Inserted(affected uint64, lastRowID int64) StmtResult {
	return StmtResult{AffectedRowCount: affected, LastInsertRowID: lastRowID, HasRowID: true}
}

// Updated is the result of an UPDATE or DELETE.
func Updated(affected uint64) StmtResult { return StmtResult{AffectedRowCount: affected} }

// Query is the result of a query.
func Query(cols []Col, rows ...[]Value) StmtResult { return StmtResult{Cols: cols, Rows: rows} }

func (r StmtResult) appendJSON(dst []byte) []byte {
	dst = appendCols(append(dst, `{"cols":`...), r.Cols)
	dst = append(dst, `,"rows":[`...)
	for i, row := range r.Rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRow(dst, row)
	}
	dst = append(dst, `],"affected_row_count":`...)
	dst = strconv.AppendUint(dst, r.AffectedRowCount, 10)
	dst = append(dst, `,"last_insert_rowid":`...)
	if r.HasRowID {
		dst = strconv.AppendQuote(dst, strconv.FormatInt(r.LastInsertRowID, 10))
	} else {
		dst = append(dst, "null"...)
	}
	if r.ReplicationIndex != 0 {
		dst = append(dst, `,"replication_index":"`...)
		dst = strconv.AppendUint(dst, r.ReplicationIndex, 10)
		dst = append(dst, `","rows_read":`...)
	} else {
		dst = append(dst, `,"replication_index":null,"rows_read":`...)
	}
	dst = strconv.AppendInt(dst, int64(len(r.Rows)), 10)
	dst = append(dst, `,"rows_written":`...)
	dst = strconv.AppendUint(dst, r.AffectedRowCount, 10)
	return append(dst, `,"query_duration_ms":0.042}`...)
}

// Result is one entry of a pipeline response's results.
type Result struct{ raw []byte }

func okResponse(response string) Result {
	return Result{[]byte(`{"type":"ok","response":` + response + `}`)}
}

// ExecuteOK answers an execute request.
func ExecuteOK(r StmtResult) Result {
	b := append([]byte(`{"type":"ok","response":{"type":"execute","result":`), r.appendJSON(nil)...)
	return Result{append(b, "}}"...)}
}

// StepResult is the outcome of one batch step.
type StepResult struct {
	res  *StmtResult
	code string
	msg  string
}

// StepOK is a step that ran and succeeded.
func StepOK(r StmtResult) StepResult { return StepResult{res: &r} }

// StepFailed is a step that ran and failed.
func StepFailed(code, message string) StepResult { return StepResult{code: code, msg: message} }

// StepSkipped is a step whose condition was false.
func StepSkipped() StepResult { return StepResult{} }

// BatchOK answers a batch request.
func BatchOK(steps ...StepResult) Result {
	b := []byte(`{"type":"ok","response":{"type":"batch","result":{"step_results":[`)
	for i, s := range steps {
		if i > 0 {
			b = append(b, ',')
		}
		if s.res != nil {
			b = s.res.appendJSON(b)
		} else {
			b = append(b, "null"...)
		}
	}
	b = append(b, `],"step_errors":[`...)
	for i, s := range steps {
		if i > 0 {
			b = append(b, ',')
		}
		if s.res == nil && s.code != "" {
			b = appendError(b, s.code, s.msg)
		} else {
			b = append(b, "null"...)
		}
	}
	return Result{append(b, `],"replication_index":null}}}`...)}
}

// SequenceOK answers a sequence request.
func SequenceOK() Result { return okResponse(`{"type":"sequence"}`) }

// DescribeOK answers a describe request with no parameters or columns.
func DescribeOK(readOnly bool) Result {
	return okResponse(`{"type":"describe","result":{"params":[],"cols":[],"is_explain":false,"is_readonly":` +
		strconv.FormatBool(readOnly) + `}}`)
}

// DescribeParamsOK answers a describe request for a statement with
// parameters of the given names ("" for an anonymous ?).
func DescribeParamsOK(readOnly bool, names ...string) Result {
	params := make([]string, len(names))
	for i, n := range names {
		if n == "" {
			params[i] = `{"name":null}`
		} else {
			params[i] = `{"name":` + strconv.Quote(n) + `}`
		}
	}
	return okResponse(`{"type":"describe","result":{"params":[` + strings.Join(params, ",") + `],"cols":[],"is_explain":false,"is_readonly":` +
		strconv.FormatBool(readOnly) + `}}`)
}

// CloseOK answers a close request.
func CloseOK() Result { return okResponse(`{"type":"close"}`) }

// GetAutocommitOK answers a get_autocommit request.
func GetAutocommitOK(autocommit bool) Result {
	return okResponse(`{"type":"get_autocommit","is_autocommit":` + strconv.FormatBool(autocommit) + `}`)
}

// StoreSQLOK answers a store_sql request.
func StoreSQLOK() Result { return okResponse(`{"type":"store_sql"}`) }

// CloseSQLOK answers a close_sql request.
func CloseSQLOK() Result { return okResponse(`{"type":"close_sql"}`) }

// Fail is an error result: a request that failed at the SQL level (the
// stream lives on).
func Fail(code, message string) Result {
	return Result{append(appendError([]byte(`{"type":"error","error":`), code, message), '}')}
}

func appendError(dst []byte, code, message string) []byte {
	dst = appendString(append(dst, `{"message":`...), message)
	return append(appendString(append(dst, `,"code":`...), code), '}')
}

// PipelineBody is the body of a successful pipeline response.
func PipelineBody(baton string, results ...Result) []byte {
	b := []byte(`{"baton":`)
	b = appendBaton(b, baton)
	b = append(b, `,"base_url":null,"results":[`...)
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.raw...)
	}
	return append(b, "]}"...)
}

func appendBaton(dst []byte, baton string) []byte {
	if baton == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, baton)
}

// Line is one item of a cursor body: an entry line, or a pause or cut.
type Line struct {
	text  string
	pause time.Duration
	cut   bool
}

// RawLine is a line written as given (a newline is added).
func RawLine(s string) Line { return Line{text: s} }

// StepBegin is {"type":"step_begin","step":i,"cols":[…]}.
func StepBegin(step int, cols ...Col) Line {
	b := append([]byte(`{"type":"step_begin","step":`), strconv.Itoa(step)...)
	b = appendCols(append(b, `,"cols":`...), cols)
	return Line{text: string(append(b, '}'))}
}

// Row is {"type":"row","row":[…]}.
func Row(vals ...Value) Line {
	return Line{text: string(append(appendRow([]byte(`{"type":"row","row":`), vals), '}'))}
}

// StepEnd is the step_end of a query (no changes, last_insert_rowid null).
func StepEnd() Line {
	return Line{text: `{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`}
}

// StepEndInsert is the step_end of an INSERT; sqld writes the rowid as a
// number here.
func StepEndInsert(affected uint64, lastRowID int64) Line {
	return Line{text: `{"type":"step_end","affected_row_count":` + strconv.FormatUint(affected, 10) +
		`,"last_insert_rowid":` + strconv.FormatInt(lastRowID, 10) + `}`}
}

// StepError is {"type":"step_error","step":i,"error":…}.
func StepError(step int, code, message string) Line {
	b := append([]byte(`{"type":"step_error","step":`), strconv.Itoa(step)...)
	b = appendError(append(b, `,"error":`...), code, message)
	return Line{text: string(append(b, '}'))}
}

// BatchError is {"type":"error","error":…}, a failure of the whole batch
// (always the last entry).
func BatchError(code, message string) Line {
	return Line{text: string(append(appendError([]byte(`{"type":"error","error":`), code, message), '}'))}
}

// ReplicationIndex is the final entry sqld writes after a successful run.
func ReplicationIndex(n int64) Line {
	return Line{text: `{"type":"replication_index","replication_index":` + strconv.FormatInt(n, 10) + `}`}
}

// Pause flushes what was written and waits d before the next line (or
// until the client goes away).
func Pause(d time.Duration) Line { return Line{pause: d} }

// Cut flushes what was written and closes the connection mid-body: the
// chunked body never gets its end.
func Cut() Line { return Line{cut: true} }
