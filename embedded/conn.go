package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/sqlscan"
)

// conn is one connection of a Connector: its statements run on the local
// file or on its connection to the primary, one statement at a time, as
// classify says, and every statement of a transaction on the primary.
type conn struct {
	c       *Connector
	primary driver.Conn // the driver's connection; sends nothing until used
	tx      *tx         // the transaction BeginTx opened, if any
	ltx     *localTx    // with offline writes: the local transaction BeginTx opened
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
)

// inTransaction is what the driver's connection says of itself: whether a
// transaction is open on it.
type inTransaction interface{ InTransaction() bool }

// inTx reports whether a transaction is open on the primary: one of
// BeginTx, or one begun with SQL (BEGIN, SAVEPOINT), which the driver's
// connection follows from the server's answers.
func (c *conn) inTx() bool {
	if c.tx != nil || c.ltx != nil {
		return true
	}
	t, ok := c.primary.(inTransaction)
	return ok && t.InTransaction()
}

// where returns the route of a statement on this connection.
func (c *conn) where(query string, st *sqlscan.Statement) route {
	if c.inTx() {
		return routePrimary
	}
	return classify(query, st)
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st := sqlscan.Analyze(query)
	return c.exec(ctx, query, &st, args)
}

// exec is ExecContext of a text already analysed.
func (c *conn) exec(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Result, error) {
	if c.c.off != nil {
		if res, done, err := c.offlineExec(ctx, query, st, args); done {
			return res, err
		}
	}
	switch c.routeOf(ctx, query, st) {
	case routeRefuse:
		return nil, refused(query)
	case routeLocal, routeCheck:
		res, err := c.localExec(ctx, query, args)
		if !c.fallBack(ctx, err) {
			return res, err
		}
	}
	return c.primaryExec(ctx, query, st.ReadOnly, args)
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st := sqlscan.Analyze(query)
	return c.query(ctx, query, &st, args)
}

// query is QueryContext of a text already analysed.
func (c *conn) query(ctx context.Context, query string, st *sqlscan.Statement, args []driver.NamedValue) (driver.Rows, error) {
	if c.c.off != nil {
		if rows, done, err := c.offlineQuery(ctx, query, st, args); done {
			return rows, err
		}
	}
	switch c.routeOf(ctx, query, st) {
	case routeRefuse:
		return nil, refused(query)
	case routeCheck:
		return c.localCheck(ctx, query, st)
	case routeLocal:
		rows, err := c.localQuery(ctx, query, args)
		if !c.fallBack(ctx, err) {
			return rows, err
		}
	}
	return c.primaryQuery(ctx, query, st.ReadOnly, args)
}

// routeOf is where a statement runs on this connection, a read of the
// schema's description resolved (schemaRoute).
func (c *conn) routeOf(ctx context.Context, query string, st *sqlscan.Statement) route {
	r := c.where(query, st)
	if r == routeTables || r == routeIndexes {
		r = c.schemaRoute(ctx, r)
	}
	return r
}

// fallBack reports whether a local read that failed with err should go
// to the primary: it wanted libSQL's own SQL, or an object that the local
// schema may lack only because the local SQLite could not load it.
func (c *conn) fallBack(ctx context.Context, err error) bool {
	return localFallback(err) || (missingObject(err) && !c.localSchemaHas(ctx, routeIndexes))
}

// schemaRoute is where a read of the schema's description (routeTables
// or routeIndexes) runs: on the local file while its SQLite loaded every
// object of the kinds the read describes, on the primary otherwise.
func (c *conn) schemaRoute(ctx context.Context, r route) route {
	if c.localSchemaHas(ctx, r) {
		return routeLocal
	}
	return routePrimary
}

// localSchemaHas reports whether the local SQLite loaded every table and
// view of the local file's schema, and for routeIndexes every index too
// (false if that cannot be told).
func (c *conn) localSchemaHas(ctx context.Context, r route) bool {
	if err := c.c.readYourWrites(ctx); err != nil {
		return false
	}
	db, release, err := c.c.local.acquire(ctx)
	if err != nil {
		return false
	}
	defer release()
	unloaded, err := localdb.Unloaded(ctx, db)
	if err != nil {
		return false
	}
	for _, o := range unloaded {
		if o.Type != "index" || r == routeIndexes {
			return false
		}
	}
	return true
}

