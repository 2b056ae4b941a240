package embedded

import (
	"database/sql"
	"database/sql/driver"
	"io"
	"reflect"
)

// localRows presents the rows of a local query to database/sql through
// this driver. Each column is scanned into an any, which hands over the
// local driver's value (a []byte copied).
type localRows struct {
	rows    *sql.Rows
	release func()
	cols    []string
	types   []*sql.ColumnType
	vals    []any
	ptrs    []any
}

func newLocalRows(rows *sql.Rows, release func()) (*localRows, error) {
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		release()
		return nil, err
	}
	r := &localRows{rows: rows, release: release, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

func (r *localRows) Columns() []string { return r.cols }

func (r *localRows) Close() error {
	if r.release == nil {
		return nil
	}
	err := r.rows.Close()
	r.release()
	r.release = nil
	return err
}

func (r *localRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return err
	}
	for i, v := range r.vals {
		dest[i] = v
		r.vals[i] = nil
	}
	return nil
}

func (r *localRows) columnTypes() []*sql.ColumnType {
	if r.types == nil {
		r.types, _ = r.rows.ColumnTypes()
	}
	return r.types
}

// ColumnTypeDatabaseTypeName returns the declared type of a column.
func (r *localRows) ColumnTypeDatabaseTypeName(i int) string {
	if ts := r.columnTypes(); i < len(ts) {
		return ts[i].DatabaseTypeName()
	}
	return ""
}

// ColumnTypeScanType returns the Go type the local driver scans a column
// as.
func (r *localRows) ColumnTypeScanType(i int) reflect.Type {
	if ts := r.columnTypes(); i < len(ts) && ts[i].ScanType() != nil {
		return ts[i].ScanType()
	}
	return reflect.TypeFor[any]()
}

// listRows is a one-column result made locally: the messages of an
// integrity check.
type listRows struct {
	col  string
	vals []string
}

func (r *listRows) Columns() []string { return []string{r.col} }
func (r *listRows) Close() error      { r.vals = nil; return nil }

func (r *listRows) Next(dest []driver.Value) error {
	if len(r.vals) == 0 {
		return io.EOF
	}
	dest[0] = r.vals[0]
	r.vals = r.vals[1:]
	return nil
}
