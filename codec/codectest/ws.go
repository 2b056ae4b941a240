package codectest

// This file: what the tests of codec.SocketCodec implementations need
// beyond the server-message fixtures (fixtures_ws.go): the client
// messages as values (ClientMsg), their comparison, an independent reader
// of their JSON form for round trips, and the socket encode cases.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/codec"
)

// ClientMsg is a client message of Hrana over WebSocket: a hello or a
// request.
type ClientMsg struct {
	Hello   bool   // a hello message; otherwise a request
	JWT     string // Hello: "" when none is sent
	Request codec.SocketRequest
}

// OnWire returns the part of r that goes on the wire for its type (see
// codec.SocketRequest): the other fields are zeroed, and so is the SQL of
// statements and requests that name stored SQL by id, or the id of those
// that do not.
func OnWire(r *codec.SocketRequest) codec.SocketRequest {
	w := codec.SocketRequest{RequestID: r.RequestID, Type: r.Type}
	switch r.Type {
	case codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketGetAutocommit:
		w.StreamID = r.StreamID
	case codec.SocketExecute:
		w.StreamID, w.Stmt, w.ReplicationIndex = r.StreamID, stmtOnWire(r.Stmt), r.ReplicationIndex
	case codec.SocketBatch:
		w.StreamID, w.Batch = r.StreamID, batchOnWire(r.Batch)
	case codec.SocketOpenCursor:
		w.StreamID, w.CursorID, w.Batch = r.StreamID, r.CursorID, batchOnWire(r.Batch)
	case codec.SocketCloseCursor:
		w.CursorID = r.CursorID
	case codec.SocketFetchCursor:
		w.CursorID, w.MaxCount = r.CursorID, r.MaxCount
	case codec.SocketSequence, codec.SocketDescribe:
		w.StreamID, w.ReplicationIndex, w.HasSQLID = r.StreamID, r.ReplicationIndex, r.HasSQLID
		if r.HasSQLID {
			w.SQLID = r.SQLID
		} else {
			w.SQL = r.SQL
		}
	case codec.SocketStoreSQL:
		w.SQLID, w.SQL = r.SQLID, r.SQL
	case codec.SocketCloseSQL:
		w.SQLID = r.SQLID
	}
	return w
}

func stmtOnWire(s codec.Stmt) codec.Stmt {
	if s.HasSQLID {
		s.SQL = ""
	} else {
		s.SQLID = 0
	}
	return s
}

func batchOnWire(b codec.Batch) codec.Batch {
	steps := make([]codec.BatchStep, len(b.Steps))
	for i, st := range b.Steps {
		steps[i] = codec.BatchStep{Condition: st.Condition, Stmt: stmtOnWire(st.Stmt)}
	}
	b.Steps = steps
	return b
}

// DiffClientMsg compares two client messages, requests by what goes on the
// wire (OnWire): values with codec.Value.Equal, nil and empty slices
// alike, conditions by structure. It returns "" when they are equal and the
// path and values of the first difference otherwise.
func DiffClientMsg(a, b *ClientMsg) string {
	var d differ
	d.num("hello", a.Hello, b.Hello)
	if a.Hello || b.Hello {
		d.str("jwt", a.JWT, b.JWT)
		return d.msg
	}
	ra, rb := OnWire(&a.Request), OnWire(&b.Request)
	d.num("request_id", ra.RequestID, rb.RequestID)
	d.num("type", ra.Type, rb.Type)
	d.num("stream_id", ra.StreamID, rb.StreamID)
	d.num("cursor_id", ra.CursorID, rb.CursorID)
	d.num("max_count", ra.MaxCount, rb.MaxCount)
	d.at("stmt", func() { d.stmt(&ra.Stmt, &rb.Stmt) })
	d.at("batch", func() { d.batchReq(&ra.Batch, &rb.Batch) })
	d.str("sql", ra.SQL, rb.SQL)
	d.num("sql_id", ra.SQLID, rb.SQLID)
	d.num("has_sql_id", ra.HasSQLID, rb.HasSQLID)
	d.num("replication_index", ra.ReplicationIndex, rb.ReplicationIndex)
	return d.msg
}

