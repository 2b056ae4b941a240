package embedded

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded/internal/durable"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/localdb"
	"github.com/gohrana/libsql/sqlscan"
)

// Offline writes (WithOfflineWrites). Each local transaction runs on the
// replica file through one writer connection and adds a row to the local
// table libsql_offline_queue in the same SQLite transaction. The WAL is
// never checkpointed while that queue has rows, so the main file keeps
// the primary's pages (localdb's base). A sync pushes the queue to the
// primary in one Hrana batch per chunk, with the record of what it pushed
// in the primary's table libsql_offline_writes committed in the same
// transaction; then the first transaction that applies the primary's next
// frames also writes the base back over the pages the local writes
// changed, which drops them and the queue at once.

// Names of the driver's tables.
const (
	// queueTable is the local queue of transactions not yet on the
	// primary (local only; a restore removes it with the writes).
	queueTable = localdb.QueueTable
	// recordTable, on the primary, holds for each replica the last of its
	// local transactions the primary has: applied, or recorded in
	// conflictTable.
	recordTable = "libsql_offline_writes"
	// conflictTable, on the primary, holds each replica's transactions
	// that failed there, with the error, until the replica has reported
	// them (a later push deletes them).
	conflictTable = "libsql_offline_conflicts"
)

// maxPushTxns and maxPushBytes bound the transactions of one push
// request, by count and by the size of their queue entries (a request
// holds at least one transaction, however large).
const (
	maxPushTxns  = 1000
	maxPushBytes = 4 << 20
)

// ErrRowsChanged is the error of a Conflict whose statement changed a
// different number of rows on the primary than it had locally (an UPDATE
// of a row another client deleted, an INSERT OR IGNORE of a key another
// client inserted).
var ErrRowsChanged = errors.New("embedded: a statement changed a different number of rows on the primary than locally")

// ErrOfflineSQL is the error of SQL that a replica with offline writes
// does not run: transaction control in SQL (BEGIN, COMMIT, SAVEPOINT...;
// use BeginTx), a script of several statements that writes, or VACUUM,
// ATTACH and DETACH.
var ErrOfflineSQL = errors.New("embedded: not run with offline writes")

// ErrNoOfflineWrites is the error of Push on a Connector without
// WithOfflineWrites, whose writes go to the primary as they run.
var ErrNoOfflineWrites = errors.New("embedded: Push needs WithOfflineWrites")

// ErrRecordMoved is the error of a push that found the primary's record of
// this replica (libsql_offline_writes) other than it read it just before:
// another process pushes as the same replica. Nothing was applied.
var ErrRecordMoved = errors.New("embedded: the primary's record of this replica moved during the push")

// A Conflict is a local transaction that the primary refused: it was not
// applied there, and after the sync that found it the local file shows
// the primary's state without it.
type Conflict struct {
	// ID is the transaction's number in the replica's queue.
	ID int64
	// SQL and Args are its statements, in order, and their arguments.
	SQL  []string
	Args [][]any
	// Err is the primary's answer: the statement's error (an
	// *libsql.Error naming it by its position in the push's batch), one
	// matching ErrRowsChanged, or, when an earlier push recorded the
	// conflict and its answer was lost, an error with the message recorded.
	Err error
}

// offline is the local writing side of a Connector with offline writes.
type offline struct {
	path    string
	full    bool
	handler func(Conflict)
	key     *encrypt.Key // nil: the replica is in the clear

	id    string // this replica's name on the primary
	floor int64  // the last transaction whose outcome was reported (the sidecar's)

	// syncMu makes syncs run one at a time; it guards floor and the
	// sidecar. mu is the local write lock: one local transaction at a
	// time, and the end of a sync (the last push, the restore and the
	// pull), so that no write lands between the push and the restore.
	syncMu sync.Mutex
	mu     sync.Mutex
	db     *sql.DB // the writer; nil while detached
	next   int64   // the next transaction's ID

	// queued counts the transactions in the local queue (their writes
	// are in the WAL, over the base, until a restore); unpushed those of
	// them not yet on the primary (Push leaves the pushed ones queued).
	queued    atomic.Int64
	unpushed  atomic.Int64
	failed    atomic.Int64 // pushes that failed
	pushed    atomic.Int64
	conflicts atomic.Int64

	errMu     sync.Mutex
	lastErr   error
	lastErrAt time.Time
}

// sidecarPath is the file beside the database with the replica's name on
// the primary and its floor.
func sidecarPath(path string) string { return path + "-offline" }

