package localdb

import (
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteConn is what database/sql and this package use of a
// modernc.org/sqlite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

var (
	_ driver.QueryerContext     = (*replicaConn)(nil)
	_ driver.ExecerContext      = (*replicaConn)(nil)
	_ driver.ConnPrepareContext = (*replicaConn)(nil)
)

// replicaConn is a connection of the replica's driver: a modernc.org/sqlite
// one, which its vector_top_k finds under id (in conns) until it closes.
// SQLite connects the table again each time it reloads the schema (after
// any schema change in the file), so the number must stay valid as long
// as the connection.
//
// SQLite compiles a statement against the schema the connection has
// cached, and checks that schema against the file's cookie only when the
// statement runs, or when compiling failed on a name it did not find.
// Another connection's DDL (the offline writer's, a sync's) can leave the
// cache stale, and a statement the stale schema refuses for another reason
// (an ORDER BY term past the columns of a redefined view) would then fail
// although the file accepts it. So a statement that fails with SQLite's
// generic error is compiled once more after the connection has checked its
// schema (checkSchema). That retry is safe: a failed statement changed
// nothing.
type replicaConn struct {
	sqliteConn
	id uint64
}

func (c *replicaConn) Close() error {
	err := c.sqliteConn.Close()
	conns.Delete(c.id)
	return err
}

func (c *replicaConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.sqliteConn.QueryContext(ctx, query, args)
	if err != nil && c.checkSchema(ctx, err) {
		rows, err = c.sqliteConn.QueryContext(ctx, query, args)
	}
	return rows, err
}

func (c *replicaConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.sqliteConn.ExecContext(ctx, query, args)
	if err != nil && c.checkSchema(ctx, err) {
		res, err = c.sqliteConn.ExecContext(ctx, query, args)
	}
	return res, err
}

func (c *replicaConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil && c.checkSchema(ctx, err) {
		st, err = c.sqliteConn.PrepareContext(ctx, query)
	}
	return st, err
}

// checkSchemaSQL reads the schema table: running it checks the
// connection's schema cookie against the file's, and reloads a stale
// schema (SQLite's OP_Transaction, then the statement's own re-preparation).
const checkSchemaSQL = "SELECT 1 FROM sqlite_schema LIMIT 0"

// checkSchema reports whether err, a statement's failure, may come from a
// stale schema (SQLite's generic error), after the connection has checked
// its schema; the statement is then worth compiling once more.
func (c *replicaConn) checkSchema(ctx context.Context, err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_ERROR || ctx.Err() != nil {
		return false
	}
	rows, qerr := c.sqliteConn.QueryContext(ctx, checkSchemaSQL, nil)
	if qerr != nil {
		return false
	}
	return rows.Close() == nil
}