func (d *differ) stmt(a, b *codec.Stmt) {
	d.str("sql", a.SQL, b.SQL)
	d.num("sql_id", a.SQLID, b.SQLID)
	d.num("has_sql_id", a.HasSQLID, b.HasSQLID)
	d.values("args", a.Args, b.Args)
	if d.length("named_args", len(a.NamedArgs), len(b.NamedArgs)) {
		for i := range a.NamedArgs {
			d.at("named_args/"+strconv.Itoa(i), func() {
				d.str("name", a.NamedArgs[i].Name, b.NamedArgs[i].Name)
				d.values("value", []codec.Value{a.NamedArgs[i].Value}, []codec.Value{b.NamedArgs[i].Value})
			})
		}
	}
	d.num("want_rows", a.WantRows, b.WantRows)
	d.num("replication_index", a.ReplicationIndex, b.ReplicationIndex)
}

func (d *differ) batchReq(a, b *codec.Batch) {
	if d.length("steps", len(a.Steps), len(b.Steps)) {
		for i := range a.Steps {
			d.at("steps/"+strconv.Itoa(i), func() {
				d.at("condition", func() { d.cond(a.Steps[i].Condition, b.Steps[i].Condition) })
				d.at("stmt", func() { d.stmt(&a.Steps[i].Stmt, &b.Steps[i].Stmt) })
			})
		}
	}
	d.num("replication_index", a.ReplicationIndex, b.ReplicationIndex)
}

func (d *differ) cond(a, b *codec.BatchCond) {
	if a == nil || b == nil {
		d.num("present", a != nil, b != nil)
		return
	}
	d.num("type", a.Type, b.Type)
	switch a.Type {
	case codec.CondOK, codec.CondError:
		d.num("step", a.Step, b.Step)
	case codec.CondNot:
		d.at("cond", func() { d.cond(a.Cond, b.Cond) })
	case codec.CondAnd, codec.CondOr:
		if d.length("conds", len(a.Conds), len(b.Conds)) {
			for i := range a.Conds {
				d.at("conds/"+strconv.Itoa(i), func() { d.cond(&a.Conds[i], &b.Conds[i]) })
			}
		}
	}
}

// Deliberately independent of the codecs' encoders: the socket round trips (SocketRoundTrip) compare them.

// ReadClientMsgJSON reads a client message of the JSON subprotocols as
// sqld reads it (libsql-server's hrana/ws/proto.rs), with encoding/json
// and nothing of the codecs, so that a round trip through it checks an
// encoder independently. It is strict where sqld is lenient only in
// refusing unknown members and a replication_index that is not a string
// (the encoders write strings); members sqld requires must be there, an
// absent want_rows is true, and an absent jwt is none.
func ReadClientMsgJSON(data []byte) (ClientMsg, error) {
	var top struct {
		Type      string       `json:"type"`
		JWT       *string      `json:"jwt"`
		RequestID *int32       `json:"request_id"`
		Request   *requestJSON `json:"request"`
	}
	if err := strictJSON(data, &top); err != nil {
		return ClientMsg{}, err
	}
	switch top.Type {
	case "hello":
		m := ClientMsg{Hello: true}
		if top.JWT != nil {
			m.JWT = *top.JWT
		}
		return m, nil
	case "request":
		if top.RequestID == nil || top.Request == nil {
			return ClientMsg{}, errors.New("request message without request_id or request")
		}
		r, err := top.Request.convert()
		r.RequestID = *top.RequestID
		return ClientMsg{Request: r}, err
	}
	return ClientMsg{}, fmt.Errorf("client message of type %q", top.Type)
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the message")
	}
	return nil
}