// open opens the writer and reads the queue's state.
func (o *offline) open(ctx context.Context) error {
	if err := o.readSidecar(); err != nil {
		return err
	}
	if err := o.attach(); err != nil {
		return err
	}
	if err := o.recount(ctx); err != nil {
		return err
	}
	if o.id == "" {
		if o.queued.Load() > 0 {
			return fmt.Errorf("embedded: %s has local writes but %s is missing: they cannot be pushed exactly once", o.path, sidecarPath(o.path))
		}
		var b [16]byte
		rand.Read(b[:])
		o.id = hex.EncodeToString(b[:])
		if err := o.writeSidecar(); err != nil {
			return err
		}
	}
	return nil
}

func (o *offline) readSidecar() error {
	f, err := os.Open(sidecarPath(o.path))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	var id string
	var floor int64
	if !s.Scan() || s.Text() != "libsql-embedded-offline 1" {
		return fmt.Errorf("embedded: %s is not an offline writes file", sidecarPath(o.path))
	}
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), " ")
		switch k {
		case "replica":
			id = v
		case "floor":
			if _, err := fmt.Sscan(v, &floor); err != nil {
				return fmt.Errorf("embedded: %s: floor %q", sidecarPath(o.path), v)
			}
		}
	}
	if id == "" {
		return fmt.Errorf("embedded: %s names no replica", sidecarPath(o.path))
	}
	o.id, o.floor = id, floor
	return nil
}

// writeSidecar replaces the sidecar durably.
func (o *offline) writeSidecar() error {
	path := sidecarPath(o.path)
	tmp := path + ".tmp"
	data := fmt.Sprintf("libsql-embedded-offline 1\nreplica %s\nfloor %d\n", o.id, o.floor)
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	return durable.Replace(f, path, err)
}

// Detach implements replica.Readers: a file swap closes the writer (the
// sync holds mu, so no local transaction is open).
func (o *offline) Detach(context.Context) error {
	if o.db == nil {
		return nil
	}
	err := o.db.Close()
	o.db = nil
	return err
}

// Attach implements replica.Readers.
func (o *offline) Attach() error {
	db, err := localdb.OpenWriter(o.path, o.full, o.key)
	if err != nil {
		return err
	}
	o.db = db
	return nil
}

func (o *offline) attach() error { return o.Attach() }

// cookie reads the file's schema cookie (page 1's, not the one of the
// schema the writer holds).
func (o *offline) cookie(ctx context.Context) (int64, error) {
	var v int64
	err := o.db.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&v)
	return v, err
}

// renew replaces the writer's connection after a sync moved the file's
// schema cookie (a sync that leaves it has changed no schema): a new
// connection holds no schema from before. The writer is the one
// connection that can hold a schema the file never had: the differential
// tester caught it at the file's new cookie (385) with the local queue's
// table, which the sync had just taken away, so SQLite, finding the cookie
// unchanged, read through the old root pages ("database disk image is
// malformed"); how the writer came to hold it was not reproduced alone.
// Both locks are held, so nothing uses the writer.
func (o *offline) renew() error {
	derr := o.Detach(context.Background())
	return errors.Join(derr, o.Attach())
}

// recount reads how many transactions the queue holds, how many of them
// are not on the primary, and the next ID.
func (o *offline) recount(ctx context.Context) error {
	var n, unpushed, last int64
	err := o.db.QueryRowContext(ctx, "SELECT count(*), count(*) FILTER (WHERE id > ?), coalesce(max(id), 0) FROM "+queueTable, o.floor).Scan(&n, &unpushed, &last)
	if err != nil && !strings.Contains(err.Error(), "no such table") {
		return err
	}
	o.queued.Store(n)
	o.unpushed.Store(unpushed)
	o.next = max(last, o.floor) + 1
	return nil
}

// clean makes the main file hold every page of the primary's state that
// the file shows, before the first local write on it: a checkpoint of
// the frames the replication applied.
func (o *offline) clean(ctx context.Context) error {
	// FULL, not TRUNCATE: it waits for no reader, since a read holds an
	// older snapshot only while a commit is newer than it; the frames it
	// leaves in the WAL hold the main file's pages, and a restore writes
	// them back harmlessly.
	var busy, logN, done int
	if err := o.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(FULL)").Scan(&busy, &logN, &done); err != nil {
		return fmt.Errorf("embedded: checkpoint before the first local write: %w", err)
	}
	if busy != 0 || done != logN {
		return errors.New("embedded: a local write waits for a checkpoint that a long read blocks")
	}
	return localdb.RemoveBase(o.path)
}

