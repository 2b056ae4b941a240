package protobuf

// This file: encoding the request messages. Each nested message is written
// after a one-byte length placeholder; endMsg writes the real length and,
// when it needs more than one byte, moves the content right to make room.
// Values, the most numerous messages, have their length computed up front
// instead.

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// maxCondDepth bounds the nesting of batch conditions the encoder follows,
// so that a condition that contains itself fails instead of recursing
// forever (the same bound as codec/direct's).
const maxCondDepth = 1000

func appendVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendKey(dst []byte, num int, wt uint8) []byte {
	return appendVarint(dst, uint64(num)<<3|uint64(wt))
}

func appendUintField(dst []byte, num int, v uint64) []byte {
	return appendVarint(appendKey(dst, num, wireVarint), v)
}

// appendInt32Field writes an int32 as Protobuf does: a negative value is
// sign-extended to 64 bits (ten bytes).
func appendInt32Field(dst []byte, num int, v int32) []byte {
	return appendUintField(dst, num, uint64(int64(v)))
}

func appendBytesField[S string | []byte](dst []byte, num int, s S) []byte {
	dst = appendKey(dst, num, wireLen)
	dst = appendVarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendStringField writes a string field, which proto3 requires to be
// valid UTF-8.
func appendStringField(dst []byte, num int, s, what string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, encErr(what+" is not valid UTF-8", codec.ErrInvalidUTF8)
	}
	return appendBytesField(dst, num, s), nil
}

// beginMsg writes the key of a message field and a one-byte length
// placeholder, and returns where the content starts.
func beginMsg(dst []byte, num int) ([]byte, int) {
	dst = appendKey(dst, num, wireLen)
	dst = append(dst, 0)
	return dst, len(dst)
}

var zeros [9]byte

// endMsg writes the length of the message whose content starts at start.
func endMsg(dst []byte, start int) []byte {
	n := len(dst) - start
	if n < 0x80 {
		dst[start-1] = byte(n)
		return dst
	}
	extra := varintLen(uint64(n)) - 1
	dst = append(dst, zeros[:extra]...)
	copy(dst[start+extra:], dst[start:start+n])
	appendVarint(dst[:start-1], uint64(n))
	return dst
}

// AppendPipelineRequest appends the encoded PipelineReqBody to dst.
func (pbCodec) AppendPipelineRequest(dst []byte, req *codec.PipelineRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	orig := len(dst)
	dst, err := appendBaton(dst, req.Baton)
	if err != nil {
		return dst[:orig], exportErr(err)
	}
	for i := range req.Requests {
		if dst, err = appendStreamRequest(dst, &req.Requests[i]); err != nil {
			return dst[:orig], exportErr(prefixErr(err, "requests[", i, "]"))
		}
	}
	return dst, nil
}

// AppendCursorRequest appends the encoded CursorReqBody to dst.
func (pbCodec) AppendCursorRequest(dst []byte, req *codec.CursorRequest) ([]byte, error) {
	if req == nil {
		return dst, exportErr(encErr("nil request", nil))
	}
	orig := len(dst)
	dst, err := appendBaton(dst, req.Baton)
	if err != nil {
		return dst[:orig], exportErr(err)
	}
	if dst, err = appendBatchField(dst, 2, &req.Batch); err != nil {
		return dst[:orig], exportErr(err)
	}
	return dst, nil
}

// appendBaton writes the optional baton, field 1 of both request bodies;
// "" is absent (a new stream).
func appendBaton(dst []byte, baton string) ([]byte, error) {
	if baton == "" {
		return dst, nil
	}
	return appendStringField(dst, 1, baton, "baton")
}

// appendStreamRequest writes a StreamRequest (field 2 of PipelineReqBody):
// a oneof whose member numbers are the request types.
func appendStreamRequest(dst []byte, r *codec.StreamRequest) ([]byte, error) {
	if r.Type == codec.RequestUnknown || r.Type > codec.RequestGetAutocommit {
		return dst, encErr("unknown stream request type "+strconv.Itoa(int(r.Type)), nil)
	}
	dst, req := beginMsg(dst, 2)
	dst, member := beginMsg(dst, int(r.Type))
	var err error
	switch r.Type {
	case codec.RequestExecute: // ExecuteStreamReq { Stmt stmt = 1 }
		dst, err = appendStmtField(dst, 1, &r.Stmt)
	case codec.RequestBatch: // BatchStreamReq { Batch batch = 1 }
		dst, err = appendBatchField(dst, 1, &r.Batch)
	case codec.RequestSequence, codec.RequestDescribe:
		dst, err = appendSQLRef(dst, 1, r.SQL, 0, false, r.ReplicationIndex)
	case codec.RequestStoreSQL:
		dst, err = appendStoreSQL(dst, r.SQLID, r.SQL)
	case codec.RequestCloseSQL: // { int32 sql_id = 1 }
		dst = appendNonZeroInt32(dst, 1, r.SQLID)
	}
	if err != nil {
		return dst, err
	}
	dst = endMsg(dst, member)
	return endMsg(dst, req), nil
}