type requestJSON struct {
	Type             string     `json:"type"`
	StreamID         *int32     `json:"stream_id"`
	CursorID         *int32     `json:"cursor_id"`
	MaxCount         *uint32    `json:"max_count"`
	Stmt             *stmtJSON  `json:"stmt"`
	Batch            *batchJSON `json:"batch"`
	SQL              *string    `json:"sql"`
	SQLID            *int32     `json:"sql_id"`
	ReplicationIndex *string    `json:"replication_index"`
}

// missing collects the first required member that is absent.
type missing struct{ err error }

func (m *missing) need(present bool, what string) {
	if !present && m.err == nil {
		m.err = errors.New("missing " + what)
	}
}

func (m *missing) set(err error) {
	if err != nil && m.err == nil {
		m.err = err
	}
}

// needed returns *p, or the zero value when p is nil, which m notes as the
// first missing member (named what) unless it has an error already.
func needed[T any](m *missing, p *T, what string) T {
	m.need(p != nil, what)
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// convertNeeded is needed for a member that converts to its codec type,
// which m also notes the error of.
func convertNeeded[J, T any](m *missing, p *J, what string, convert func(*J) (T, error)) T {
	m.need(p != nil, what)
	if p == nil {
		var zero T
		return zero
	}
	v, err := convert(p)
	m.set(err)
	return v
}

func (q *requestJSON) convert() (codec.SocketRequest, error) {
	r := codec.SocketRequest{Type: codec.ParseSocketRequestType(q.Type)}
	if r.Type == codec.SocketUnknown {
		return r, fmt.Errorf("request of type %q", q.Type)
	}
	var m missing
	switch r.Type {
	case codec.SocketOpenStream, codec.SocketCloseStream, codec.SocketGetAutocommit:
		r.StreamID = needed(&m, q.StreamID, "stream_id")
	case codec.SocketExecute:
		r.StreamID = needed(&m, q.StreamID, "stream_id")
		r.Stmt = convertNeeded(&m, q.Stmt, "stmt", (*stmtJSON).convert)
		r.ReplicationIndex = index(q.ReplicationIndex, &m)
	case codec.SocketBatch, codec.SocketOpenCursor:
		r.StreamID = needed(&m, q.StreamID, "stream_id")
		if r.Type == codec.SocketOpenCursor {
			r.CursorID = needed(&m, q.CursorID, "cursor_id")
		}
		r.Batch = convertNeeded(&m, q.Batch, "batch", (*batchJSON).convert)
	case codec.SocketCloseCursor:
		r.CursorID = needed(&m, q.CursorID, "cursor_id")
	case codec.SocketFetchCursor:
		r.CursorID = needed(&m, q.CursorID, "cursor_id")
		r.MaxCount = needed(&m, q.MaxCount, "max_count")
	case codec.SocketSequence, codec.SocketDescribe:
		r.StreamID = needed(&m, q.StreamID, "stream_id")
		m.need((q.SQL != nil) != (q.SQLID != nil), "exactly one of sql and sql_id")
		if q.SQLID != nil {
			r.SQLID, r.HasSQLID = *q.SQLID, true
		} else if q.SQL != nil {
			r.SQL = *q.SQL
		}
		r.ReplicationIndex = index(q.ReplicationIndex, &m)
	case codec.SocketStoreSQL:
		r.SQLID = needed(&m, q.SQLID, "sql_id")
		r.SQL = needed(&m, q.SQL, "sql")
	case codec.SocketCloseSQL:
		r.SQLID = needed(&m, q.SQLID, "sql_id")
	}
	return r, m.err
}

// index reads a replication_index, a decimal string.
func index(s *string, m *missing) uint64 {
	if s == nil {
		return 0
	}
	v, err := strconv.ParseUint(*s, 10, 64)
	m.set(err)
	return v
}

type stmtJSON struct {
	SQL              *string        `json:"sql"`
	SQLID            *int32         `json:"sql_id"`
	Args             []valueJSON    `json:"args"`
	NamedArgs        []namedArgJSON `json:"named_args"`
	WantRows         *bool          `json:"want_rows"`
	ReplicationIndex *string        `json:"replication_index"`
}

type namedArgJSON struct {
	Name  string    `json:"name"`
	Value valueJSON `json:"value"`
}

func (s *stmtJSON) convert() (codec.Stmt, error) {
	var m missing
	st := codec.Stmt{WantRows: s.WantRows == nil || *s.WantRows} // sqld's default
	m.need((s.SQL != nil) != (s.SQLID != nil), "exactly one of sql and sql_id in a statement")
	if s.SQLID != nil {
		st.SQLID, st.HasSQLID = *s.SQLID, true
	} else if s.SQL != nil {
		st.SQL = *s.SQL
	}
	for _, a := range s.Args {
		v, err := a.value()
		m.set(err)
		st.Args = append(st.Args, v)
	}
	for _, a := range s.NamedArgs {
		v, err := a.Value.value()
		m.set(err)
		st.NamedArgs = append(st.NamedArgs, codec.NamedArg{Name: a.Name, Value: v})
	}
	st.ReplicationIndex = index(s.ReplicationIndex, &m)
	return st, m.err
}

type valueJSON struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value"`
	Base64 *string         `json:"base64"`
}

