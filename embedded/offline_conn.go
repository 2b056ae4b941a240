package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/sqlscan"
)

// The statements of a connection of a Connector with offline writes: a
// write, and every statement of a transaction, runs on the local file
// through the writer connection; reads outside a transaction run as
// without offline writes.

// offlineWrite returns, for a statement outside a local transaction,
// whether it is a local write (else it runs as a read), or the error of
// one that is refused: what the primary would refuse, or what would not
// mean the same there as on the local file, is refused at once, so that
// no local transaction holds a statement that can never be pushed.
func offlineWrite(query string, st *sqlscan.Statement) (bool, error) {
	switch {
	case st.Tx != sqlscan.NotTx || st.BeginsTx:
		return false, fmt.Errorf("%w: transaction control in SQL (use BeginTx): %.60q", ErrOfflineSQL, query)
	case st.ReadOnly:
		return false, nil
	case st.Multi:
		return false, fmt.Errorf("%w: a script of several statements: %.60q", ErrOfflineSQL, query)
	}
	switch kw := strings.ToUpper(st.Keyword); kw {
	case "VACUUM", "ATTACH", "DETACH":
		return false, fmt.Errorf("%w: %s", ErrOfflineSQL, kw)
	case "ANALYZE":
		return false, fmt.Errorf("%w: ANALYZE, which the primary refuses (sqld takes it for an unsupported statement)", ErrOfflineSQL)
	case "PRAGMA":
		return false, nil // routed as without offline writes
	case "CREATE":
		if sqlscan.CreatesTemp(query) {
			return false, fmt.Errorf("%w: a TEMP object lives on one connection, so neither the primary (which refuses it) nor the local reads would see it: %.60q", ErrOfflineSQL, query)
		}
	}
	return true, nil
}

// countsChanges reports whether a statement's changes() is its own: an
// INSERT, UPDATE, DELETE or REPLACE, maybe after a WITH. SQLite leaves
// changes() as the last such statement set it through any other (a
// CREATE after an INSERT reports the INSERT's count), and sqld answers 0
// rows changed for the others, as the replica's local writes do.
func countsChanges(st *sqlscan.Statement) bool {
	switch strings.ToUpper(st.Keyword) {
	case "INSERT", "UPDATE", "DELETE", "REPLACE":
		return true
	case "WITH":
		return !st.ReadOnly
	}
	return false
}

// inserts reports whether a statement's last_insert_rowid() is its own,
// as sqld has it: an INSERT or REPLACE.
func inserts(st *sqlscan.Statement) bool {
	switch strings.ToUpper(st.Keyword) {
	case "INSERT", "REPLACE":
		return true
	}
	return false
}

// localResult is the result of a local write, as the primary would give
// it: rows changed only for a statement that counts them, a rowid only for
// an INSERT.
type localResult struct{ rows, id int64 }

func (r localResult) LastInsertId() (int64, error) { return r.id, nil }
func (r localResult) RowsAffected() (int64, error) { return r.rows, nil }

// offlineExec runs ExecContext with offline writes; done is false for a
// read outside a transaction, which the caller runs.
func (c *conn) offlineExec(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Result, bool, error) {
	if c.ltx != nil {
		res, err := c.ltx.exec(ctx, query, st, args)
		return res, true, err
	}
	write, err := offlineWrite(query, st)
	if err != nil || !write {
		return nil, err != nil, err
	}
	res, err := autocommit(ctx, c.c.off, func(t *localTx) (driver.Result, error) { return t.exec(ctx, query, st, args) })
	return res, true, err
}

// offlineQuery is offlineExec for QueryContext: a write with RETURNING
// runs locally, its rows read whole before the transaction commits.
func (c *conn) offlineQuery(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Rows, bool, error) {
	if c.ltx != nil {
		rows, err := c.ltx.query(ctx, query, st, args)
		return rows, true, err
	}
	write, err := offlineWrite(query, st)
	if err != nil || !write {
		return nil, err != nil, err
	}
	rows, err := autocommit(ctx, c.c.off, func(t *localTx) (driver.Rows, error) { return t.query(ctx, query, st, args) })
	return rows, true, err
}

// autocommit runs one statement outside a transaction as a local
// transaction of its own: under the local write lock, committed with its
// queue entry, or rolled back if it failed.
func autocommit[R any](ctx context.Context, o *offline, run func(t *localTx) (R, error)) (R, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	conn, err := o.begin(ctx)
	if err != nil {
		var none R
		return none, err
	}
	t := &localTx{o: o, conn: conn}
	r, err := run(t)
	if err == nil {
		err = o.finish(ctx, conn, t.stmts)
	} else {
		o.end(conn, false) // after a broken one, a ROLLBACK that finds none
	}
	return r, err
}

// offlineBegin begins a local transaction: it holds the local write lock
// until it ends.
func (c *conn) offlineBegin(ctx context.Context) (driver.Tx, error) {
	o := c.c.off
	o.mu.Lock()
	conn, err := o.begin(ctx)
	if err != nil {
		o.mu.Unlock()
		return nil, err
	}
	c.ltx = &localTx{o: o, conn: conn, c: c}
	return c.ltx, nil
}

// localTx is a local transaction on the writer connection, and the
// statements it ran, for the queue.
type localTx struct {
	o      *offline
	c      *conn // nil for the transaction of one statement
	conn   *sql.Conn
	stmts  []queuedStmt
	broken bool  // an error ended the SQLite transaction
	err    error // that error
}

// ErrTxRolledBack is the error of a statement, or a Commit, after an error
// rolled back a local transaction (a constraint with ON CONFLICT
// ROLLBACK, RAISE(ROLLBACK), a full disk).
var ErrTxRolledBack = errors.New("embedded: the local transaction was rolled back by an error")

