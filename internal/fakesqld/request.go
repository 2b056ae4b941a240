package fakesqld

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Any, in an expected JSON tree, matches any value and also an absent
// field.
var Any any = anyValue{}

type anyValue struct{}

func (anyValue) String() string { return "<any>" }

// Value is a Hrana value, as a statement argument in an expected request or
// as a column value in a reply.
type Value struct {
	typ string // "integer", "float", "text", "blob", "null"
	i   int64
	f   float64
	s   string
	b   []byte
}

// Int is an INTEGER value.
func Int(n int64) Value { return Value{typ: "integer", i: n} }

// Float is a REAL value. sqld writes infinities as null.
func Float(f float64) Value { return Value{typ: "float", f: f} }

// Text is a TEXT value.
func Text(s string) Value { return Value{typ: "text", s: s} }

// Blob is a BLOB value.
func Blob(b []byte) Value { return Value{typ: "blob", b: b} }

// Null is the NULL value.
func Null() Value { return Value{typ: "null"} }

// Vals is a row of values, for Query.
func Vals(v ...Value) []Value { return v }

// tree is the value as the expected JSON tree of a request argument.
func (v Value) tree() any {
	m := map[string]any{"type": v.typ}
	switch v.typ {
	case "integer":
		m["value"] = strconv.FormatInt(v.i, 10)
	case "float":
		m["value"] = v.f
	case "text":
		m["value"] = v.s
	case "blob":
		m["base64"] = base64.RawStdEncoding.EncodeToString(v.b)
	}
	return m
}

// appendJSON writes the value the way sqld does: integers as strings,
// integral floats with ".0", infinities as null, blobs unpadded.
func (v Value) appendJSON(dst []byte) []byte {
	switch v.typ {
	case "integer":
		return append(append(append(dst, `{"type":"integer","value":"`...), strconv.FormatInt(v.i, 10)...), `"}`...)
	case "float":
		dst = append(dst, `{"type":"float","value":`...)
		switch {
		case math.IsInf(v.f, 0) || math.IsNaN(v.f):
			dst = append(dst, "null"...)
		default:
			s := strconv.FormatFloat(v.f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eEn") {
				s += ".0"
			}
			dst = append(dst, s...)
		}
		return append(dst, '}')
	case "text":
		return append(appendString(append(dst, `{"type":"text","value":`...), v.s), '}')
	case "blob":
		return append(append(append(dst, `{"type":"blob","base64":"`...), base64.RawStdEncoding.EncodeToString(v.b)...), `"}`...)
	}
	return append(dst, `{"type":"null"}`...)
}

// Stmt is an expected statement: SQL text and arguments.
type Stmt struct {
	sql      string
	args     []Value
	named    []namedArg
	wantRows *bool
}

type namedArg struct {
	name string
	v    Value
}

// SQL is a statement with positional arguments. The request's want_rows is
// not compared unless WantRows sets it.
func SQL(sql string, args ...Value) Stmt { return Stmt{sql: sql, args: args} }

// Named adds a named argument (name as sent, e.g. ":a").
func (s Stmt) Named(name string, v Value) Stmt {
	s.named = append(append([]namedArg(nil), s.named...), namedArg{name, v})
	return s
}

// WantRows makes the request's want_rows part of the comparison (absent
// counts as true).
func (s Stmt) WantRows(want bool) Stmt {
	s.wantRows = &want
	return s
}

func (s Stmt) tree() map[string]any {
	m := map[string]any{"sql": s.sql, "want_rows": Any}
	if s.wantRows != nil {
		m["want_rows"] = *s.wantRows
	}
	if len(s.args) > 0 {
		a := make([]any, len(s.args))
		for i, v := range s.args {
			a[i] = v.tree()
		}
		m["args"] = a
	}
	if len(s.named) > 0 {
		a := make([]any, len(s.named))
		for i, n := range s.named {
			a[i] = map[string]any{"name": n.name, "value": n.v.tree()}
		}
		m["named_args"] = a
	}
	return m
}

func (s Stmt) summary() string { return strconv.Quote(snippet(s.sql)) }

// Cond is a batch step condition.
type Cond struct{ m map[string]any }

// OK is the condition "step i ran and succeeded".
func OK(step int) Cond { return Cond{map[string]any{"type": "ok", "step": float64(step)}} }