// value reads a value as sqld does: an integer as a decimal string, a
// float as a number, a blob as base64 (standard alphabet, padding
// optional).
func (v *valueJSON) value() (codec.Value, error) {
	switch v.Type {
	case "null":
		return codec.NullValue(), nil
	case "integer":
		var s string
		if err := json.Unmarshal(v.Value, &s); err != nil {
			return codec.Value{}, fmt.Errorf("integer value: %w", err)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return codec.IntValue(n), err
	case "float":
		if len(v.Value) == 0 || v.Value[0] == '"' || v.Value[0] == 'n' {
			return codec.Value{}, fmt.Errorf("float value %s", v.Value)
		}
		f, err := strconv.ParseFloat(string(v.Value), 64)
		return codec.FloatValue(f), err
	case "text":
		var s string
		if err := json.Unmarshal(v.Value, &s); err != nil {
			return codec.Value{}, fmt.Errorf("text value: %w", err)
		}
		return codec.StringValue(s), nil
	case "blob":
		if v.Base64 == nil {
			return codec.Value{}, errors.New("blob value without base64")
		}
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(*v.Base64, "="))
		return codec.BlobValue(b), err
	}
	return codec.Value{}, fmt.Errorf("value of type %q", v.Type)
}

type batchJSON struct {
	Steps *[]struct {
		Condition *condJSON `json:"condition"`
		Stmt      *stmtJSON `json:"stmt"`
	} `json:"steps"`
	ReplicationIndex *string `json:"replication_index"`
}

func (b *batchJSON) convert() (codec.Batch, error) {
	var m missing
	var bt codec.Batch
	m.need(b.Steps != nil, "steps")
	if b.Steps != nil {
		for _, st := range *b.Steps {
			var step codec.BatchStep
			if st.Condition != nil {
				c, err := st.Condition.convert()
				m.set(err)
				step.Condition = &c
			}
			step.Stmt = convertNeeded(&m, st.Stmt, "stmt of a batch step", (*stmtJSON).convert)
			bt.Steps = append(bt.Steps, step)
		}
	}
	bt.ReplicationIndex = index(b.ReplicationIndex, &m)
	return bt, m.err
}

type condJSON struct {
	Type  string      `json:"type"`
	Step  *uint32     `json:"step"`
	Cond  *condJSON   `json:"cond"`
	Conds *[]condJSON `json:"conds"`
}

// condTypes are the condition types by their wire names.
var condTypes = map[string]codec.CondType{
	"ok": codec.CondOK, "error": codec.CondError, "not": codec.CondNot,
	"and": codec.CondAnd, "or": codec.CondOr, "is_autocommit": codec.CondIsAutocommit,
}

