package libsql

import (
	"database/sql/driver"
	"errors"
	"io"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

var (
	_ driver.Rows                           = (*cursorRows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*cursorRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*cursorRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*cursorRows)(nil)
)

var errCursorInterrupted = errors.New("libsql: rows closed early: another statement ran on the transaction while they were streaming")

// cursorRows iterates over the rows of a cursor, decoding them as they
// arrive: a result of any size in bounded memory.
type cursorRows struct {
	columns
	cur     transport.Cursor
	stmtErr func(*codec.Error) error // converts a statement error from the cursor
	entry   codec.CursorEntry
	done    bool
	err     error
}

// newCursorRows reads the cursor up to the step's column list. stmtErr
// converts statement errors (a transaction's notices when the server rolled
// it back).
func newCursorRows(cur transport.Cursor, stmtErr func(*codec.Error) error) (*cursorRows, error) {
	r := &cursorRows{cur: cur, stmtErr: stmtErr}
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
	default:
		r.fail(protocolError("cursor response did not start with step_begin"))
	}
	return nil, r.err
}

// Close releases the rows. A cursor still streaming is cut off, which
// discards its HTTP connection, and its server stream is closed.
func (r *cursorRows) Close() error {
	if r.cur != nil {
		if !r.done && r.err == nil {
			r.err = errors.New("libsql: rows are closed")
		}
		r.release()
	}
	return nil
}

// Next fills dest with the next row.
func (r *cursorRows) Next(dest []driver.Value) error {
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	if err := r.cur.Next(&r.entry); err != nil {
		r.fail(r.cursorErr(err))
		return r.err
	}
	e := &r.entry
	switch e.Type {
	case codec.EntryRow:
		if len(e.Row) != len(r.cols) {
			r.fail(protocolError("cursor row has the wrong number of values"))
			return r.err
		}
		r.fill(dest, e.Row)
		return nil
	case codec.EntryStepEnd:
		if err := r.end(); err != nil {
			r.fail(err)
			return r.err
		}
		r.done = true
		r.release()
		return io.EOF
	case codec.EntryStepError, codec.EntryError:
		r.fail(r.stmtErr(&e.Error))
		return r.err
	default:
		// The step ended without step_end (or a second step began):
		// the rows read so far may not be all of them.
		r.fail(protocolError("cursor result ended without step_end"))
		return r.err
	}
}

// end reads the cursor's final entry after step_end. Only the terminator
// makes the rows complete: a body that ends without it, or with an error
// entry, failed (PROTOCOL.md §7.2.5), whatever came before. Reading it also
// lets the HTTP connection be reused.
func (r *cursorRows) end() error {
	if r.cur.Done() {
		return nil
	}
	if err := r.cur.Next(&r.entry); err != nil {
		return r.cursorErr(err)
	}
	switch e := &r.entry; e.Type {
	case codec.EntryReplicationIndex:
		return nil
	case codec.EntryError:
		return r.stmtErr(&e.Error)
	default:
		return protocolError("cursor result went on after its step_end")
	}
}

// cursorErr converts a transport failure while reading a cursor.
func (r *cursorRows) cursorErr(err error) error {
	if errors.Is(err, io.EOF) {
		err = truncatedError()
	}
	return err
}

// fail records err as the rows' error and releases the cursor.
func (r *cursorRows) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.release()
}

// abort stops rows that a later statement on the same stream interrupts.
func (r *cursorRows) abort(err error) {
	if !r.done {
		r.fail(err)
	}
	r.release()
}

// release closes the cursor, which closes a stream opened for these rows
// alone.
func (r *cursorRows) release() {
	if r.cur == nil {
		return
	}
	r.cur.Close()
	r.cur = nil
}
