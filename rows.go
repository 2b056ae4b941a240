package libsql

import (
	"database/sql/driver"
	"errors"
	"io"
	"reflect"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/arena"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
)

var (
	_ driver.Rows                           = (*rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
)

var errCursorInterrupted = errors.New("libsql: rows closed early: another statement ran on the transaction while they were streaming")

// rows iterates over a result: a whole decoded pipeline response, or a
// cursor whose rows are decoded as they arrive.
//
// Text values are handed out as strings that share the memory they were
// decoded from (the response body, or the cursor's line chunks), so that
// memory is never reused once rows have been read from it: Close recycles
// the decoded structures but leaves the body to the garbage collector, which
// frees it when the last such string is gone. Values are boxed in bx's
// append-only arenas, so a row costs no allocation per value.
type rows struct {
	bx    arena.Boxer
	cols  []string
	types []string // declared types, upper case
	kinds []colKind

	// A pipeline result.
	buf  *session.Result
	res  *codec.StmtResult
	next int

	// A cursor.
	cur     transport.Cursor
	stmtErr func(*codec.Error) error // converts a statement error from the cursor
	entry   codec.CursorEntry
	done    bool
	err     error
}

// newRows returns the rows of buf's statement result; they own buf.
func newRows(buf *session.Result) *rows {
	r := &rows{buf: buf, res: buf.Stmt()}
	r.setCols(r.res.Cols)
	return r
}

func (r *rows) setCols(cols []codec.Col) {
	r.cols = make([]string, len(cols))
	r.types = make([]string, len(cols))
	r.kinds = make([]colKind, len(cols))
	for i, c := range cols {
		r.cols[i] = c.Name
		r.types[i] = upperASCII(c.Decltype)
		r.kinds[i] = classify(c.Decltype)
	}
}

// newCursorRows reads the cursor up to the step's column list. stmtErr
// converts statement errors (a transaction's notices when the server rolled
// it back).
func newCursorRows(cur transport.Cursor, stmtErr func(*codec.Error) error) (*rows, error) {
	r := &rows{cur: cur, stmtErr: stmtErr}
	for {
		if err := cur.Next(&r.entry); err != nil {
			r.fail(r.cursorErr(err))
			return nil, r.err
		}
		e := &r.entry
		switch e.Type {
		case codec.EntryStepBegin:
			r.setCols(e.Cols)
			return r, nil
		case codec.EntryStepError, codec.EntryError:
			r.fail(r.stmtErr(&e.Error))
			return nil, r.err
		default:
			r.fail(&Error{Message: "cursor response did not start with step_begin"})
			return nil, r.err
		}
	}
}

// Columns returns the column names.
func (r *rows) Columns() []string { return r.cols }

// Close releases the rows. A cursor still streaming is cut off, which
// discards its HTTP connection, and its server stream is closed.
func (r *rows) Close() error {
	if r.buf != nil {
		r.buf.ReleaseShared() // strings handed out may share the body
		r.buf, r.res = nil, nil
	}
	if r.cur != nil {
		if !r.done && r.err == nil {
			r.err = errors.New("libsql: rows are closed")
		}
		r.release()
	}
	return nil
}

// Next fills dest with the next row. Blob values point into decoded memory
// and stay valid until Close (database/sql copies them on Scan).
func (r *rows) Next(dest []driver.Value) error {
	if r.stmtErr != nil {
		return r.nextFromCursor(dest)
	}
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

func (r *rows) nextFromCursor(dest []driver.Value) error {
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	for {
		if err := r.cur.Next(&r.entry); err != nil {
			r.fail(r.cursorErr(err))
			return r.err
		}
		e := &r.entry
		switch e.Type {
		case codec.EntryRow:
			if len(e.Row) != len(r.cols) {
				r.fail(&Error{Message: "cursor row has the wrong number of values"})
				return r.err
			}
			for i := range e.Row {
				dest[i] = fromValue(&e.Row[i], r.kinds[i], &r.bx)
			}
			return nil
		case codec.EntryStepEnd:
			r.done = true
			r.drain()
			return io.EOF
		case codec.EntryStepError, codec.EntryError:
			r.fail(r.stmtErr(&e.Error))
			return r.err
		default:
			// The step ended without step_end (or a second step began):
			// the rows read so far may not be all of them.
			r.fail(&Error{Message: "cursor result ended without step_end"})
			return r.err
		}
	}
}

// drain reads the final entry after step_end, so that the HTTP connection
// can be reused, then releases the cursor.
func (r *rows) drain() {
	if !r.cur.Done() {
		_ = r.cur.Next(&r.entry)
	}
	r.release()
}

// cursorErr converts a transport failure while reading a cursor.
func (r *rows) cursorErr(err error) error {
	if errors.Is(err, io.EOF) {
		err = &Error{Message: "read failed", Err: transport.ErrCursorTruncated}
	}
	return err
}

// fail records err as the rows' error and releases the cursor.
func (r *rows) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.release()
}

// abort stops rows that a later statement on the same stream interrupts.
func (r *rows) abort(err error) {
	if !r.done {
		r.fail(err)
	}
	r.release()
}

// release closes the cursor, which closes a stream opened for these rows
// alone.
func (r *rows) release() {
	if r.cur == nil {
		return
	}
	r.cur.Close()
	r.cur = nil
}

// ColumnTypeDatabaseTypeName returns the column's declared type, upper
// case, or "" for expressions.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return r.types[i] }

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