func (c *condJSON) convert() (codec.BatchCond, error) {
	var m missing
	out := codec.BatchCond{Type: condTypes[c.Type]}
	switch out.Type {
	case codec.CondOK, codec.CondError:
		out.Step = needed(&m, c.Step, "step of a condition")
	case codec.CondNot:
		m.need(c.Cond != nil, "cond of a not condition")
		if c.Cond != nil {
			sub, err := c.Cond.convert()
			m.set(err)
			out.Cond = &sub
		}
	case codec.CondAnd, codec.CondOr:
		m.need(c.Conds != nil, "conds")
		if c.Conds != nil {
			for i := range *c.Conds {
				sub, err := (*c.Conds)[i].convert()
				m.set(err)
				out.Conds = append(out.Conds, sub)
			}
		}
	case codec.CondIsAutocommit:
	default:
		m.set(fmt.Errorf("condition of type %q", c.Type))
	}
	return out, m.err
}

// socketEncodeCases are the encode cases of socket messages.
func socketEncodeCases() []EncodeCase {
	const (
		ruleWS   = "the WebSocket message shapes (libsql-server's hrana/ws/proto.rs): stream_id, cursor_id, sql_id and max_count as numbers, replication_index as a string, every member of the type always"
		ruleFail = "text that is not valid UTF-8 (SQL, values, the JWT), NaN and ±Inf floats and unknown types are rejected with an *EncodeError"
	)
	hello := func(name, jwt, want string) EncodeCase {
		return EncodeCase{Name: "socket/" + name, Hello: &jwt, Want: want, Rule: ruleWS}
	}
	req := func(name string, r codec.SocketRequest, want string) EncodeCase {
		return EncodeCase{Name: "socket/" + name, Socket: &r, Want: want, Rule: ruleWS}
	}
	fail := func(name string, r codec.SocketRequest, errIs error) EncodeCase {
		return EncodeCase{Name: "socket/" + name, Socket: &r, Fail: true, ErrIs: errIs, Rule: ruleFail}
	}
	msg := func(id int, request string) string {
		return `{"type":"request","request_id":` + strconv.Itoa(id) + `,"request":` + request + `}`
	}
	sel := codec.Stmt{SQL: "select ?", Args: []codec.Value{vI(-5), vF(1.5), vT("é\n"), vB(0xfb, 0xff), vN()}, WantRows: true}
	selJSON := `{"sql":"select ?","args":[{"type":"integer","value":"-5"},{"type":"float","value":1.5},{"type":"text","value":"é\n"},{"type":"blob","base64":"+/8"},{"type":"null"}],"want_rows":true}`
	batch := codec.Batch{Steps: []codec.BatchStep{
		{Stmt: codec.Stmt{SQL: "begin"}},
		{Condition: &codec.BatchCond{Type: codec.CondAnd, Conds: []codec.BatchCond{{Type: codec.CondOK, Step: 0},
			{Type: codec.CondNot, Cond: &codec.BatchCond{Type: codec.CondIsAutocommit}}}},
			Stmt: codec.Stmt{SQLID: 2, HasSQLID: true, NamedArgs: []codec.NamedArg{{Name: ":a", Value: vI(1)}}}},
		{Condition: &codec.BatchCond{Type: codec.CondOr, Conds: []codec.BatchCond{{Type: codec.CondError, Step: 1}}}, Stmt: codec.Stmt{SQL: "rollback"}},
	}, ReplicationIndex: 77}
	batchJSON := `{"steps":[{"stmt":{"sql":"begin","want_rows":false}},
		{"condition":{"type":"and","conds":[{"type":"ok","step":0},{"type":"not","cond":{"type":"is_autocommit"}}]},
		 "stmt":{"sql_id":2,"named_args":[{"name":":a","value":{"type":"integer","value":"1"}}],"want_rows":false}},
		{"condition":{"type":"or","conds":[{"type":"error","step":1}]},"stmt":{"sql":"rollback","want_rows":false}}],"replication_index":"77"}`
	badText := codec.Value{Type: codec.Text, Bytes: []byte("a\xffb")}
	badJWT := "\xff"
	return []EncodeCase{
		hello("hello-without-jwt", "", `{"type":"hello","jwt":null}`),
		hello("hello-jwt", "eyJhbGciOiJFZERTQSJ9.e30.c2ln-_", `{"type":"hello","jwt":"eyJhbGciOiJFZERTQSJ9.e30.c2ln-_"}`),
		req("open-stream", codec.SocketRequest{RequestID: 1, Type: codec.SocketOpenStream, StreamID: 7},
			msg(1, `{"type":"open_stream","stream_id":7}`)),
		req("open-stream-zero-ids", codec.SocketRequest{Type: codec.SocketOpenStream},
			msg(0, `{"type":"open_stream","stream_id":0}`)),
		req("close-stream", codec.SocketRequest{RequestID: math.MaxInt32, Type: codec.SocketCloseStream, StreamID: math.MinInt32},
			msg(math.MaxInt32, `{"type":"close_stream","stream_id":-2147483648}`)),
		req("execute", codec.SocketRequest{RequestID: -1, Type: codec.SocketExecute, StreamID: 1, Stmt: sel},
			msg(-1, `{"type":"execute","stream_id":1,"stmt":`+selJSON+`}`)),
		req("execute-replication-index", codec.SocketRequest{RequestID: 2, Type: codec.SocketExecute, StreamID: 1,
			Stmt: codec.Stmt{SQL: "select 1"}, ReplicationIndex: math.MaxUint64},
			msg(2, `{"type":"execute","stream_id":1,"stmt":{"sql":"select 1","want_rows":false},"replication_index":"18446744073709551615"}`)),
		req("execute-stmt-index-stays-in-stmt", codec.SocketRequest{RequestID: 3, Type: codec.SocketExecute, StreamID: 1,
			Stmt: codec.Stmt{SQLID: 4, HasSQLID: true, SQL: "ignored", ReplicationIndex: 5}},
			msg(3, `{"type":"execute","stream_id":1,"stmt":{"sql_id":4,"replication_index":"5","want_rows":false}}`)),
		req("batch", codec.SocketRequest{RequestID: 4, Type: codec.SocketBatch, StreamID: 2, Batch: batch},
			msg(4, `{"type":"batch","stream_id":2,"batch":`+batchJSON+`}`)),
		req("batch-empty", codec.SocketRequest{RequestID: 5, Type: codec.SocketBatch, StreamID: 2},
			msg(5, `{"type":"batch","stream_id":2,"batch":{"steps":[]}}`)),
		req("open-cursor", codec.SocketRequest{RequestID: 6, Type: codec.SocketOpenCursor, StreamID: 2, CursorID: 9, Batch: batch},
			msg(6, `{"type":"open_cursor","stream_id":2,"cursor_id":9,"batch":`+batchJSON+`}`)),
		req("close-cursor", codec.SocketRequest{RequestID: 7, Type: codec.SocketCloseCursor, StreamID: 2, CursorID: 9},
			msg(7, `{"type":"close_cursor","cursor_id":9}`)),
		req("fetch-cursor", codec.SocketRequest{RequestID: 8, Type: codec.SocketFetchCursor, CursorID: 9, MaxCount: math.MaxUint32},
			msg(8, `{"type":"fetch_cursor","cursor_id":9,"max_count":4294967295}`)),
		req("fetch-cursor-zero", codec.SocketRequest{RequestID: 8, Type: codec.SocketFetchCursor},
			msg(8, `{"type":"fetch_cursor","cursor_id":0,"max_count":0}`)),
		req("sequence", codec.SocketRequest{RequestID: 9, Type: codec.SocketSequence, StreamID: 3, SQL: "create table t(x); drop table t"},
			msg(9, `{"type":"sequence","stream_id":3,"sql":"create table t(x); drop table t"}`)),
		req("sequence-sql-id-replication-index", codec.SocketRequest{RequestID: 10, Type: codec.SocketSequence, StreamID: 3,
			SQL: "\xff is not sent", SQLID: -4, HasSQLID: true, ReplicationIndex: 12},
			msg(10, `{"type":"sequence","stream_id":3,"sql_id":-4,"replication_index":"12"}`)),
		req("describe", codec.SocketRequest{RequestID: 11, Type: codec.SocketDescribe, StreamID: 3, SQL: "select :a", ReplicationIndex: 1},
			msg(11, `{"type":"describe","stream_id":3,"sql":"select :a","replication_index":"1"}`)),
		req("describe-sql-id", codec.SocketRequest{RequestID: 12, Type: codec.SocketDescribe, StreamID: 3, HasSQLID: true},
			msg(12, `{"type":"describe","stream_id":3,"sql_id":0}`)),
		req("store-sql", codec.SocketRequest{RequestID: 13, Type: codec.SocketStoreSQL, StreamID: 3, SQLID: 2, SQL: "select \"x\""},
			msg(13, `{"type":"store_sql","sql_id":2,"sql":"select \"x\""}`)),
		req("close-sql", codec.SocketRequest{RequestID: 14, Type: codec.SocketCloseSQL, SQLID: -2},
			msg(14, `{"type":"close_sql","sql_id":-2}`)),
		req("get-autocommit", codec.SocketRequest{RequestID: 15, Type: codec.SocketGetAutocommit, StreamID: 3},
			msg(15, `{"type":"get_autocommit","stream_id":3}`)),

		{Name: "socket/hello-jwt-utf8", Hello: &badJWT, Fail: true, ErrIs: codec.ErrInvalidUTF8, Rule: ruleFail},
		fail("unknown-type", codec.SocketRequest{RequestID: 1}, nil),
		fail("bad-type", codec.SocketRequest{Type: 200}, nil),
		fail("execute-nan", codec.SocketRequest{Type: codec.SocketExecute, Stmt: codec.Stmt{Args: []codec.Value{vF(math.NaN())}}}, nil),
		fail("execute-text-utf8", codec.SocketRequest{Type: codec.SocketExecute, Stmt: codec.Stmt{Args: []codec.Value{badText}}}, codec.ErrInvalidUTF8),
		fail("execute-sql-utf8", codec.SocketRequest{Type: codec.SocketExecute, Stmt: codec.Stmt{SQL: "\xc0\x80"}}, codec.ErrInvalidUTF8),
		fail("batch-inf", codec.SocketRequest{Type: codec.SocketBatch, Batch: codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{Args: []codec.Value{vF(math.Inf(-1))}}}}}}, nil),
		fail("open-cursor-bad-cond", codec.SocketRequest{Type: codec.SocketOpenCursor, Batch: codec.Batch{Steps: []codec.BatchStep{{Condition: &codec.BatchCond{Type: codec.CondNot}}}}}, nil),
		fail("sequence-utf8", codec.SocketRequest{Type: codec.SocketSequence, SQL: "\xff"}, codec.ErrInvalidUTF8),
		fail("describe-utf8", codec.SocketRequest{Type: codec.SocketDescribe, SQL: "\xff"}, codec.ErrInvalidUTF8),
		fail("store-sql-utf8", codec.SocketRequest{Type: codec.SocketStoreSQL, SQL: "\xff"}, codec.ErrInvalidUTF8),
		fail("named-arg-utf8", codec.SocketRequest{Type: codec.SocketExecute, Stmt: codec.Stmt{NamedArgs: []codec.NamedArg{{Name: "\xff"}}}}, codec.ErrInvalidUTF8),
	}
}