// begin starts a local write transaction; o.mu is held.
func (o *offline) begin(ctx context.Context) (*sql.Conn, error) {
	if o.db == nil {
		return nil, ErrClosed
	}
	fresh := o.queued.Load() == 0
	if fresh {
		if err := o.clean(ctx); err != nil {
			return nil, err
		}
	}
	conn, err := o.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, err
	}
	if fresh {
		if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+queueTable+" (id INTEGER PRIMARY KEY, txn BLOB NOT NULL)"); err != nil {
			o.end(conn, false)
			return nil, err
		}
	}
	return conn, nil
}

// finish commits a local transaction with its queue entry, or rolls it
// back if it wrote nothing; o.mu is held.
func (o *offline) finish(ctx context.Context, conn *sql.Conn, stmts []queuedStmt) error {
	if len(stmts) == 0 {
		return o.end(conn, false)
	}
	entry, err := encodeTxn(stmts)
	if err == nil {
		_, err = conn.ExecContext(ctx, "INSERT INTO "+queueTable+" (id, txn) VALUES (?, ?)", o.next, entry)
	}
	if err != nil {
		o.end(conn, false)
		return err
	}
	if err := o.end(conn, true); err != nil {
		return err
	}
	o.next++
	o.queued.Add(1)
	o.unpushed.Add(1)
	return nil
}

// end commits or rolls back, and gives the connection back.
func (o *offline) end(conn *sql.Conn, commit bool) error {
	defer conn.Close()
	q := "ROLLBACK"
	if commit {
		q = "COMMIT"
	}
	_, err := conn.ExecContext(context.Background(), q)
	if err != nil && commit {
		conn.ExecContext(context.Background(), "ROLLBACK")
	}
	return err
}

// queued is one transaction of the queue.
type queued struct {
	id    int64
	stmts []queuedStmt
	size  int // the encoded entry's
}

// queue reads the whole queue, in order.
func (o *offline) queue(ctx context.Context) ([]queued, error) {
	rows, err := o.db.QueryContext(ctx, "SELECT id, txn FROM "+queueTable+" ORDER BY id")
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil
		}
		return nil, fmt.Errorf("embedded: read the local queue: %w", err)
	}
	defer rows.Close()
	var out []queued
	for rows.Next() {
		var q queued
		var b []byte
		if err := rows.Scan(&q.id, &b); err != nil {
			return nil, fmt.Errorf("embedded: read the local queue: %w", err)
		}
		q.size = len(b)
		if q.stmts, err = decodeTxn(b); err != nil {
			return nil, fmt.Errorf("%w (id %d)", err, q.id)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("embedded: read the local queue: %w", err)
	}
	return out, nil
}

// close saves the base if local writes wait (the last connection's close
// checkpoints them into the main file), then closes the writer.
func (o *offline) close() error {
	o.syncMu.Lock()
	defer o.syncMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	var err error
	if o.queued.Load() > 0 {
		err = localdb.SaveBase(o.path, o.key)
	}
	if o.db != nil {
		err = errors.Join(err, o.db.Close())
		o.db = nil
	}
	return err
}

func (o *offline) setErr(err error) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	o.lastErr, o.lastErrAt = err, time.Now()
	if err == nil {
		o.lastErrAt = time.Time{}
	}
}

