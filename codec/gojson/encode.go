package gojson

import (
	"strconv"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/gohrana/libsql/codec"
)

// Wire structs of the requests. Slices that the server refuses as null
// (requests, steps, conds) are always non-nil; args and named_args are
// omitted when empty.

type pipelineReqW struct {
	Baton    *string          `json:"baton"`
	Requests []streamRequestW `json:"requests"`
}

type cursorReqW struct {
	Baton *string `json:"baton"`
	Batch batchW  `json:"batch"`
}

type streamRequestW struct {
	Type  string  `json:"type"`
	Stmt  *stmtW  `json:"stmt,omitempty"`
	Batch *batchW `json:"batch,omitempty"`
	SQLID *int32  `json:"sql_id,omitempty"`
	SQL   *string `json:"sql,omitempty"`
	// ReplicationIndex is sent as a decimal string, as sqld writes it.
	ReplicationIndex uint64 `json:"replication_index,omitempty,string"`
}

type stmtW struct {
	SQL              *string     `json:"sql,omitempty"`
	SQLID            *int32      `json:"sql_id,omitempty"`
	Args             []valueOutW `json:"args,omitempty"`
	NamedArgs        []namedArgW `json:"named_args,omitempty"`
	ReplicationIndex uint64      `json:"replication_index,omitempty,string"`
	WantRows         bool        `json:"want_rows"`
}

type namedArgW struct {
	Name  string    `json:"name"`
	Value valueOutW `json:"value"`
}

type valueOutW struct {
	Type   string  `json:"type"`
	Value  any     `json:"value,omitempty"`  // string (integer, text) or floatOut
	Base64 *string `json:"base64,omitempty"` // blob
}

type batchW struct {
	Steps            []batchStepW `json:"steps"`
	ReplicationIndex uint64       `json:"replication_index,omitempty,string"`
}

type batchStepW struct {
	Condition *condW `json:"condition,omitempty"`
	Stmt      stmtW  `json:"stmt"`
}

type condW struct {
	Type  string   `json:"type"`
	Step  *uint32  `json:"step,omitempty"`
	Cond  *condW   `json:"cond,omitempty"`
	Conds *[]condW `json:"conds,omitempty"`
}

// floatOut is a float that codec.EncodableFloat accepts, written by
// codec.AppendFloat (shortest round-trip form, ".0" on integral values).
// It stays a float64 until marshalled: boxed in valueOutW.Value, that is
// cheaper than the formatted bytes.
type floatOut float64

// MarshalJSON implements json.Marshaler.
func (f floatOut) MarshalJSON() ([]byte, error) {
	b, _ := codec.AppendFloat(nil, float64(f))
	return b, nil
}

var marshalOptions = []json.EncodeOptionFunc{json.DisableHTMLEscape()}

// AppendPipelineRequest appends the encoded request to dst.
func (jsonCodec) AppendPipelineRequest(dst []byte, req *codec.PipelineRequest) (out []byte, err error) {
	defer recoverEncode(&err)
	w := pipelineReqW{Requests: make([]streamRequestW, 0, len(req.Requests))}
	if w.Baton, err = baton(req.Baton); err != nil {
		return dst, err
	}
	for i := range req.Requests {
		r, err := convertRequest(&req.Requests[i])
		if err != nil {
			return dst, err
		}
		w.Requests = append(w.Requests, r)
	}
	return marshalAppend(dst, &w)
}

// AppendCursorRequest appends the encoded cursor request to dst.
func (jsonCodec) AppendCursorRequest(dst []byte, req *codec.CursorRequest) (out []byte, err error) {
	defer recoverEncode(&err)
	var w cursorReqW
	if w.Baton, err = baton(req.Baton); err != nil {
		return dst, err
	}
	if w.Batch, err = convertBatch(&req.Batch); err != nil {
		return dst, err
	}
	return marshalAppend(dst, &w)
}

func marshalAppend(dst []byte, w any) ([]byte, error) {
	b, err := json.MarshalWithOption(w, marshalOptions...)
	if err != nil {
		return dst, encodeErr("marshal", err)
	}
	return append(dst, b...), nil
}

func checkUTF8(s, what string) error {
	if !utf8.ValidString(s) {
		return encodeErr(what+" is not valid UTF-8", codec.ErrInvalidUTF8)
	}
	return nil
}

func baton(s string) (*string, error) {
	if s == "" {
		return nil, nil
	}
	if err := checkUTF8(s, "baton"); err != nil {
		return nil, err
	}
	return &s, nil
}

func sqlText(s string) (*string, error) {
	if err := checkUTF8(s, "SQL"); err != nil {
		return nil, err
	}
	return &s, nil
}

