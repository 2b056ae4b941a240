package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// A local transaction of a replica with offline writes is kept, until the
// primary has it, as one row of the local table libsql_offline_queue,
// written in the same SQLite transaction as its writes: its statements,
// their arguments, and how many rows each changed locally, encoded by
// encodeTxn.

// queuedStmt is one statement of a local transaction.
type queuedStmt struct {
	SQL  string
	Args []queuedArg
	// Changes is how many rows the statement changed locally (SQLite's
	// changes()), checked on the primary; -1 for a statement that is not
	// an INSERT, UPDATE, DELETE or REPLACE, whose count is not checked.
	Changes int64
}

// queuedArg is an argument as the driver checked it: nil, int64, float64,
// bool, string, []byte or time.Time, by position or by Name.
type queuedArg struct {
	Name  string
	Value any
}

// The tags of the encoded values.
const (
	tagNull byte = iota
	tagInt
	tagFloat
	tagText
	tagBlob
	tagFalse
	tagTrue
	tagTime
)

// errQueueEntry is an entry of the queue that does not decode.
var errQueueEntry = errors.New("embedded: invalid entry in libsql_offline_queue")

// encodeTxn encodes a transaction's statements: a version byte, then the
// number of statements and each statement's SQL, count of changes and
// arguments, with uvarint lengths.
func encodeTxn(stmts []queuedStmt) ([]byte, error) {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(len(stmts)))
	for _, s := range stmts {
		b = appendString(b, s.SQL)
		b = binary.AppendVarint(b, s.Changes)
		b = binary.AppendUvarint(b, uint64(len(s.Args)))
		for _, a := range s.Args {
			b = appendString(b, a.Name)
			switch v := a.Value.(type) {
			case nil:
				b = append(b, tagNull)
			case int64:
				b = binary.AppendVarint(append(b, tagInt), v)
			case float64:
				b = binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v))
			case string:
				b = appendString(append(b, tagText), v)
			case []byte:
				b = appendString(append(b, tagBlob), string(v))
			case bool:
				if v {
					b = append(b, tagTrue)
				} else {
					b = append(b, tagFalse)
				}
			case time.Time:
				t, err := v.MarshalBinary()
				if err != nil {
					return nil, err
				}
				b = appendString(append(b, tagTime), string(t))
			default:
				return nil, fmt.Errorf("embedded: argument of type %T cannot be queued", v)
			}
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeTxn decodes what encodeTxn encoded.
func decodeTxn(b []byte) ([]queuedStmt, error) {
	d := decoder{b: b}
	if d.byte() != 1 {
		return nil, errQueueEntry
	}
	n := d.count()
	var stmts []queuedStmt
	for range n {
		s := queuedStmt{SQL: d.string(), Changes: d.varint()}
		nargs := d.count()
		if nargs > 0 {
			s.Args = make([]queuedArg, 0, nargs)
		}
		for range nargs {
			a := queuedArg{Name: d.string()}
			switch d.byte() {
			case tagNull:
			case tagInt:
				a.Value = d.varint()
			case tagFloat:
				a.Value = math.Float64frombits(d.uint64())
			case tagText:
				a.Value = d.string()
			case tagBlob:
				a.Value = []byte(d.string())
			case tagFalse:
				a.Value = false
			case tagTrue:
				a.Value = true
			case tagTime:
				var t time.Time
				if err := t.UnmarshalBinary([]byte(d.string())); err != nil {
					d.err = errQueueEntry
				}
				a.Value = t
			default:
				d.err = errQueueEntry
			}
			s.Args = append(s.Args, a)
		}
		if d.err != nil {
			return nil, d.err
		}
		stmts = append(stmts, s)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errQueueEntry
	}
	return stmts, nil
}

// decoder reads an encoded transaction; the first failure sticks in err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errQueueEntry, nil }

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads a zigzag-encoded varint, as binary.Varint does.
func (d *decoder) varint() int64 {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a number of items, each at least a byte long: no more
// than the bytes left.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) string() string {
	n := d.count()
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