// offlineSync is Sync with offline writes: push what waits, then pull.
// The push of what the queue holds when the sync begins runs without the
// local write lock, so local writes go on during its request; the lock is
// then taken for the push of what was written meanwhile (often nothing),
// the restore and the pull.
func (c *Connector) offlineSync(ctx context.Context) (Replicated, error) {
	o := c.off
	o.syncMu.Lock()
	defer o.syncMu.Unlock()
	if o.db == nil {
		return Replicated{}, ErrClosed
	}
	if o.unpushed.Load() > 0 {
		if err := c.pushed(ctx, c.push(ctx)); err != nil {
			return Replicated{}, err
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.queued.Load() > 0 {
		if o.unpushed.Load() > 0 { // written since the push began, or that push failed
			if err := c.pushed(ctx, c.push(ctx)); err != nil {
				return Replicated{}, err
			}
		}
		c.repl.RestoreNext()
	}
	before, cerr := o.cookie(ctx)
	res, err := c.repl.Sync(ctx)
	if after, aerr := o.cookie(ctx); cerr != nil || aerr != nil || after != before {
		if rerr := o.renew(); err == nil && rerr != nil {
			err = fmt.Errorf("embedded: reopen the local writer after the pull: %w", rerr)
		}
	}
	if o.db == nil {
		return Replicated{FrameNo: res.FrameNo, FramesSynced: res.Frames}, err
	}
	if rerr := o.recount(ctx); err == nil && rerr != nil {
		err = fmt.Errorf("embedded: count the local queue after the pull: %w", rerr)
	}
	return Replicated{FrameNo: res.FrameNo, FramesSynced: res.Frames}, err
}

// Push sends the local transactions that are not yet on the primary, as
// Sync does, exactly once and with conflicts reported, and pulls nothing:
// the local file goes on showing its own writes and none of the
// primary's newer ones until the next Sync, which brings it to the
// primary's state. A push costs one request per 1,000 transactions (or 4
// MiB of them) when the primary's record of this replica is where this
// replica left it, and one more when it is not (another push's answer was
// lost). Push needs WithOfflineWrites (else ErrNoOfflineWrites), and fails
// with the primary's error if it cannot be reached; nothing is lost.
func (c *Connector) Push(ctx context.Context) error {
	select {
	case <-c.stop:
		return ErrClosed
	default:
	}
	o := c.off
	if o == nil {
		return ErrNoOfflineWrites
	}
	o.syncMu.Lock()
	defer o.syncMu.Unlock()
	if o.db == nil {
		return ErrClosed
	}
	if o.unpushed.Load() == 0 {
		return nil
	}
	return c.pushed(ctx, c.push(ctx))
}

// pushed records the outcome of a push.
func (c *Connector) pushed(ctx context.Context, err error) error {
	c.off.setErr(err)
	if err != nil {
		c.off.failed.Add(1)
		c.log.LogAttrs(ctx, slogWarn, "embedded: push failed", errAttr(err))
	}
	return err
}

// push applies the queue on the primary, exactly once: it sends the
// transactions after the floor in batches, each one primary transaction
// that also moves the primary's record of this replica, and begins with a
// guard that the record is where this replica believes (its floor, or
// the end of the last batch). If the guard fails (a push whose answer was
// lost moved it), push reads the record, counts what it holds as done,
// and goes on from there. A transaction that fails on the primary is
// taken out of its batch, which is sent again with its failure recorded
// instead; the others still apply.
func (c *Connector) push(ctx context.Context) error {
	o := c.off
	txns, err := o.queue(ctx)
	for len(txns) > 0 && txns[0].id <= o.floor {
		txns = txns[1:] // pushed and reported before the restore
	}
	if err != nil || len(txns) == 0 {
		return err
	}
	conn, err := c.pushDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	p := &pushRun{c: c, conn: conn, last: o.floor}
	rest := txns
	for len(rest) > 0 {
		chunk := rest[:chunkLen(rest)]
		n, err := p.send(ctx, chunk)
		if errors.Is(err, errGuard) && !p.read {
			if rest, err = p.readRecord(ctx, rest); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, errGuard) {
			return ErrRecordMoved
		}
		if err != nil {
			return err
		}
		rest = rest[n:]
	}
	o.pushed.Add(p.pushed)
	o.conflicts.Add(int64(len(p.conflicts)))
	o.unpushed.Add(-int64(len(txns)))
	for _, cf := range p.conflicts {
		c.log.LogAttrs(ctx, slogWarn, "embedded: a local transaction conflicts with the primary", errAttr(cf.Err))
		if o.handler != nil {
			o.handler(cf)
		}
	}
	o.floor = p.last
	return o.writeSidecar()
}

// pushRun is one push's state.
type pushRun struct {
	c         *Connector
	conn      *sql.Conn
	last      int64 // where the primary's record of this replica is believed to be
	read      bool  // last was read from the primary
	pushed    int64
	conflicts []Conflict
}

// errGuard is a push batch's guard failing: the record is not at last.
var errGuard = errors.New("embedded: the record moved")

// send pushes chunk in one request (again without a transaction that
// failed on the primary, until one goes through), and returns how many
// of chunk's transactions it settled: all of them, or, for a batch the
// primary refused as a whole, the first half, narrowed down to the
// transaction refused.
func (p *pushRun) send(ctx context.Context, chunk []queued) (int, error) {
	o := p.c.off
	failed := map[int]error{}
	for {
		stmts, owner, checks := pushBatch(o.id, p.last, o.floor, chunk, failed)
		_, err := libsql.Batch(ctx, p.conn, stmts, libsql.WithBatchMode(libsql.BatchWrite))
		if err == nil {
			break
		}
		var le *libsql.Error
		if !errors.As(err, &le) {
			return 0, err
		}
		if refusedWhole(le) {
			// Nothing ran. Halve the chunk until the transaction refused
			// is alone in it: that one is a conflict.
			live := 0
			for k := range chunk {
				if failed[k] == nil {
					live++
				}
			}
			switch {
			case live == 0:
				return 0, err // not a transaction's doing
			case live == 1:
				for k := range chunk {
					if failed[k] == nil {
						failed[k] = err
					}
				}
			default:
				chunk = chunk[:len(chunk)/2]
			}
			continue
		}
		if !le.RolledBack || le.Statement == 0 {
			return 0, err
		}
		i := le.Statement - 1
		k := owner[i]
		switch {
		case k == ownerGuard:
			return 0, errGuard
		case k < 0 || failed[k] != nil:
			return 0, err
		case checks[i] != nil:
			failed[k] = checks[i]
		default:
			failed[k] = err
		}
	}
	p.last = chunk[len(chunk)-1].id
	for k, q := range chunk {
		if failed[k] != nil {
			p.conflicts = append(p.conflicts, conflictOf(q, failed[k]))
		} else {
			p.pushed++
		}
	}
	return len(chunk), nil
}

// readRecord reads the primary's record of this replica after a guard
// failed, and settles the transactions of rest that it holds: applied, or
// refused with the error the push that refused them recorded. It returns
// the others.
func (p *pushRun) readRecord(ctx context.Context, rest []queued) ([]queued, error) {
	o := p.c.off
	last, recorded, err := o.readRecord(ctx, p.conn)
	if err != nil {
		return nil, err
	}
	p.last, p.read = last, true
	for len(rest) > 0 && rest[0].id <= last {
		q := rest[0]
		rest = rest[1:]
		if msg, ok := recorded[q.id]; ok {
			p.conflicts = append(p.conflicts, conflictOf(q, fmt.Errorf("embedded: the primary refused it (recorded by a push whose answer was lost): %s", msg)))
		} else {
			p.pushed++
		}
	}
	return rest, nil
}

// refusedWhole reports whether the primary refused a push batch as a
// whole, for what one of its statements holds, before running any of
// it: SQL its parser does not take ("unsupported statement", a parse
// error) or arguments it does not (a value over its limit). sqld builds
// the whole batch's program before it runs a step
// (libsql-server/src/hrana/batch.rs, proto_batch_to_program), and these
// are the errors of that build; an error of a step has its Statement.
func refusedWhole(le *libsql.Error) bool {
	return le.Statement == 0 && le.SQL == "" && le.HTTPStatus == 0 && le.Err == nil &&
		(errors.Is(le, libsql.ErrSyntax) || errors.Is(le, libsql.ErrArgs))
}

// chunkLen returns how many of txns the next push request takes.
func chunkLen(txns []queued) int {
	n, size := 0, 0
	for n < len(txns) && n < maxPushTxns && (n == 0 || size+txns[n].size <= maxPushBytes) {
		size += txns[n].size
		n++
	}
	return n
}

// readRecord returns the last transaction of this replica the primary
// has, and the errors it recorded for those after the floor.
func (o *offline) readRecord(ctx context.Context, conn *sql.Conn) (int64, map[int64]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT 0, last_applied, '' FROM "+recordTable+" WHERE replica_id = ?1"+
		" UNION ALL SELECT 1, txn, error FROM "+conflictTable+" WHERE replica_id = ?1 AND txn > ?2", o.id, o.floor)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	defer rows.Close()
	var last int64
	recorded := map[int64]string{}
	for rows.Next() {
		var kind, n int64
		var msg string
		if err := rows.Scan(&kind, &n, &msg); err != nil {
			return 0, nil, err
		}
		if kind == 0 {
			last = n
		} else {
			recorded[n] = msg
		}
	}
	return last, recorded, rows.Err()
}

// Roles of a push batch's statements that are not a transaction's.
const (
	ownerDriver = -1 // the driver's tables
	ownerGuard  = -2 // the record is where it was read
)

// overflow is an expression SQLite evaluates at run time to an "integer
// overflow" error: what makes a check step fail.
const overflow = "abs(-9223372036854775807 - 1 + 0 * random())"

// pushBatch returns the statements of one push request for chunk: the
// driver's tables, the guard that the record is still at last, for each
// transaction its statements each followed by a check of its count of
// changes (or, for one that failed, the record of its failure), and the
// record moved to the chunk's last. owner maps each statement to its
// transaction's index in chunk, or an owner* role; checks holds the
// conflict error of each check statement.
func pushBatch(id string, last, floor int64, chunk []queued, failed map[int]error) ([]libsql.Statement, []int, []error) {
	stmts := []libsql.Statement{
		{SQL: "CREATE TABLE IF NOT EXISTS " + recordTable + " (replica_id TEXT PRIMARY KEY, last_applied INTEGER NOT NULL)"},
		{SQL: "CREATE TABLE IF NOT EXISTS " + conflictTable + " (replica_id TEXT NOT NULL, txn INTEGER NOT NULL, error TEXT NOT NULL, PRIMARY KEY (replica_id, txn))"},
		{SQL: "SELECT CASE WHEN coalesce((SELECT last_applied FROM " + recordTable + " WHERE replica_id = ?), 0) = ? THEN 1 ELSE " + overflow + " END", Args: []any{id, last}},
		{SQL: "DELETE FROM " + conflictTable + " WHERE replica_id = ? AND txn <= ?", Args: []any{id, floor}},
	}
	owner := []int{ownerDriver, ownerDriver, ownerGuard, ownerDriver}
	checks := make([]error, len(stmts))
	add := func(s libsql.Statement, k int, check error) {
		stmts = append(stmts, s)
		owner = append(owner, k)
		checks = append(checks, check)
	}
	for k, q := range chunk {
		if err := failed[k]; err != nil {
			add(libsql.Statement{SQL: "INSERT INTO " + conflictTable + " (replica_id, txn, error) VALUES (?, ?, ?)", Args: []any{id, q.id, err.Error()}}, ownerDriver, nil)
			continue
		}
		for j, s := range q.stmts {
			add(libsql.Statement{SQL: s.SQL, Args: s.args()}, k, nil)
			if s.Changes >= 0 && !certainChanges(s.SQL) {
				add(libsql.Statement{SQL: "SELECT CASE WHEN changes() = ? THEN 1 ELSE " + overflow + " END", Args: []any{s.Changes}}, k,
					fmt.Errorf("%w: statement %d of the transaction (%.60q) changed %d rows locally", ErrRowsChanged, j+1, s.SQL, s.Changes))
			}
		}
	}
	add(libsql.Statement{SQL: "INSERT INTO " + recordTable + " (replica_id, last_applied) VALUES (?, ?) ON CONFLICT (replica_id) DO UPDATE SET last_applied = excluded.last_applied",
		Args: []any{id, chunk[len(chunk)-1].id}}, ownerDriver, nil)
	return stmts, owner, checks
}

// certainChanges reports whether a statement changes as many rows on the
// primary as locally whenever it succeeds there, so that its count needs
// no check: an INSERT or REPLACE of VALUES (each row is inserted, or the
// statement fails), not of a SELECT, not OR IGNORE, not an upsert.
func certainChanges(query string) bool {
	switch strings.ToUpper(sqlscan.FirstKeyword(query)) {
	case "INSERT", "REPLACE":
	default:
		return false
	}
	values := false
	s := sqlscan.NewScanner(query)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		if t.Kind != sqlscan.Word {
			continue
		}
		switch strings.ToUpper(query[t.Start:t.End]) {
		case "SELECT", "IGNORE", "CONFLICT", "DO":
			return false
		case "VALUES":
			values = true
		}
	}
	return values
}

// args returns the statement's arguments as a Batch takes them.
func (s *queuedStmt) args() []any {
	out := make([]any, len(s.Args))
	for i, a := range s.Args {
		if a.Name != "" {
			out[i] = sql.Named(a.Name, a.Value)
		} else {
			out[i] = a.Value
		}
	}
	return out
}

func conflictOf(q queued, err error) Conflict {
	cf := Conflict{ID: q.id, Err: err, SQL: make([]string, len(q.stmts)), Args: make([][]any, len(q.stmts))}
	for i := range q.stmts {
		cf.SQL[i] = q.stmts[i].SQL
		cf.Args[i] = q.stmts[i].args()
	}
	return cf
}

// queueArgs converts a statement's checked arguments for the queue.
func queueArgs(args []driver.NamedValue) []queuedArg {
	out := make([]queuedArg, len(args))
	for i, a := range args {
		out[i] = queuedArg{Name: a.Name, Value: a.Value}
	}
	return out
}

const slogWarn = slog.LevelWarn

func errAttr(err error) slog.Attr { return slog.Any("error", err) }