// The fields of requests, shared by stream requests and socket requests.

// appendNonZeroInt32 writes a proto3 int32 field, left out when 0.
func appendNonZeroInt32(dst []byte, num int, v int32) []byte {
	if v == 0 {
		return dst
	}
	return appendInt32Field(dst, num, v)
}

// appendStmtField writes s as a Stmt message in field num.
func appendStmtField(dst []byte, num int, s *codec.Stmt) ([]byte, error) {
	dst, start := beginMsg(dst, num)
	dst, err := appendStmt(dst, s)
	if err != nil {
		return dst, prefixErr(err, "stmt", -1, "")
	}
	return endMsg(dst, start), nil
}

// appendBatchField writes b as a Batch message in field num.
func appendBatchField(dst []byte, num int, b *codec.Batch) ([]byte, error) {
	dst, start := beginMsg(dst, num)
	dst, err := appendBatch(dst, b)
	if err != nil {
		return dst, prefixErr(err, "batch", -1, "")
	}
	return endMsg(dst, start), nil
}

// appendSQLRef writes the fields of a sequence or describe request from
// field num on: { optional string sql = num; optional int32 sql_id =
// num+1; optional uint64 replication_index = num+2 }, sql_id instead of
// sql when byID.
func appendSQLRef(dst []byte, num int, sql string, id int32, byID bool, ri uint64) ([]byte, error) {
	if byID {
		dst = appendInt32Field(dst, num+1, id)
	} else {
		var err error
		if dst, err = appendStringField(dst, num, sql, "sql"); err != nil {
			return dst, err
		}
	}
	if ri != 0 {
		dst = appendUintField(dst, num+2, ri)
	}
	return dst, nil
}

// appendStoreSQL writes the fields of a store_sql request:
// { int32 sql_id = 1; string sql = 2 }.
func appendStoreSQL(dst []byte, id int32, sql string) ([]byte, error) {
	return appendStringField(appendNonZeroInt32(dst, 1, id), 2, sql, "sql")
}

// appendStmt writes the fields of a Stmt: sql = 1 or sql_id = 2, args = 3,
// named_args = 4, want_rows = 5, replication_index = 6.
func appendStmt(dst []byte, s *codec.Stmt) ([]byte, error) {
	var err error
	if s.HasSQLID {
		dst = appendInt32Field(dst, 2, s.SQLID)
	} else if dst, err = appendStringField(dst, 1, s.SQL, "sql"); err != nil {
		return dst, err
	}
	for i := range s.Args {
		if dst, err = appendValue(dst, 3, &s.Args[i]); err != nil {
			return dst, prefixErr(err, "args[", i, "]")
		}
	}
	for i := range s.NamedArgs {
		a := &s.NamedArgs[i]
		var start int
		dst, start = beginMsg(dst, 4) // NamedArg { string name = 1; Value value = 2 }
		if dst, err = appendStringField(dst, 1, a.Name, "name"); err != nil {
			return dst, prefixErr(err, "named_args[", i, "]")
		}
		if dst, err = appendValue(dst, 2, &a.Value); err != nil {
			return dst, prefixErr(err, "named_args[", i, "].value")
		}
		dst = endMsg(dst, start)
	}
	// want_rows is optional and sqld takes an absent one as true, so false
	// is written too.
	want := uint64(0)
	if s.WantRows {
		want = 1
	}
	dst = appendUintField(dst, 5, want)
	if s.ReplicationIndex != 0 {
		dst = appendUintField(dst, 6, s.ReplicationIndex)
	}
	return dst, nil
}