// failed checks, after a statement's error, whether SQLite ended the
// transaction: BEGIN then fails inside one and succeeds outside (and that
// new transaction is rolled back at the end).
func (t *localTx) failed(ctx context.Context, err error) error {
	if _, berr := t.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); berr == nil {
		t.broken, t.err = true, err
		t.conn.ExecContext(ctx, "ROLLBACK")
	}
	return err
}

func (t *localTx) exec(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Result, error) {
	if t.broken {
		return nil, fmt.Errorf("%w: %v", ErrTxRolledBack, t.err)
	}
	if _, err := offlineWrite(query, st); err != nil {
		return nil, err
	}
	var res sql.Result
	err := t.run(ctx, query, st, func() (err error) {
		res, err = t.conn.ExecContext(ctx, query, writeArgs(args)...)
		return err
	})
	if err != nil {
		return nil, t.failed(ctx, err)
	}
	var out localResult
	if countsChanges(st) {
		if out.rows, err = res.RowsAffected(); err != nil {
			return nil, err
		}
	}
	if inserts(st) {
		if out.id, err = res.LastInsertId(); err != nil {
			return nil, err
		}
	}
	if !st.ReadOnly {
		n := int64(-1)
		if countsChanges(st) {
			n = out.rows
		}
		t.stmts = append(t.stmts, queuedStmt{SQL: query, Args: queueArgs(args), Changes: n})
	}
	return out, nil
}

func (t *localTx) query(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Rows, error) {
	if t.broken {
		return nil, fmt.Errorf("%w: %v", ErrTxRolledBack, t.err)
	}
	if _, err := offlineWrite(query, st); err != nil {
		return nil, err
	}
	// The rows are read whole: the next statement, the queue's entry and
	// the commit run on the same connection.
	var buf *bufRows
	err := t.run(ctx, query, st, func() error {
		rows, err := t.conn.QueryContext(ctx, query, writeArgs(args)...)
		if err != nil {
			return err
		}
		lr, err := newLocalRows(rows, func() {})
		if err != nil {
			return err
		}
		defer lr.Close()
		buf = &bufRows{cols: lr.Columns()}
		for {
			row := make([]driver.Value, len(buf.cols))
			if err := lr.Next(row); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			buf.rows = append(buf.rows, row)
		}
	})
	if err != nil {
		return nil, t.failed(ctx, err)
	}
	if !st.ReadOnly {
		n := int64(-1)
		if countsChanges(st) {
			if err := t.conn.QueryRowContext(ctx, "SELECT changes()").Scan(&n); err != nil {
				return nil, err
			}
		}
		t.stmts = append(t.stmts, queuedStmt{SQL: query, Args: queueArgs(args), Changes: n})
	}
	return buf, nil
}

// run runs f, the statement query, on the writer: under localdb.Strict
// if writable_schema would change what it does (strictSchema).
func (t *localTx) run(ctx context.Context, query string, st *sqlscan.Statement, f func() error) error {
	if strictSchema(query, st) {
		return localdb.Strict(ctx, t.conn, f)
	}
	return f()
}

// strictSchema reports whether writable_schema, under which the writer
// loads the schema, would change what a statement does: DDL, and any
// statement that names an object of SQLite's own (sqlite_schema).
func strictSchema(query string, st *sqlscan.Statement) bool {
	switch strings.ToUpper(st.Keyword) {
	case "CREATE", "ALTER", "DROP":
		return true
	}
	s := sqlscan.NewScanner(query)
	for tok := s.Next(); tok.Kind != sqlscan.EOF; tok = s.Next() {
		w := query[tok.Start:tok.End]
		switch tok.Kind {
		case sqlscan.Quoted:
			w = w[1 : len(w)-1]
		case sqlscan.Word:
		default:
			continue
		}
		if len(w) >= len("sqlite_") && strings.EqualFold(w[:len("sqlite_")], "sqlite_") {
			return true
		}
	}
	return false
}

// Commit commits the transaction and its queue entry.
func (t *localTx) Commit() error {
	defer t.close()
	if t.broken {
		t.o.end(t.conn, false)
		return fmt.Errorf("%w: %v", ErrTxRolledBack, t.err)
	}
	return t.o.finish(context.Background(), t.conn, t.stmts)
}

// Rollback rolls it back.
func (t *localTx) Rollback() error {
	defer t.close()
	err := t.o.end(t.conn, false)
	if t.broken {
		return nil
	}
	return err
}

func (t *localTx) close() {
	t.c.ltx = nil
	t.o.mu.Unlock()
}

// bufRows are rows read whole.
type bufRows struct {
	cols []string
	rows [][]driver.Value
}

func (r *bufRows) Columns() []string { return r.cols }
func (r *bufRows) Close() error      { r.rows = nil; return nil }

func (r *bufRows) Next(dest []driver.Value) error {
	if len(r.rows) == 0 {
		return io.EOF
	}
	copy(dest, r.rows[0])
	r.rows = r.rows[1:]
	return nil
}

// writeArgs is localArgs for a local write: a time.Time is written as the
// driver sends it to the primary (libsql.TimeFormat text, in UTC), so that
// the local row holds what the primary's will.
func writeArgs(args []driver.NamedValue) []any {
	out := localArgs(args)
	for i, a := range out {
		switch v := a.(type) {
		case time.Time:
			out[i] = v.UTC().Format(libsql.TimeFormat)
		case sql.NamedArg:
			if tv, ok := v.Value.(time.Time); ok {
				out[i] = sql.Named(v.Name, tv.UTC().Format(libsql.TimeFormat))
			}
		}
	}
	return out
}