// Failed is the condition {"type":"error","step":i} (sqld: "step i is not
// ok", true for a skipped step too).
func Failed(step int) Cond { return Cond{map[string]any{"type": "error", "step": float64(step)}} }

// Not negates c.
func Not(c Cond) Cond { return Cond{map[string]any{"type": "not", "cond": c.m}} }

// And is true when all of cs are.
func And(cs ...Cond) Cond { return Cond{map[string]any{"type": "and", "conds": condList(cs)}} }

// Or is true when any of cs is.
func Or(cs ...Cond) Cond { return Cond{map[string]any{"type": "or", "conds": condList(cs)}} }

// IsAutocommit is true outside an explicit transaction (Hrana 3).
func IsAutocommit() Cond { return Cond{map[string]any{"type": "is_autocommit"}} }

func condList(cs []Cond) []any {
	l := make([]any, len(cs))
	for i, c := range cs {
		l[i] = c.m
	}
	return l
}

// BatchStep is one expected step of a batch.
type BatchStep struct {
	stmt Stmt
	cond *Cond
}

// Step is a batch step without a condition.
func Step(s Stmt) BatchStep { return BatchStep{stmt: s} }

// If gives the step a condition.
func (b BatchStep) If(c Cond) BatchStep {
	b.cond = &c
	return b
}

func (b BatchStep) tree() any {
	m := map[string]any{"stmt": b.stmt.tree()}
	if b.cond != nil {
		m["condition"] = b.cond.m
	}
	return m
}

func batchTree(steps []BatchStep) map[string]any {
	l := make([]any, len(steps))
	for i, s := range steps {
		l[i] = s.tree()
	}
	return map[string]any{"steps": l}
}

// Req is one expected stream request of a pipeline.
type Req struct {
	m   map[string]any
	sum string
}

// Execute is {"type":"execute","stmt":…}.
func Execute(s Stmt) Req {
	return Req{map[string]any{"type": "execute", "stmt": s.tree()}, "execute " + s.summary()}
}

// Batch is {"type":"batch","batch":{"steps":[…]}}.
func Batch(steps ...BatchStep) Req {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.stmt.summary()
	}
	return Req{map[string]any{"type": "batch", "batch": batchTree(steps)}, "batch [" + strings.Join(parts, ", ") + "]"}
}

// Sequence is {"type":"sequence","sql":…}.
func Sequence(sql string) Req {
	return Req{map[string]any{"type": "sequence", "sql": sql}, "sequence " + strconv.Quote(snippet(sql))}
}

// Describe is {"type":"describe","sql":…}.
func Describe(sql string) Req {
	return Req{map[string]any{"type": "describe", "sql": sql}, "describe " + strconv.Quote(snippet(sql))}
}

// Index makes the request carry replication_index n (as sqld writes it, a
// decimal string): on an execute's statement, a batch, or a sequence or
// describe itself. Without it the request must carry none.
func (r Req) Index(n uint64) Req {
	m := make(map[string]any, len(r.m))
	for k, v := range r.m {
		m[k] = v
	}
	at := m
	for _, k := range []string{"stmt", "batch"} {
		if inner, ok := m[k].(map[string]any); ok {
			at = make(map[string]any, len(inner)+1)
			for k2, v := range inner {
				at[k2] = v
			}
			m[k] = at
		}
	}
	at["replication_index"] = strconv.FormatUint(n, 10)
	return Req{m, r.sum + " @" + strconv.FormatUint(n, 10)}
}

// Close is {"type":"close"}.
func Close() Req { return Req{map[string]any{"type": "close"}, "close"} }

// GetAutocommit is {"type":"get_autocommit"}.
func GetAutocommit() Req { return Req{map[string]any{"type": "get_autocommit"}, "get_autocommit"} }

// StoreSQL is {"type":"store_sql","sql_id":id,"sql":…}.
func StoreSQL(id int32, sql string) Req {
	return Req{map[string]any{"type": "store_sql", "sql_id": float64(id), "sql": sql}, fmt.Sprintf("store_sql %d", id)}
}

// CloseSQL is {"type":"close_sql","sql_id":id}.
func CloseSQL(id int32) Req {
	return Req{map[string]any{"type": "close_sql", "sql_id": float64(id)}, fmt.Sprintf("close_sql %d", id)}
}

func batonTree(baton string) any {
	if baton == "" {
		return nil
	}
	return baton
}

func snippet(s string) string {
	if len(s) > 48 {
		return s[:45] + "..."
	}
	return s
}
