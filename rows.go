package libsql

import (
	"database/sql/driver"
	"io"
	"reflect"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
)

var (
	_ driver.Rows                           = (*rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
)

// rows iterates over a decoded result. It owns the response it decodes
// from. Text values are handed out as strings that share the response body's
// memory, so the body is never reused once rows have been read from it: Close
// recycles the decoded structures but lets the body go to the garbage
// collector, which frees it when the last such string is gone.
type rows struct {
	bx    arena.Boxer
	buf   *respBuf
	res   *codec.StmtResult
	cols  []string
	types []string // declared types, upper case
	kinds []colKind
	next  int
}

func newRows(res *codec.StmtResult, buf *respBuf) *rows {
	r := &rows{buf: buf, res: res}
	r.cols = make([]string, len(res.Cols))
	r.types = make([]string, len(res.Cols))
	r.kinds = make([]colKind, len(res.Cols))
	for i, c := range res.Cols {
		r.cols[i] = c.Name
		r.types[i] = upperASCII(c.Decltype)
		r.kinds[i] = classify(c.Decltype)
	}
	return r
}

// Columns returns the column names.
func (r *rows) Columns() []string { return r.cols }

// Close releases the rows' buffers.
func (r *rows) Close() error {
	if r.buf != nil {
		r.buf.body = nil // strings handed out may share it
		putResp(r.buf)
		r.buf, r.res = nil, nil
	}
	return nil
}

// Next fills dest with the next row. Blob values point into the response
// buffer and stay valid until Close (database/sql copies them on Scan).
func (r *rows) Next(dest []driver.Value) error {
	if r.res == nil || r.next >= r.res.NumRows {
		return io.EOF
	}
	row := r.res.Row(r.next)
	r.next++
	for i := range row {
		dest[i] = fromValue(&row[i], r.kinds[i], &r.bx)
	}
	return nil
}

// ColumnTypeDatabaseTypeName returns the column's declared type, upper
// case, or "" for expressions.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	return r.types[i]
}

// ColumnTypeScanType returns the Go type that values of the column's
// declared type scan into; any for expressions and unknown types.
func (r *rows) ColumnTypeScanType(i int) reflect.Type { return scanType(r.kinds[i]) }

// ColumnTypeNullable reports ok=false: Hrana results do not say whether a
// column admits NULL.
func (r *rows) ColumnTypeNullable(int) (nullable, ok bool) { return false, false }

func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
