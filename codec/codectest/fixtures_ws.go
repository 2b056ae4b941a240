package codectest

// This file: the fixtures of server messages (KindServerMsg), the
// messages of Hrana over WebSocket in the JSON subprotocols.

import (
	"math"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// Rules of the server messages, which docs/CODECS.md states with the
// others.
const (
	ruleServer    = `a server message needs "type" (hello_ok, hello_error, response_ok or response_error); hello_error and response_error need an "error" object, response_ok a "response" object with a known "type"; members that the type does not use are ignored whatever their JSON type`
	ruleRequestID = `request_id: an int32, as a number or a string (as last_insert_rowid), taken from its last occurrence; null or absent is 0`
	ruleFetch     = `a fetch_cursor response: "entries" an array (or null) of cursor entry objects, each decoded as a cursor line is; "done" a boolean (or null)`
	ruleSocketRes = `a socket response's members depend on its type as a stream response's do: "result" for execute, batch and describe (optional), "is_autocommit" for get_autocommit, "entries" and "done" for fetch_cursor; the socket's type names (open_stream, close_stream, ...) are not the HTTP ones (close)`
)

func (b *builder) server(name, rule, input string, want codec.ServerMsg) {
	b.ok(KindServerMsg, name, rule, input, Result{Server: want})
}

// --- expected values ---

func helloOK() codec.ServerMsg { return codec.ServerMsg{Type: codec.ServerHelloOK} }

func helloErr(msg, code string) codec.ServerMsg {
	return codec.ServerMsg{Type: codec.ServerHelloError, Error: codec.Error{Message: msg, Code: code}}
}

func respOK(id int32, r codec.SocketResponse) codec.ServerMsg {
	return codec.ServerMsg{Type: codec.ServerResponseOK, RequestID: id, Response: r}
}

func respErr(id int32, msg, code string) codec.ServerMsg {
	return codec.ServerMsg{Type: codec.ServerResponseError, RequestID: id, Error: codec.Error{Message: msg, Code: code}}
}

func sockType(t codec.SocketRequestType) codec.SocketResponse { return codec.SocketResponse{Type: t} }

func sockExec(r codec.StmtResult) codec.SocketResponse {
	return codec.SocketResponse{Type: codec.SocketExecute, Result: r}
}

func sockBatch(b codec.BatchResult) codec.SocketResponse {
	return codec.SocketResponse{Type: codec.SocketBatch, Batch: b}
}

func sockDescribe(d codec.DescribeResult) codec.SocketResponse {
	return codec.SocketResponse{Type: codec.SocketDescribe, Describe: d}
}

func sockAutocommit(v bool) codec.SocketResponse {
	return codec.SocketResponse{Type: codec.SocketGetAutocommit, IsAutocommit: v}
}

func sockFetch(done bool, es ...codec.CursorEntry) codec.SocketResponse {
	return codec.SocketResponse{Type: codec.SocketFetchCursor, Entries: es, Done: done}
}

// Cursor entries.
func eBegin(step uint32, c []codec.Col) codec.CursorEntry {
	return codec.CursorEntry{Type: codec.EntryStepBegin, Step: step, Cols: c}
}

func eEnd(arc uint64, lir int64, has bool) codec.CursorEntry {
	return codec.CursorEntry{Type: codec.EntryStepEnd, AffectedRowCount: arc, LastInsertRowID: lir, HasLastInsertRowID: has}
}

func eRow(v ...codec.Value) codec.CursorEntry { return codec.CursorEntry{Type: codec.EntryRow, Row: v} }

func eStepErr(step uint32, msg, code string) codec.CursorEntry {
	return codec.CursorEntry{Type: codec.EntryStepError, Step: step, Error: codec.Error{Message: msg, Code: code}}
}

func eErr(msg, code string) codec.CursorEntry {
	return codec.CursorEntry{Type: codec.EntryError, Error: codec.Error{Message: msg, Code: code}}
}

func eIndex(ri uint64) codec.CursorEntry {
	return codec.CursorEntry{Type: codec.EntryReplicationIndex, ReplicationIndex: ri, HasReplicationIndex: true}
}

// --- inputs ---

// okMsg is a response_ok message with the request id (JSON text) and the
// response object.
func okMsg(id, response string) string {
	return `{"type":"response_ok","request_id":` + id + `,"response":` + response + `}`
}

// errMsg is a response_error message.
func errMsg(id, errObj string) string {
	return `{"type":"response_error","request_id":` + id + `,"error":` + errObj + `}`
}

func addSocket(b *builder) {
	// hello_ok and hello_error.
	b.server("hello-ok", ruleServer, `{"type":"hello_ok"}`, helloOK())
	b.server("hello-ok-ignores-members", ruleIrrel, `{"type":"hello_ok","request_id":"x","error":5,"response":[1]}`, helloOK())
	b.server("hello-ok-unknown-fields", ruleUnknown, `{"x":{"y":[1,{"z":null}]},"type":"hello_ok","w":-1.5e3}`, helloOK())
	b.server("hello-ok-escaped-key", ruleUnknown, `{"\u0074ype":"hello_ok"}`, helloOK())
	b.server("hello-ok-whitespace", ruleWS, " \n\t{ \"type\" :\r\"hello_ok\" } \r\n", helloOK())
	b.server("hello-error", ruleServer, `{"type":"hello_error","error":{"message":"Authentication failed: m","code":"AUTH_JWT_INVALID"}}`,
		helloErr("Authentication failed: m", "AUTH_JWT_INVALID"))
	b.server("hello-error-before-type", ruleServer, `{"error":{"code":"C","message":"m"},"type":"hello_error"}`, helloErr("m", "C"))
	b.server("hello-error-no-code", ruleObjects, `{"type":"hello_error","error":{"message":"m","code":null}}`, helloErr("m", ""))
	b.server("hello-error-empty", ruleObjects, `{"type":"hello_error","error":{},"request_id":true}`, helloErr("", ""))
	b.fail(KindServerMsg, "hello-error-without-error", ruleServer, `{"type":"hello_error"}`)
	b.fail(KindServerMsg, "hello-error-null", ruleServer, `{"type":"hello_error","error":null}`)
	b.fail(KindServerMsg, "hello-error-string", ruleType, `{"type":"hello_error","error":"m"}`)
	b.fail(KindServerMsg, "hello-error-message-number", ruleType, `{"type":"hello_error","error":{"message":5}}`)

	// The message type.
	b.fail(KindServerMsg, "no-type", ruleServer, `{}`)
	b.fail(KindServerMsg, "type-null", ruleServer, `{"type":null}`)
	b.fail(KindServerMsg, "type-unknown", ruleServer, `{"type":"hello"}`)
	b.fail(KindServerMsg, "type-case", ruleUnknown, `{"type":"HELLO_OK"}`)
	b.fail(KindServerMsg, "type-number", ruleType, `{"type":1}`)
	b.fail(KindServerMsg, "type-null-last", ruleNull, `{"type":"hello_ok","type":null}`)
	b.server("type-last-wins", ruleLastWins, `{"type":"hello_error","type":"hello_ok"}`, helloOK())
	b.fail(KindServerMsg, "empty", ruleTop, ``)
	b.fail(KindServerMsg, "array", ruleTop, `[{"type":"hello_ok"}]`)
	b.fail(KindServerMsg, "string", ruleTop, `"hello_ok"`)
	b.fail(KindServerMsg, "null", ruleTop, `null`)
	b.fail(KindServerMsg, "trailing", ruleTrailing, `{"type":"hello_ok"} x`)
	b.fail(KindServerMsg, "two-messages", ruleTrailing, `{"type":"hello_ok"}{"type":"hello_ok"}`)
	b.fail(KindServerMsg, "truncated", ruleSyntax, `{"type":"hello_ok"`)
	b.fail(KindServerMsg, "trailing-comma", ruleSyntax, `{"type":"hello_ok",}`)
	b.server("depth-64", ruleDepth, `{"type":"hello_ok","x":`+deep(63)+`}`, helloOK())
	b.fail(KindServerMsg, "depth-65", ruleDepth, `{"type":"hello_ok","x":`+deep(64)+`}`)
	b.fail(KindServerMsg, "depth-65-in-entries", ruleDepth, okMsg("1", `{"type":"fetch_cursor","entries":[{"type":"row","row":[{"type":"null","x":`+deep(59)+`}]}]}`))
	b.failUTF8(KindServerMsg, "utf8-in-message", []byte("{\"type\":\"hello_error\",\"error\":{\"message\":\"\xff\"}}"))
	b.failUTF8(KindServerMsg, "utf8-in-unknown-field", []byte("{\"type\":\"hello_ok\",\"x\":\"\xc0\xaf\"}"))
	b.failUTF8(KindServerMsg, "utf8-in-row", []byte(okMsg("1", "{\"type\":\"fetch_cursor\",\"entries\":[{\"type\":\"row\",\"row\":[{\"type\":\"text\",\"value\":\"\xed\xa0\x80\"}]}]}")))

	// A response of every type.
	for _, t := range []codec.SocketRequestType{codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketOpenCursor,
		codec.SocketCloseCursor, codec.SocketSequence, codec.SocketStoreSQL, codec.SocketCloseSQL} {
		b.server("response-"+t.String(), ruleSocketRes, okMsg("1", `{"type":"`+t.String()+`"}`), respOK(1, sockType(t)))
	}
	exec := rows(cols("a", "INTEGER", "b", ""), row(vI(1), vT("x\n")), row(vN(), vB(0, 1)), row(vF(-0.5), vF(nullFloat)))
	exec.ReplicationIndex, exec.HasReplicationIndex, exec.RowsRead, exec.QueryDurationMS = 5, true, 3, 0.5
	b.server("response-execute", ruleSocketRes, okMsg("2", `{"type":"execute","result":{"cols":[{"name":"a","decltype":"INTEGER"},{"name":"b","decltype":null}],`+
		`"rows":[[{"type":"integer","value":"1"},{"type":"text","value":"x\n"}],[{"type":"null"},{"type":"blob","base64":"AAE"}],`+
		`[{"type":"float","value":-0.5},{"type":"float","value":null}]],`+
		`"affected_row_count":0,"last_insert_rowid":null,"replication_index":"5","rows_read":3,"rows_written":0,"query_duration_ms":0.5}}`),
		respOK(2, sockExec(exec)))
	ins := codec.StmtResult{AffectedRowCount: 2, LastInsertRowID: -3, HasLastInsertRowID: true, RowsWritten: 2}
	b.server("response-execute-insert", ruleInt64, okMsg("3", `{"type":"execute","result":{"cols":[],"rows":[],"affected_row_count":2,"last_insert_rowid":"-3","rows_written":2}}`),
		respOK(3, sockExec(ins)))
	b.server("response-execute-without-result", ruleOptional, okMsg("4", `{"type":"execute"}`), respOK(4, sockExec(codec.StmtResult{})))
	b.server("response-execute-result-null", ruleNull, okMsg("4", `{"type":"execute","result":null}`), respOK(4, sockExec(codec.StmtResult{})))
	b.fail(KindServerMsg, "response-execute-result-string", ruleType, okMsg("4", `{"type":"execute","result":"r"}`))
	b.fail(KindServerMsg, "response-execute-row-length", ruleRowLen, okMsg("4", `{"type":"execute","result":{"cols":[{"name":"a"}],"rows":[[]]}}`))
	b.server("response-batch", ruleBatch, okMsg("5", `{"type":"batch","result":{"step_results":[{"cols":[{"name":"n","decltype":null}],"rows":[[{"type":"integer","value":"7"}]]},null,null],`+
		`"step_errors":[null,{"message":"m","code":"C"}],"replication_index":"8"}}`),
		respOK(5, sockBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(rows(cols("n", ""), row(vI(7)))), stepErr("m", "C"), stepSkip},
			ReplicationIndex: 8, HasReplicationIndex: true})))
	b.fail(KindServerMsg, "response-batch-both", ruleBatch, okMsg("5", `{"type":"batch","result":{"step_results":[{}],"step_errors":[{}]}}`))
	b.server("response-describe", ruleSocketRes, okMsg("6", `{"type":"describe","result":{"params":[{"name":":a"},{"name":null}],"cols":[{"name":"x","decltype":"TEXT"},{"name":"?","decltype":null}],"is_explain":false,"is_readonly":true}}`),
		respOK(6, sockDescribe(codec.DescribeResult{Params: []codec.DescribeParam{{Name: ":a"}, {}}, Cols: cols("x", "TEXT", "?", ""), IsReadonly: true})))
	b.server("response-get-autocommit", ruleSocketRes, okMsg("7", `{"type":"get_autocommit","is_autocommit":true}`), respOK(7, sockAutocommit(true)))
	b.server("response-get-autocommit-false", ruleSocketRes, okMsg("7", `{"type":"get_autocommit","is_autocommit":false}`), respOK(7, sockAutocommit(false)))
	b.server("response-get-autocommit-null", ruleNull, okMsg("7", `{"type":"get_autocommit","is_autocommit":null}`), respOK(7, sockAutocommit(false)))
	b.fail(KindServerMsg, "response-get-autocommit-string", ruleType, okMsg("7", `{"type":"get_autocommit","is_autocommit":"true"}`))
	b.fail(KindServerMsg, "response-http-type", ruleSocketRes, okMsg("1", `{"type":"close"}`))
	b.fail(KindServerMsg, "response-unknown-type", ruleServer, okMsg("1", `{"type":"nope"}`))
	b.fail(KindServerMsg, "response-without-type", ruleServer, okMsg("1", `{}`))
	b.fail(KindServerMsg, "response-type-number", ruleType, okMsg("1", `{"type":4}`))
	b.fail(KindServerMsg, "response-ok-without-response", ruleServer, `{"type":"response_ok","request_id":1}`)
	b.fail(KindServerMsg, "response-ok-response-null", ruleServer, `{"type":"response_ok","request_id":1,"response":null}`)
	b.fail(KindServerMsg, "response-ok-response-string", ruleType, `{"type":"response_ok","request_id":1,"response":"open_stream"}`)
	b.fail(KindServerMsg, "response-ok-response-array", ruleType, `{"type":"response_ok","request_id":1,"response":[]}`)
	b.server("response-before-type", ruleServer, `{"response":{"type":"open_stream"},"request_id":3,"type":"response_ok"}`,
		respOK(3, sockType(codec.SocketOpenStream)))
	b.server("response-ignored-for-error", ruleIrrel, `{"type":"response_error","request_id":1,"response":{"type":"nope"},"error":{"message":"m","code":"C"}}`,
		respErr(1, "m", "C"))

	// fetch_cursor.
	b.server("fetch-cursor", ruleFetch, okMsg("8", `{"type":"fetch_cursor","entries":[`+
		`{"type":"step_begin","step":0,"cols":[{"name":"a","decltype":"INTEGER"}]},`+
		`{"type":"row","row":[{"type":"integer","value":"1"}]},{"type":"row","row":[{"type":"text","value":"t\u00e9"}]},`+
		`{"type":"step_end","affected_row_count":1,"last_insert_rowid":2},`+
		`{"type":"step_error","step":1,"error":{"message":"m","code":"C"}},`+
		`{"type":"error","error":{"message":"e","code":"E"}},`+
		`{"type":"future_entry","x":1},`+
		`{"type":"replication_index","replication_index":null},`+
		`{"type":"replication_index","replication_index":9}],"done":true}`),
		respOK(8, sockFetch(true, eBegin(0, cols("a", "INTEGER")), eRow(vI(1)), eRow(vT("té")), eEnd(1, 2, true),
			eStepErr(1, "m", "C"), eErr("e", "E"), codec.CursorEntry{}, codec.CursorEntry{Type: codec.EntryReplicationIndex}, eIndex(9))))
	b.server("fetch-cursor-empty", ruleFetch, okMsg("8", `{"type":"fetch_cursor","entries":[],"done":false}`), respOK(8, sockFetch(false)))
	b.server("fetch-cursor-entries-null", ruleNull, okMsg("8", `{"type":"fetch_cursor","entries":null,"done":null}`), respOK(8, sockFetch(false)))
	b.server("fetch-cursor-members-absent", ruleFetch, okMsg("8", `{"type":"fetch_cursor"}`), respOK(8, sockFetch(false)))
	b.server("fetch-cursor-before-type", ruleFetch, okMsg("8", `{"entries":[{"type":"row","row":[]}],"done":true,"type":"fetch_cursor"}`),
		respOK(8, sockFetch(true, eRow())))
	b.server("fetch-cursor-members-of-other-types", ruleIrrel, okMsg("8", `{"type":"fetch_cursor","result":5,"is_autocommit":"x","entries":[]}`),
		respOK(8, sockFetch(false)))
	b.server("fetch-cursor-members-ignored", ruleIrrel, okMsg("8", `{"type":"execute","entries":5,"done":"x"}`), respOK(8, sockExec(codec.StmtResult{})))
	b.fail(KindServerMsg, "fetch-cursor-entries-object", ruleType, okMsg("8", `{"type":"fetch_cursor","entries":{}}`))
	b.fail(KindServerMsg, "fetch-cursor-entries-string", ruleType, okMsg("8", `{"type":"fetch_cursor","entries":"[]"}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-null", ruleFetch, okMsg("8", `{"type":"fetch_cursor","entries":[null]}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-array", ruleFetch, okMsg("8", `{"type":"fetch_cursor","entries":[[]]}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-number", ruleFetch, okMsg("8", `{"type":"fetch_cursor","entries":[1]}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-bad-step", ruleUint, okMsg("8", `{"type":"fetch_cursor","entries":[{"type":"step_begin","step":-1}]}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-type-number", ruleType, okMsg("8", `{"type":"fetch_cursor","entries":[{"type":7}]}`))
	b.fail(KindServerMsg, "fetch-cursor-entry-bad-value", ruleValue, okMsg("8", `{"type":"fetch_cursor","entries":[{"type":"row","row":[{"type":"integer","value":1.5}]}]}`))
	b.fail(KindServerMsg, "fetch-cursor-done-string", ruleType, okMsg("8", `{"type":"fetch_cursor","entries":[],"done":"true"}`))
	b.fail(KindServerMsg, "fetch-cursor-done-number", ruleType, okMsg("8", `{"type":"fetch_cursor","entries":[],"done":1}`))

	// request_id.
	for _, c := range []struct {
		name, json string
		want       int32
	}{
		{"id-zero", `0`, 0}, {"id-negative", `-7`, -7}, {"id-min", `-2147483648`, math.MinInt32}, {"id-max", `2147483647`, math.MaxInt32},
		{"id-minus-zero", `-0`, 0}, {"id-string", `"42"`, 42}, {"id-string-plus", `"+42"`, 42}, {"id-string-leading-zeros", `"007"`, 7},
		{"id-string-negative", `"-2147483648"`, math.MinInt32}, {"id-string-escaped", `"\u0034"`, 4}, {"id-null", `null`, 0},
	} {
		b.server(c.name, ruleRequestID, okMsg(c.json, `{"type":"open_stream"}`), respOK(c.want, sockType(codec.SocketOpenStream)))
	}
	for _, c := range []struct{ name, json string }{
		{"id-above-max", `2147483648`}, {"id-below-min", `-2147483649`}, {"id-string-above-max", `"2147483648"`},
		{"id-above-int64", `9223372036854775808`}, {"id-fraction", `1.5`}, {"id-exponent", `1e3`}, {"id-bool", `true`},
		{"id-object", `{}`}, {"id-array", `[1]`}, {"id-string-bad", `"x"`}, {"id-string-empty", `""`}, {"id-string-space", `" 1"`},
	} {
		b.fail(KindServerMsg, c.name, ruleRequestID, okMsg(c.json, `{"type":"open_stream"}`))
		b.fail(KindServerMsg, c.name+"-error", ruleRequestID, errMsg(c.json, `{}`))
	}
	b.server("id-absent", ruleRequestID, `{"type":"response_ok","response":{"type":"open_stream"}}`, respOK(0, sockType(codec.SocketOpenStream)))
	b.server("id-before-type", ruleRequestID, `{"request_id":5,"type":"response_error","error":{}}`, respErr(5, "", ""))
	b.server("id-last-wins", ruleRequestID, `{"type":"response_ok","request_id":"x","request_id":3,"response":{"type":"open_stream"}}`,
		respOK(3, sockType(codec.SocketOpenStream)))
	b.fail(KindServerMsg, "id-bad-last", ruleRequestID, `{"type":"response_ok","request_id":3,"request_id":"x","response":{"type":"open_stream"}}`)

	// response_error.
	b.server("response-error", ruleServer, errMsg("3", `{"message":"SQL string could not be parsed: near X","code":"SQL_PARSE_ERROR"}`),
		respErr(3, "SQL string could not be parsed: near X", "SQL_PARSE_ERROR"))
	b.server("response-error-unknown-fields", ruleUnknown, errMsg("3", `{"message":"m","code":"C","details":{"a":[]}}`), respErr(3, "m", "C"))
	b.fail(KindServerMsg, "response-error-without-error", ruleServer, `{"type":"response_error","request_id":3}`)
	b.fail(KindServerMsg, "response-error-null", ruleServer, errMsg("3", `null`))
	b.fail(KindServerMsg, "response-error-array", ruleType, errMsg("3", `[]`))
	b.fail(KindServerMsg, "response-error-code-number", ruleType, errMsg("3", `{"message":"m","code":1}`))

	// Repeated keys.
	b.fail(KindServerMsg, "repeat-response-checked-in-place", ruleRepeat, `{"type":"response_ok","response":{"type":"nope"},"response":{"type":"open_stream"}}`)
	b.server("repeat-response-before-type-unchecked", ruleRepeat, `{"response":{"type":"nope"},"type":"response_ok","response":{"type":"open_stream"}}`,
		respOK(0, sockType(codec.SocketOpenStream)))
	b.server("repeat-response-not-object-first", ruleRepeat, `{"type":"response_ok","response":5,"response":{"type":"close_sql"}}`,
		respOK(0, sockType(codec.SocketCloseSQL)))
	b.fail(KindServerMsg, "repeat-error-checked-in-place", ruleRepeat, `{"type":"response_error","error":{"code":5},"error":{}}`)
	b.server("repeat-error-dropped-when-retyped", ruleRepeat, `{"type":"response_error","error":{"message":"m"},"type":"response_ok","request_id":1,"response":{"type":"close_sql"}}`,
		respOK(1, sockType(codec.SocketCloseSQL)))
	b.server("repeat-response-dropped-when-retyped", ruleRepeat, `{"type":"response_ok","request_id":2,"response":{"type":"execute","result":{"cols":[{"name":"a"}]}},"type":"response_error","error":{"message":"m","code":"C"}}`,
		respErr(2, "m", "C"))
	b.server("repeat-error-kept-when-retyped", ruleRepeat, `{"type":"hello_error","error":{"message":"m","code":"C"},"type":"response_error"}`,
		respErr(0, "m", "C"))
	b.server("repeat-id-dropped-when-retyped", ruleRepeat, `{"type":"response_error","request_id":4,"error":{},"type":"hello_error"}`, helloErr("", ""))
	b.server("repeat-entries-dropped-when-retyped", ruleRepeat, okMsg("1", `{"type":"fetch_cursor","entries":[{"type":"row","row":[]}],"done":true,"type":"execute"}`),
		respOK(1, sockExec(codec.StmtResult{})))
	b.fail(KindServerMsg, "repeat-entries-checked-in-place", ruleRepeat, okMsg("1", `{"type":"fetch_cursor","entries":[null],"entries":[]}`))
	b.server("repeat-entries-null-last", ruleNull, okMsg("1", `{"type":"fetch_cursor","entries":[{"type":"row","row":[]}],"entries":null}`),
		respOK(1, sockFetch(false)))
	b.server("repeat-done-last-wins", ruleRepeat, okMsg("1", `{"type":"fetch_cursor","done":"x","done":true}`), respOK(1, sockFetch(true)))
	b.server("repeat-entry-member-last-wins", ruleRepeat, okMsg("1", `{"type":"fetch_cursor","entries":[{"type":"step_begin","step":1,"step":2}]}`),
		respOK(1, sockFetch(false, eBegin(2, nil))))

	// Many entries, as a large fetch returns them.
	many := make([]codec.CursorEntry, 0, 200)
	var in strings.Builder
	in.WriteString(`{"type":"fetch_cursor","entries":[`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			in.WriteByte(',')
		}
		in.WriteString(`{"type":"row","row":[{"type":"integer","value":"` + strconv.Itoa(i) + `"},{"type":"text","value":"r` + strconv.Itoa(i) + `"}]}`)
		many = append(many, eRow(vI(int64(i)), vT("r"+strconv.Itoa(i))))
	}
	in.WriteString(`],"done":false}`)
	b.server("fetch-cursor-200-rows", ruleFetch, okMsg("9", in.String()), respOK(9, sockFetch(false, many...)))
}

// wsRun is what differs between the captured sessions of testdata/sqld:
// the query durations of the statement results, in order, and the value
// of 9e999 and -9e999, which are ±Inf in Protobuf but null in JSON, read
// as NaN.
type wsRun struct {
	ms             []float64
	posInf, negInf float64
}

var (
	wsJSONRun     = wsRun{ms: []float64{0.086, 0.188, 0.032, 0.045, 0.003, 0.004, 0.031}, posInf: nullFloat, negInf: nullFloat}
	wsProtobufRun = wsRun{ms: []float64{0.076, 0.107, 0.026, 0.043, 0.003, 0.004, 0.027}, posInf: math.Inf(1), negInf: math.Inf(-1)}
)

// wsSession is what the messages of a captured session (ws_session.*, see
// the README of testdata/sqld) decode to.
func wsSession(run wsRun) []codec.ServerMsg {
	ms := run.ms
	next := func() float64 {
		d := ms[0]
		ms = ms[1:]
		return d
	}
	values := rows(cols("i", "", "imin", "", "imax", "", "f", "", "negzero", "", "big", "", "tiny", "", "inf", "", "neginf", "",
		"et", "", "t", "", "esc", "", "eb", "", "b", "", "n", "", "ai", "", "af", "", "at", "", "ab", ""),
		row(vI(1), vI(math.MinInt64), vI(math.MaxInt64), vF(1.5), vF(math.Copysign(0, -1)), vF(math.MaxFloat64), vF(5e-324),
			vF(run.posInf), vF(run.negInf), vT(""), vT("héllo 😀"), vT("q\"\\\n\t\x00\x7f"), vB(), vB(0, 0xff, 0x10), vN(),
			vI(-42), vF(0.25), vT("arg"), vB(0xca, 0xfe)),
		row(vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN(), vN()))
	values.QueryDurationMS = next()
	insert := codec.StmtResult{AffectedRowCount: 1, LastInsertRowID: 2, HasLastInsertRowID: true, RowsWritten: 2, QueryDurationMS: next()}
	table := rows(cols("id", "INTEGER", "v", "TEXT", "f", "REAL", "b", "BLOB"),
		row(vI(1), vT("a"), vF(0.5), vB(1)), row(vI(2), vT("b"), vF(-1), vB()))
	table.RowsRead, table.QueryDurationMS = 2, next()
	update := codec.StmtResult{AffectedRowCount: 2, RowsRead: 2, RowsWritten: 2, QueryDurationMS: next()}
	begin := codec.StmtResult{ReplicationIndex: 7, HasReplicationIndex: true, QueryDurationMS: next()}
	rollback := codec.StmtResult{ReplicationIndex: 7, HasReplicationIndex: true, QueryDurationMS: next()}
	count := rows(cols("n", ""), row(vI(3)))
	count.ReplicationIndex, count.HasReplicationIndex, count.RowsRead, count.QueryDurationMS = 9, true, 1, next()
	cursorCols := cols("id", "INTEGER", "v", "TEXT", "f", "REAL", "b", "BLOB")
	return []codec.ServerMsg{
		helloOK(),
		respOK(1, sockType(codec.SocketOpenStream)),
		respOK(2, sockExec(values)),
		respOK(3, sockType(codec.SocketStoreSQL)),
		respErr(4, "Arguments do not match SQL parameters: value for parameter :x not found", "ARGS_INVALID"),
		respOK(5, sockDescribe(codec.DescribeResult{Params: []codec.DescribeParam{{Name: "?1"}, {Name: ":x"}}, Cols: cols("n", "", "x", ""), IsReadonly: true})),
		respOK(6, sockType(codec.SocketSequence)),
		respOK(7, sockBatch(codec.BatchResult{Steps: []codec.StepOutcome{stepOK(insert),
			stepErr("SQLite error: UNIQUE constraint failed: ws_capture.v", "SQLITE_CONSTRAINT"), stepSkip, stepOK(table), stepOK(update)},
			ReplicationIndex: 7, HasReplicationIndex: true})),
		respOK(8, sockDescribe(codec.DescribeResult{Params: []codec.DescribeParam{{}, {Name: ":v"}}, Cols: cols("id", "INTEGER", "name", "TEXT"), IsReadonly: true})),
		respOK(9, sockAutocommit(true)),
		respOK(10, sockExec(begin)),
		respOK(11, sockAutocommit(false)),
		respOK(12, sockExec(rollback)),
		respOK(13, sockType(codec.SocketOpenCursor)),
		respOK(14, sockFetch(false, eBegin(0, cursorCols), eRow(vI(1), vT("a"), vF(1), vB(1)), eRow(vI(2), vT("b"), vF(-2), vB()), eEnd(0, 0, false))),
		respOK(15, sockFetch(true, eBegin(1, nil), eEnd(1, 3, true),
			eStepErr(2, "SQLite error: no such table: ws_capture_missing", "SQLITE_UNKNOWN"),
			eBegin(4, cols("?1", "")), eStepErr(4, "Arguments do not match SQL parameters: too many parameters, expected 1 found 2", "ARGS_INVALID"),
			eBegin(5, cols("x", "", "y", "")), eRow(vF(1.5), vN()), eEnd(0, 0, false), eIndex(9))),
		respOK(16, sockType(codec.SocketCloseCursor)),
		respErr(17, "SQL string could not be parsed: syntax error around L1:6: `selec`", "SQL_PARSE_ERROR"),
		respErr(18, "SQLite error: no such table: ws_capture_missing", "SQLITE_UNKNOWN"),
		respOK(19, sockExec(count)),
		respOK(20, sockType(codec.SocketCloseSQL)),
		respOK(21, sockType(codec.SocketSequence)),
		respOK(22, sockType(codec.SocketCloseStream)),
	}
}

// wsHelloError is what ws_hello_error.* decode to.
var wsHelloError = helloErr("Authentication failed: The JWT is invalid", "AUTH_JWT_INVALID")

// addSQLDSocket adds the JSON session captured from sqld, each message and
// a truncation of it, and its hello_error.
func addSQLDSocket(b *builder) {
	lines := strings.Split(strings.TrimSuffix(string(SQLDFile("ws_session.ndjson")), "\n"), "\n")
	want := wsSession(wsJSONRun)
	if len(lines) != len(want) {
		panic("codectest: ws_session.ndjson has " + strconv.Itoa(len(lines)) + " lines")
	}
	for i, l := range lines {
		name := "sqld/ws_session-" + strconv.Itoa(i)
		b.server(name, ruleSQLD, l, want[i])
		b.fail(KindServerMsg, name+"-truncated", ruleSyntax, l[:len(l)-1])
	}
	b.server("sqld/ws_hello_error", ruleSQLD, string(SQLDFile("ws_hello_error.json")), wsHelloError)
}

// sqldProtobufFixtures are the Protobuf session captured from sqld and its
// hello_error, with ProtobufWant of what they decode to.
func sqldProtobufFixtures() []Fixture {
	var out []Fixture
	add := func(name string, input []byte, m codec.ServerMsg) {
		want := ProtobufWant(Result{Kind: KindServerMsg, Server: m})
		out = append(out, Fixture{Name: "protobuf/sqld/" + name, Kind: KindServerMsg, Input: input, Want: want, Rule: ruleSQLD})
	}
	frames := splitDelimited(SQLDFile("ws_session.pb"))
	want := wsSession(wsProtobufRun)
	if len(frames) != len(want) {
		panic("codectest: ws_session.pb has " + strconv.Itoa(len(frames)) + " messages")
	}
	for i, f := range frames {
		add("ws_session-"+strconv.Itoa(i), f, want[i])
	}
	add("ws_hello_error", SQLDFile("ws_hello_error.pb"), wsHelloError)
	return out
}

// splitDelimited splits varint-length-prefixed messages. It panics on
// malformed input: it only reads the files of testdata/sqld.
func splitDelimited(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		var n, shift uint64
		i := 0
		for ; data[i] >= 0x80; i++ {
			n |= uint64(data[i]&0x7f) << shift
			shift += 7
		}
		n |= uint64(data[i]) << shift
		data = data[i+1:]
		out = append(out, data[:n:n])
		data = data[n:]
	}
	return out
}