func convertRequest(r *codec.StreamRequest) (streamRequestW, error) {
	w := streamRequestW{Type: r.Type.String()}
	var err error
	switch r.Type {
	case codec.RequestClose, codec.RequestGetAutocommit:
	case codec.RequestExecute:
		var s stmtW
		if s, err = convertStmt(&r.Stmt); err != nil {
			return w, err
		}
		w.Stmt = &s
	case codec.RequestBatch:
		var b batchW
		if b, err = convertBatch(&r.Batch); err != nil {
			return w, err
		}
		w.Batch = &b
	case codec.RequestSequence, codec.RequestDescribe:
		if w.SQL, err = sqlText(r.SQL); err != nil {
			return w, err
		}
		w.ReplicationIndex = r.ReplicationIndex
	case codec.RequestStoreSQL:
		id := r.SQLID
		w.SQLID = &id
		if w.SQL, err = sqlText(r.SQL); err != nil {
			return w, err
		}
	case codec.RequestCloseSQL:
		id := r.SQLID
		w.SQLID = &id
	default:
		return w, encodeErr("unknown request type "+strconv.Itoa(int(r.Type)), nil)
	}
	return w, nil
}

func convertStmt(s *codec.Stmt) (stmtW, error) {
	w := stmtW{WantRows: s.WantRows, ReplicationIndex: s.ReplicationIndex}
	var err error
	if s.HasSQLID {
		id := s.SQLID
		w.SQLID = &id
	} else if w.SQL, err = sqlText(s.SQL); err != nil {
		return w, err
	}
	if len(s.Args) > 0 {
		w.Args = make([]valueOutW, len(s.Args))
		for i, v := range s.Args {
			if w.Args[i], err = convertValueOut(v); err != nil {
				return w, err
			}
		}
	}
	if len(s.NamedArgs) > 0 {
		w.NamedArgs = make([]namedArgW, len(s.NamedArgs))
		for i, a := range s.NamedArgs {
			if err := checkUTF8(a.Name, "argument name"); err != nil {
				return w, err
			}
			w.NamedArgs[i].Name = a.Name
			if w.NamedArgs[i].Value, err = convertValueOut(a.Value); err != nil {
				return w, err
			}
		}
	}
	return w, nil
}

func convertValueOut(v codec.Value) (valueOutW, error) {
	switch v.Type {
	case codec.Null:
		return valueOutW{Type: "null"}, nil
	case codec.Integer:
		return valueOutW{Type: "integer", Value: strconv.FormatInt(v.Int, 10)}, nil
	case codec.Float:
		if !codec.EncodableFloat(v.Float) {
			return valueOutW{}, encodeErr("float argument "+strconv.FormatFloat(v.Float, 'g', -1, 64)+" cannot be sent as JSON", nil)
		}
		return valueOutW{Type: "float", Value: floatOut(v.Float)}, nil
	case codec.Text:
		if !utf8.Valid(v.Bytes) {
			return valueOutW{}, encodeErr("text argument is not valid UTF-8", codec.ErrInvalidUTF8)
		}
		return valueOutW{Type: "text", Value: string(v.Bytes)}, nil
	case codec.Blob:
		s := codec.Base64.EncodeToString(v.Bytes)
		return valueOutW{Type: "blob", Base64: &s}, nil
	}
	return valueOutW{}, encodeErr("unknown value type "+v.Type.String(), nil)
}

func convertBatch(b *codec.Batch) (batchW, error) {
	w := batchW{Steps: make([]batchStepW, 0, len(b.Steps)), ReplicationIndex: b.ReplicationIndex}
	for i := range b.Steps {
		st := &b.Steps[i]
		var sw batchStepW
		var err error
		if st.Condition != nil {
			var c condW
			if c, err = convertCond(st.Condition); err != nil {
				return w, err
			}
			sw.Condition = &c
		}
		if sw.Stmt, err = convertStmt(&st.Stmt); err != nil {
			return w, err
		}
		w.Steps = append(w.Steps, sw)
	}
	return w, nil
}

func convertCond(c *codec.BatchCond) (condW, error) {
	switch c.Type {
	case codec.CondOK, codec.CondError:
		step := c.Step
		w := condW{Type: "ok", Step: &step}
		if c.Type == codec.CondError {
			w.Type = "error"
		}
		return w, nil
	case codec.CondNot:
		if c.Cond == nil {
			return condW{}, encodeErr(`"not" condition without a condition`, nil)
		}
		inner, err := convertCond(c.Cond)
		if err != nil {
			return condW{}, err
		}
		return condW{Type: "not", Cond: &inner}, nil
	case codec.CondAnd, codec.CondOr:
		conds := make([]condW, 0, len(c.Conds))
		for i := range c.Conds {
			inner, err := convertCond(&c.Conds[i])
			if err != nil {
				return condW{}, err
			}
			conds = append(conds, inner)
		}
		w := condW{Type: "and", Conds: &conds}
		if c.Type == codec.CondOr {
			w.Type = "or"
		}
		return w, nil
	case codec.CondIsAutocommit:
		return condW{Type: "is_autocommit"}, nil
	}
	return condW{}, encodeErr("unknown condition type "+strconv.Itoa(int(c.Type)), nil)
}
