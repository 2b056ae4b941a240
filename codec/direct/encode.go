package direct

import (
	"strconv"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// maxCondDepth bounds the nesting of batch conditions the encoder follows,
// so that a condition that contains itself fails instead of recursing
// forever. The server's JSON parser gives up far earlier anyway.
const maxCondDepth = 1000

// AppendPipelineRequest appends the JSON form of req to dst.
func (jsonCodec) AppendPipelineRequest(dst []byte, req *codec.PipelineRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	orig := len(dst)
	dst = append(dst, `{"baton":`...)
	dst, err := appendBaton(dst, req.Baton)
	if err != nil {
		return dst[:orig], exportErr(err)
	}
	dst = append(dst, `,"requests":[`...)
	for i := range req.Requests {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendStreamRequest(dst, &req.Requests[i]); err != nil {
			return dst[:orig], exportErr(prefixErr(err, "requests[", i, "]"))
		}
	}
	dst = append(dst, "]}"...)
	return dst, nil
}

// AppendCursorRequest appends the JSON form of req to dst.
func (jsonCodec) AppendCursorRequest(dst []byte, req *codec.CursorRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	orig := len(dst)
	dst = append(dst, `{"baton":`...)
	dst, err := appendBaton(dst, req.Baton)
	if err != nil {
		return dst[:orig], exportErr(err)
	}
	dst = append(dst, `,"batch":`...)
	if dst, err = appendBatch(dst, &req.Batch); err != nil {
		return dst[:orig], exportErr(prefixErr(err, "batch", -1, ""))
	}
	dst = append(dst, '}')
	return dst, nil
}

func appendBaton(dst []byte, baton string) ([]byte, error) {
	return appendNullable(dst, baton, "baton")
}

// appendNullable appends s as a JSON string, or null when it is "".
func appendNullable(dst []byte, s, what string) ([]byte, error) {
	if s == "" {
		return append(dst, "null"...), nil
	}
	return appendString(dst, s, what)
}

func appendStreamRequest(dst []byte, r *codec.StreamRequest) ([]byte, error) {
	name := r.Type.String()
	if name == "" {
		return dst, encErr("unknown stream request type "+strconv.Itoa(int(r.Type)), nil)
	}
	dst = appendTypeMember(dst, name)
	var err error
	switch r.Type {
	case codec.RequestExecute:
		dst = append(dst, `,"stmt":`...)
		if dst, err = appendStmt(dst, &r.Stmt); err != nil {
			return dst, prefixErr(err, "stmt", -1, "")
		}
	case codec.RequestBatch:
		dst = append(dst, `,"batch":`...)
		if dst, err = appendBatch(dst, &r.Batch); err != nil {
			return dst, prefixErr(err, "batch", -1, "")
		}
	case codec.RequestSequence, codec.RequestDescribe:
		if dst, err = appendSQLRef(dst, r.SQL, 0, false); err != nil {
			return dst, err
		}
		dst = appendReplicationIndex(dst, r.ReplicationIndex)
	case codec.RequestStoreSQL:
		if dst, err = appendStoreSQL(dst, r.SQLID, r.SQL); err != nil {
			return dst, err
		}
	case codec.RequestCloseSQL:
		dst = appendIntMember(dst, `,"sql_id":`, int64(r.SQLID))
	}
	return append(dst, '}'), nil
}

// The members of requests, shared by stream requests and socket requests:
// each but the type starts with its comma.

// appendTypeMember opens a request object with its type.
func appendTypeMember(dst []byte, name string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, name...)
	return append(dst, '"')
}

// appendIntMember appends key (`,"name":`) and v.
func appendIntMember(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(dst, key...), v, 10)
}

// appendSQLRef appends the SQL text of a sequence or describe request:
// "sql", or "sql_id" when byID.
func appendSQLRef(dst []byte, sql string, id int32, byID bool) ([]byte, error) {
	if byID {
		return appendIntMember(dst, `,"sql_id":`, int64(id)), nil
	}
	return appendString(append(dst, `,"sql":`...), sql, "sql")
}

// appendStoreSQL appends the members of a store_sql request.
func appendStoreSQL(dst []byte, id int32, sql string) ([]byte, error) {
	dst = appendIntMember(dst, `,"sql_id":`, int64(id))
	return appendString(append(dst, `,"sql":`...), sql, "sql")
}