// localCheck answers PRAGMA integrity_check or quick_check of the whole
// local file as the primary would of its own: see localdb.IntegrityCheck.
func (c *conn) localCheck(ctx context.Context, query string, st *sqlscan.Statement) (driver.Rows, error) {
	if err := c.c.readYourWrites(ctx); err != nil {
		return nil, err
	}
	limit, err := checkLimit(query)
	if err != nil {
		return nil, err
	}
	name := pragmaName(query)
	if st.SetsPragma() {
		name = st.PragmaName
	}
	db, release, err := c.c.local.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	msgs, err := localdb.IntegrityCheck(ctx, db, name == "quick_check", limit)
	if err != nil {
		return nil, err
	}
	return &listRows{col: name, vals: msgs}, nil
}

func refused(query string) error {
	const max = 60
	if len(query) > max {
		query = query[:max] + "..."
	}
	return fmt.Errorf("%w: %q", ErrPragma, query)
}

// mayHaveWritten makes the next local read wait for a sync if a statement
// on the primary may have written: it is not certainly a read (readOnly,
// sqlscan.Statement's), and it ran or may have run (an SQL error or a
// refusal ran nothing).
func (c *conn) mayHaveWritten(readOnly bool, err error) {
	if readOnly {
		return
	}
	var pe *PrimaryError
	if err == nil || (errors.As(err, &pe) && pe.MayHaveRun) {
		c.c.wroteNow()
	}
}

func (c *conn) primaryExec(ctx context.Context, query string, readOnly bool, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.primary.(driver.ExecerContext).ExecContext(ctx, query, args)
	err = primaryErr(err)
	c.mayHaveWritten(readOnly, err)
	return res, err
}

func (c *conn) primaryQuery(ctx context.Context, query string, readOnly bool, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.primary.(driver.QueryerContext).QueryContext(ctx, query, args)
	err = primaryErr(err)
	c.mayHaveWritten(readOnly, err)
	return rows, err
}

func (c *conn) localQuery(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.c.readYourWrites(ctx); err != nil {
		return nil, err
	}
	db, release, err := c.c.local.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, query, localArgs(args)...)
	if err != nil {
		release()
		return nil, err
	}
	return newLocalRows(rows, release)
}

func (c *conn) localExec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.c.readYourWrites(ctx); err != nil {
		return nil, err
	}
	db, release, err := c.c.local.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return db.ExecContext(ctx, query, localArgs(args)...)
}

// localArgs turns a statement's arguments into database/sql's for the
// local pool.
func localArgs(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if a.Name != "" {
			out[i] = sql.Named(a.Name, a.Value)
		} else {
			out[i] = a.Value
		}
	}
	return out
}

// CheckNamedValue converts arguments as the driver does for the primary,
// so that a statement takes the same arguments wherever it runs.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.primary.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.tx != nil || c.ltx != nil {
		return nil, errors.New("embedded: a transaction is already open on this connection")
	}
	if c.c.off != nil {
		return c.offlineBegin(ctx)
	}
	inner, err := c.primary.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, primaryErr(err)
	}
	c.tx = &tx{c: c, inner: inner}
	return c.tx, nil
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns a statement that is routed when it runs, as the
// connection routes its text.
func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return &stmt{c: c, query: query, st: sqlscan.Analyze(query)}, nil
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.primary.(driver.Pinger); ok {
		return primaryErr(p.Ping(ctx))
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.primary.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if c.tx != nil || c.ltx != nil {
		return false
	}
	if v, ok := c.primary.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) Close() error { return c.primary.Close() }

// Raw returns the connection to the primary, for the driver's functions
// that take a *sql.Conn (libsql.Batch): what they run goes to the primary.
func (c *conn) Raw() driver.Conn { return c.primary }

// ObserveWrite is told by such a function (libsql.Batch) that it wrote, or
// may have, through Raw: the next local read waits for a sync, as after a
// write statement.
func (c *conn) ObserveWrite() { c.c.wroteNow() }

// tx is a transaction on the primary.
type tx struct {
	c     *conn
	inner driver.Tx
}

func (t *tx) Commit() error {
	t.c.tx = nil
	err := primaryErr(t.inner.Commit())
	t.c.mayHaveWritten(false, err)
	return err
}

func (t *tx) Rollback() error {
	t.c.tx = nil
	return primaryErr(t.inner.Rollback())
}

// stmt is a prepared statement: its text, routed each time it runs.
type stmt struct {
	c     *conn
	query string
	st    sqlscan.Statement // the text, read once
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.query, &s.st, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.query(ctx, s.query, &s.st, args)
}

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}