// appendBatch writes the fields of a Batch: steps = 1 (BatchStep
// { optional BatchCond condition = 1; Stmt stmt = 2 }),
// replication_index = 2.
func appendBatch(dst []byte, b *codec.Batch) ([]byte, error) {
	var err error
	for i := range b.Steps {
		st := &b.Steps[i]
		var step, start int
		dst, step = beginMsg(dst, 1)
		if st.Condition != nil {
			dst, start = beginMsg(dst, 1)
			if dst, err = appendCond(dst, st.Condition, 0); err != nil {
				return dst, prefixErr(err, "steps[", i, "].condition")
			}
			dst = endMsg(dst, start)
		}
		dst, start = beginMsg(dst, 2)
		if dst, err = appendStmt(dst, &st.Stmt); err != nil {
			return dst, prefixErr(err, "steps[", i, "].stmt")
		}
		dst = endMsg(dst, start)
		dst = endMsg(dst, step)
	}
	if b.ReplicationIndex != 0 {
		dst = appendUintField(dst, 2, b.ReplicationIndex)
	}
	return dst, nil
}

// appendCond writes the fields of a BatchCond, a oneof: step_ok = 1,
// step_error = 2 (uint32, written even when 0: the member's presence is
// the condition), not = 3, and = 4 and or = 5 (BatchCondList
// { repeated BatchCond conds = 1 }), is_autocommit = 6 (empty).
func appendCond(dst []byte, c *codec.BatchCond, depth int) ([]byte, error) {
	if depth >= maxCondDepth {
		return dst, encErr("batch condition nested too deeply", nil)
	}
	var err error
	switch c.Type {
	case codec.CondOK:
		dst = appendUintField(dst, 1, uint64(c.Step))
	case codec.CondError:
		dst = appendUintField(dst, 2, uint64(c.Step))
	case codec.CondNot:
		if c.Cond == nil {
			return dst, encErr("\"not\" condition without an operand", nil)
		}
		var start int
		dst, start = beginMsg(dst, 3)
		if dst, err = appendCond(dst, c.Cond, depth+1); err != nil {
			return dst, err
		}
		dst = endMsg(dst, start)
	case codec.CondAnd, codec.CondOr:
		num := 4
		if c.Type == codec.CondOr {
			num = 5
		}
		var list int
		dst, list = beginMsg(dst, num)
		for i := range c.Conds {
			var start int
			dst, start = beginMsg(dst, 1)
			if dst, err = appendCond(dst, &c.Conds[i], depth+1); err != nil {
				return dst, err
			}
			dst = endMsg(dst, start)
		}
		dst = endMsg(dst, list)
	case codec.CondIsAutocommit:
		dst = append(appendKey(dst, 6, wireLen), 0)
	default:
		return dst, encErr("unknown batch condition type "+strconv.Itoa(int(c.Type)), nil)
	}
	return dst, nil
}

// appendValue writes v as a Value message in field num: oneof null = 1
// (empty), integer = 2 (sint64), float = 3 (double), text = 4, blob = 5.
// Its length is known before it is written.
func appendValue(dst []byte, num int, v *codec.Value) ([]byte, error) {
	dst = appendKey(dst, num, wireLen)
	switch v.Type {
	case codec.Null:
		return append(dst, 2, 1<<3|wireLen, 0), nil
	case codec.Integer:
		z := uint64(v.Int<<1) ^ uint64(v.Int>>63)
		dst = append(dst, byte(1+varintLen(z)), 2<<3|wireVarint)
		return appendVarint(dst, z), nil
	case codec.Float:
		u := math.Float64bits(v.Float)
		return append(dst, 9, 3<<3|wireI64,
			byte(u), byte(u>>8), byte(u>>16), byte(u>>24),
			byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56)), nil
	case codec.Text, codec.Blob:
		field := 5
		if v.Type == codec.Text {
			if !utf8.Valid(v.Bytes) {
				return dst, encErr("text value is not valid UTF-8", codec.ErrInvalidUTF8)
			}
			field = 4
		}
		n := uint64(len(v.Bytes))
		dst = appendVarint(dst, 1+uint64(varintLen(n))+n)
		return appendBytesField(dst, field, v.Bytes), nil
	}
	return dst, encErr("unknown value type "+strconv.Itoa(int(v.Type)), nil)
}

// The shared error path of encoders (codec.EncodeFailure), under this
// codec's name.
func encErr(msg string, cause error) error { return codec.NewEncodeFailure(msg, cause) }

func prefixErr(err error, before string, idx int, after string) error {
	return codec.AtField(err, before, idx, after)
}

func exportErr(err error) error { return codec.ExportEncodeFailure(Name, err) }