func appendStmt(dst []byte, s *codec.Stmt) ([]byte, error) {
	var err error
	if s.HasSQLID {
		dst = append(dst, `{"sql_id":`...)
		dst = strconv.AppendInt(dst, int64(s.SQLID), 10)
	} else {
		dst = append(dst, `{"sql":`...)
		if dst, err = appendString(dst, s.SQL, "sql"); err != nil {
			return dst, err
		}
	}
	if len(s.Args) > 0 {
		dst = append(dst, `,"args":[`...)
		for i := range s.Args {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendValue(dst, &s.Args[i]); err != nil {
				return dst, prefixErr(err, "args[", i, "]")
			}
		}
		dst = append(dst, ']')
	}
	if len(s.NamedArgs) > 0 {
		dst = append(dst, `,"named_args":[`...)
		for i := range s.NamedArgs {
			a := &s.NamedArgs[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			if dst, err = appendString(dst, a.Name, "name"); err != nil {
				return dst, prefixErr(err, "named_args[", i, "]")
			}
			dst = append(dst, `,"value":`...)
			if dst, err = appendValue(dst, &a.Value); err != nil {
				return dst, prefixErr(err, "named_args[", i, "].value")
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = appendReplicationIndex(dst, s.ReplicationIndex)
	if s.WantRows {
		dst = append(dst, `,"want_rows":true}`...)
	} else {
		dst = append(dst, `,"want_rows":false}`...)
	}
	return dst, nil
}

// appendReplicationIndex appends the replication_index member, if any, as
// a decimal string (sqld's own form; it also takes a number).
func appendReplicationIndex(dst []byte, idx uint64) []byte {
	if idx == 0 {
		return dst
	}
	dst = append(dst, `,"replication_index":"`...)
	dst = strconv.AppendUint(dst, idx, 10)
	return append(dst, '"')
}

func appendBatch(dst []byte, b *codec.Batch) ([]byte, error) {
	var err error
	dst = append(dst, `{"steps":[`...)
	for i := range b.Steps {
		st := &b.Steps[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if st.Condition != nil {
			dst = append(dst, `"condition":`...)
			if dst, err = appendCond(dst, st.Condition, 0); err != nil {
				return dst, prefixErr(err, "steps[", i, "].condition")
			}
			dst = append(dst, ',')
		}
		dst = append(dst, `"stmt":`...)
		if dst, err = appendStmt(dst, &st.Stmt); err != nil {
			return dst, prefixErr(err, "steps[", i, "].stmt")
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = appendReplicationIndex(dst, b.ReplicationIndex)
	dst = append(dst, '}')
	return dst, nil
}

func appendCond(dst []byte, c *codec.BatchCond, depth int) ([]byte, error) {
	if depth >= maxCondDepth {
		return dst, encErr("batch condition nested too deeply", nil)
	}
	var err error
	switch c.Type {
	case codec.CondOK:
		dst = append(dst, `{"type":"ok","step":`...)
		dst = strconv.AppendUint(dst, uint64(c.Step), 10)
		dst = append(dst, '}')
	case codec.CondError:
		dst = append(dst, `{"type":"error","step":`...)
		dst = strconv.AppendUint(dst, uint64(c.Step), 10)
		dst = append(dst, '}')
	case codec.CondNot:
		if c.Cond == nil {
			return dst, encErr("\"not\" condition without an operand", nil)
		}
		dst = append(dst, `{"type":"not","cond":`...)
		if dst, err = appendCond(dst, c.Cond, depth+1); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	case codec.CondAnd, codec.CondOr:
		if c.Type == codec.CondAnd {
			dst = append(dst, `{"type":"and","conds":[`...)
		} else {
			dst = append(dst, `{"type":"or","conds":[`...)
		}
		for i := range c.Conds {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCond(dst, &c.Conds[i], depth+1); err != nil {
				return dst, err
			}
		}
		dst = append(dst, "]}"...)
	case codec.CondIsAutocommit:
		dst = append(dst, `{"type":"is_autocommit"}`...)
	default:
		return dst, encErr("unknown batch condition type "+strconv.Itoa(int(c.Type)), nil)
	}
	return dst, nil
}

// appendValue appends the Hrana JSON object for v.
func appendValue(dst []byte, v *codec.Value) ([]byte, error) {
	switch v.Type {
	case codec.Null:
		dst = append(dst, `{"type":"null"}`...)
	case codec.Integer:
		dst = append(dst, `{"type":"integer","value":"`...)
		dst = strconv.AppendInt(dst, v.Int, 10)
		dst = append(dst, `"}`...)
	case codec.Float:
		n := len(dst)
		dst = append(dst, `{"type":"float","value":`...)
		var ok bool
		if dst, ok = codec.AppendFloat(dst, v.Float); !ok {
			return dst[:n], encErr("float "+strconv.FormatFloat(v.Float, 'g', -1, 64)+" cannot be sent as JSON", nil)
		}
		dst = append(dst, '}')
	case codec.Text:
		if !utf8.Valid(v.Bytes) {
			return dst, encErr("text value is not valid UTF-8", codec.ErrInvalidUTF8)
		}
		dst = append(dst, `{"type":"text","value":`...)
		dst = appendQuoted(dst, v.Bytes)
		dst = append(dst, '}')
	case codec.Blob:
		dst = append(dst, `{"type":"blob","base64":"`...)
		dst = codec.Base64.AppendEncode(dst, v.Bytes)
		dst = append(dst, `"}`...)
	default:
		return dst, encErr("unknown value type "+strconv.Itoa(int(v.Type)), nil)
	}
	return dst, nil
}

// appendString appends s as a JSON string, or fails if s is not valid UTF-8.
func appendString(dst []byte, s, what string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, encErr(what+" is not valid UTF-8", codec.ErrInvalidUTF8)
	}
	return appendQuoted(dst, s), nil
}

const hexDigits = "0123456789abcdef"

// escapeASCII[c] is the escape for the ASCII byte c: 0 for none, 'u' for
// \u00XX, else the letter after the backslash.
var escapeASCII = func() (t [utf8.RuneSelf]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = 'b', 'f', 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

// appendQuoted appends s, which must be valid UTF-8, as a JSON string:
// quotes, backslashes and control bytes are escaped, everything else,
// including non-ASCII text, is copied as is.
func appendQuoted[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			continue
		}
		e := escapeASCII[c]
		if e == 0 {
			continue
		}
		dst = append(dst, s[start:i]...)
		if e == 'u' {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		} else {
			dst = append(dst, '\\', e)
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// The shared error path of encoders (codec.EncodeFailure), under this
// codec's name.
func encErr(msg string, cause error) error { return codec.NewEncodeFailure(msg, cause) }

func prefixErr(err error, before string, idx int, after string) error {
	return codec.AtField(err, before, idx, after)
}

func exportErr(err error) error { return codec.ExportEncodeFailure(Name, err) }
