package libsql

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
)

// A connection in autocommit mode (modeAutocommit, conn.go) runs each
// operation as a unit of work of its own on the session, so no transaction
// stays open on the server between statements (over HTTP the connection's
// stream is kept, checked by get_autocommit). A statement that may begin a
// transaction is watched (tx_sql.go): if one is open after it, the
// connection is in modeSQLTx.

// Backoff between retries of a statement that failed with SQLITE_BUSY.
const (
	busyFirstWait = time.Millisecond
	busyMaxWait   = 100 * time.Millisecond
)

// execute runs one statement. One that failed with SQLITE_BUSY did not
// apply (SQLite rolls back the statement's implicit transaction), so it
// is run again, with backoff, until it gets through, busyTimeout has
// passed or ctx ends; the last SQLITE_BUSY error is returned then. Scripts
// (sequence) and statements inside transactions are never retried.
//
// A statement that may write holds one of the connector's write slots
// while it is sent, each attempt apart: not while it waits to retry, so
// that the slot goes to a writer that may get through.
//
// A statement that may begin a transaction is watched (see sqlTx).
func (c *conn) autoExecute(ctx context.Context, st *codec.Stmt, text *sqlText) (*session.Result, error) {
	w := c.writers
	if w != nil && text.ReadOnly {
		w = nil
	}
	if err := w.acquire(ctx, c.tr); err != nil {
		return nil, err
	}
	res, err := c.autoOnce(ctx, st, text)
	w.release()
	if err == nil || !hasCode(err, codeSQLiteBusy) {
		return res, err
	}
	err = retryBusy(ctx, c.tr, c.busyTimeout, err, func(ctx context.Context) (bool, error) {
		if w.acquire(ctx, c.tr) != nil {
			return false, nil
		}
		var rerr error
		res, rerr = c.autoOnce(ctx, st, text)
		w.release()
		return true, rerr
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// retryBusy runs an operation again whose last try failed with
// SQLITE_BUSY (err) and so applied nothing: with jittered, growing backoff,
// until a try gets through or fails otherwise, timeout has passed, or ctx
// ends. try runs it once and reports false if ctx ended before it could
// send. retryBusy returns the last try's error, or err if no further try
// was sent. A timeout of 0 turns retries off.
func retryBusy(ctx context.Context, tr *connTrace, timeout time.Duration, err error, try func(ctx context.Context) (sent bool, err error)) error {
	if timeout <= 0 {
		return err
	}
	deadline := time.Now().Add(timeout)
	wait := busyFirstWait
	for attempt := 2; ; attempt++ {
		// Jitter keeps retrying writers from colliding again in step.
		d := wait/2 + rand.N(wait/2+1)
		if time.Until(deadline) < d {
			return err
		}
		var ev *TraceEvent
		tctx := ctx
		if tr != nil {
			tctx, ev = tr.startRetry(ctx, RetryBusy, attempt, err)
		}
		if !sleep(tctx, d, tr) {
			if ev != nil {
				tr.end(tctx, ev, tctx.Err())
			}
			return err // ctx ended first: the last SQLITE_BUSY stands
		}
		sent, rerr := try(tctx)
		if ev != nil {
			if !sent {
				rerr = tctx.Err()
			}
			tr.end(tctx, ev, rerr)
		}
		if !sent {
			return err
		}
		if err = rerr; err == nil || !hasCode(err, codeSQLiteBusy) {
			return err
		}
		wait = min(2*wait, busyMaxWait)
	}
}

// autoOnce sends the statement once: watched if it may begin a transaction,
// as a read (which the session may send again after a server failure on
// a kept stream) if it certainly only reads.
func (c *conn) autoOnce(ctx context.Context, st *codec.Stmt, text *sqlText) (*session.Result, error) {
	switch {
	case text.beginsTx():
		return c.sqlTx.begin(ctx, c.s, st)
	case text.ReadOnly:
		return c.s.ExecuteRead(ctx, st)
	}
	return c.s.Execute(ctx, st)
}

// autoSequence runs a script. Scripts (schema files, migrations) are taken to
// write and hold a write slot, and are watched: one may begin a
// transaction it does not end.
func (c *conn) autoSequence(ctx context.Context, script string, text *sqlText) error {
	if err := c.writers.acquire(ctx, c.tr); err != nil {
		return err
	}
	defer c.writers.release()
	return c.sqlTx.beginScript(ctx, c.s, script, text.BeginsTx)
}

// describe describes sql on the session, outside any transaction's queue.
func (c *conn) describe(ctx context.Context, sql string) (codec.DescribeResult, error) {
	return c.s.Describe(ctx, sql)
}

// autoCursor streams the statement's rows on a stream that ends with them
// (in modeSQLTx, on the held stream, which stays).
func (c *conn) autoCursor(ctx context.Context, st *codec.Stmt) (*cursorRows, error) {
	cur, err := c.s.OpenCursor(ctx, []codec.BatchStep{{Stmt: *st}})
	if err != nil {
		return nil, err
	}
	// Outside a transaction a statement's error is just that.
	return newCursorRows(cur, func(he *codec.Error) error { return stmtError(he) })
}

// sleep waits d, or until ctx ends, which it reports as false; told to tr
// (nil: not traced) as a WaitBusyBackoff.
func sleep(ctx context.Context, d time.Duration, tr *connTrace) bool {
	var ev *TraceEvent
	if tr != nil {
		ctx, ev = tr.startWait(ctx, WaitBusyBackoff)
	}
	t := time.NewTimer(d)
	var err error
	select {
	case <-ctx.Done():
		t.Stop()
		err = ctx.Err()
	case <-t.C:
	}
	if ev != nil {
		tr.end(ctx, ev, err)
	}
	return err == nil
}
