package libsql

import (
	"database/sql/driver"
	"io"
	"reflect"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
	"github.com/gohrana/libsql/internal/session"
)

var (
	_ driver.Rows                           = (*pipelineRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*pipelineRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*pipelineRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*pipelineRows)(nil)
)

// Rows come from a whole decoded pipeline response (pipelineRows, here) or
// from a cursor whose rows are decoded as they arrive (cursorRows, in
// cursor_rows.go). Both hand out text values as strings that share the
// memory they were decoded from (the response body, or the cursor's
// chunks), so that memory is never reused once rows have been read from it,
// and box values in append-only arenas, so that a row costs no allocation
// per value.

// columns is what both kinds of rows know of their columns, with the
// driver.Rows methods that only need that.
type columns struct {
	bx    arena.Boxer
	cols  []string
	types []string // declared types, upper case
	kinds []colKind
}

func (c *columns) setCols(cols []codec.Col) {
	c.cols = make([]string, len(cols))
	c.types = make([]string, len(cols))
	c.kinds = make([]colKind, len(cols))
	for i, col := range cols {
		c.cols[i] = col.Name
		c.types[i] = upperASCII(col.Decltype)
		c.kinds[i] = classify(col.Decltype)
	}
}

// Columns returns the column names.
func (c *columns) Columns() []string { return c.cols }

// ColumnTypeDatabaseTypeName returns the column's declared type, upper
// case, or "" for expressions.
func (c *columns) ColumnTypeDatabaseTypeName(i int) string { return c.types[i] }

// ColumnTypeScanType returns the Go type that values of the column's
// declared type scan into; any for expressions and unknown types.
func (c *columns) ColumnTypeScanType(i int) reflect.Type { return scanType(c.kinds[i]) }

// ColumnTypeNullable reports ok=false: Hrana results do not say whether a
// column admits NULL.
func (c *columns) ColumnTypeNullable(int) (nullable, ok bool) { return false, false }

// fill decodes row into dest.
func (c *columns) fill(dest []driver.Value, row []codec.Value) {
	for i := range row {
		dest[i] = fromValue(&row[i], c.kinds[i], &c.bx)
	}
}

// pipelineRows iterates over the statement result of a decoded pipeline
// response. Close recycles the decoded structures but leaves the body to
// the garbage collector, which frees it when the last string sharing it is
// gone.
type pipelineRows struct {
	columns
	buf  *session.Result
	res  *codec.StmtResult
	next int
}

// newRows returns the rows of buf's statement result; they own buf.
func newRows(buf *session.Result) *pipelineRows {
	r := &pipelineRows{buf: buf, res: buf.Stmt()}
	r.setCols(r.res.Cols)
	return r
}

// Close releases the rows.
func (r *pipelineRows) Close() error {
	if r.buf != nil {
		r.buf.ReleaseShared() // strings handed out may share the body
		r.buf, r.res = nil, nil
	}
	return nil
}

// Next fills dest with the next row. Blob values point into decoded memory
// and stay valid until Close (database/sql copies them on Scan).
func (r *pipelineRows) Next(dest []driver.Value) error {
	if r.res == nil || r.next >= r.res.NumRows {
		return io.EOF
	}
	r.fill(dest, r.res.Row(r.next))
	r.next++
	return nil
}

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
