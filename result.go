package libsql

import (
	"database/sql/driver"
	"math"

	"github.com/gohrana/libsql/codec"
)

var _ driver.Result = result{}

// result is what Exec returns.
type result struct {
	affected int64
	lastID   int64
}

func newResult(r *codec.StmtResult) result {
	affected := int64(math.MaxInt64)
	if r.AffectedRowCount < math.MaxInt64 {
		affected = int64(r.AffectedRowCount)
	}
	return result{affected: affected, lastID: r.LastInsertRowID}
}

// LastInsertId returns the rowid of the last row inserted by this
// connection's statement. sqld reports it for INSERT statements only; for
// others it is 0.
func (r result) LastInsertId() (int64, error) { return r.lastID, nil }

// RowsAffected returns the number of rows changed by an INSERT, UPDATE or
// DELETE; 0 for other statements.
func (r result) RowsAffected() (int64, error) { return r.affected, nil }
