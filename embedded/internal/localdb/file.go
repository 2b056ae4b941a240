// Package localdb is the local SQLite file of an embedded replica: it
// applies the primary's pages to it, with sqlite_dbpage (modernc.org/sqlite
// is built with SQLITE_ENABLE_DBPAGE_VTAB), in local transactions that
// each end on a commit of the primary's, so that readers on other
// connections (the file is in WAL mode) only ever see states the primary
// had; and it keeps the replication position in the same transactions.
package localdb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// PageSize is the only page size a replica handles: libSQL's.
const PageSize = 4096

// DSN returns the modernc.org/sqlite DSN of path with pragmas, each
// "name(value)". modernc.org/sqlite runs a DSN's _pragma values in
// lexicographic order, before its shorthand keys: journal_mode and
// synchronous, which load the schema, go as the shorthand keys
// _journal_mode and _synchronous, so that they run after writable_schema
// (engine.go), without which a schema that vanilla SQLite cannot load
// whole (RANDOM ROWID) would fail the connection.
func DSN(path string, pragmas ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		name, arg, ok := strings.Cut(p, "(")
		switch {
		case ok && (name == "journal_mode" || name == "synchronous"):
			q.Add("_"+name, strings.TrimSuffix(arg, ")"))
		default:
			q.Add("_pragma", p)
		}
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// File is the writing side of a local replica file: one connection, which
// only this package writes through. Readers open their own connections.
type File struct {
	path string
	key  *encrypt.Key // nil: the file is in the clear
	db   *sql.DB
	// pin is a connection held open, unused, while the File is: SQLite
	// checkpoints the WAL into the main file when the last connection to
	// a file closes, which would move local writes (base.go) into the
	// base.
	pin  *sql.Conn
	pos  Position
	size uint32 // the file's size in pages
	// restoring says that the next transaction first writes back the
	// primary's version of the pages local writes changed (see base.go).
	restoring bool
	// primaryCookie is the primary's schema cookie in the last page 1
	// applied, if cookieKnown (see nextPage1).
	primaryCookie uint32
	cookieKnown   bool
}

// filePragmas are set on the connections that apply the primary's pages.
var filePragmas = []string{"busy_timeout(10000)", "synchronous(FULL)", "journal_mode(WAL)"}

// Open opens or creates the local file at path, in WAL mode, and reads
// its position. A file with pages but no position was not made by a
// replica and is refused.
func Open(ctx context.Context, path string) (*File, error) {
	return OpenKey(ctx, path, nil)
}

// OpenKey is Open of a file encrypted under key (nil: in the clear). The
// key must already have been checked against the file (encrypt.Load).
func OpenKey(ctx context.Context, path string, key *encrypt.Key) (*File, error) {
	db, err := openKeyDB(path, key, filePragmas...)
	if err != nil {
		return nil, err
	}
	// No connection is kept idle: each transaction runs on a new one
	// (the caches rule, at apply), beside the pin.
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(0)
	f := &File{path: path, key: key, db: db}
	if f.pin, err = db.Conn(ctx); err == nil {
		err = f.load(ctx)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("localdb: open %s: %w", path, err)
	}
	return f, nil
}

func (f *File) load(ctx context.Context) error {
	var mode string
	if err := f.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode %q, want wal", mode)
	}
	var n uint32
	if err := f.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n); err != nil {
		return err
	}
	f.size = n
	if n == 0 {
		return nil
	}
	var ps int
	if err := f.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&ps); err != nil {
		return err
	}
	if ps != PageSize {
		return fmt.Errorf("page size %d, want %d", ps, PageSize)
	}
	page1, err := f.page(ctx, f.db, 1)
	if err != nil {
		return err
	}
	f.pos, err = readStamp(page1)
	if errors.Is(err, errNoStamp) {
		// A new file (setting WAL mode wrote its header, nothing else),
		// or a replica of a primary whose log was still empty, with
		// local writes (offline writes: the queue's table is there).
		var tables, queue int
		if err := f.db.QueryRowContext(ctx, "SELECT count(*), count(*) FILTER (WHERE name = ?) FROM sqlite_schema", QueueTable).Scan(&tables, &queue); err != nil {
			return err
		}
		if tables == 0 && n == 1 || queue == 1 {
			return nil
		}
	}
	return err
}

// page reads page pgno of the file.
func (f *File) page(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, pgno uint32) ([]byte, error) {
	var data []byte
	err := q.QueryRowContext(ctx, "SELECT data FROM sqlite_dbpage WHERE pgno = ?", pgno).Scan(&data)
	if err != nil {
		return nil, fmt.Errorf("read page %d: %w", pgno, err)
	}
	if len(data) != PageSize {
		return nil, fmt.Errorf("page %d has %d bytes", pgno, len(data))
	}
	return data, nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Position returns the position of the last applied commit.
func (f *File) Position() Position { return f.pos }

// Size returns the file's size in pages.
func (f *File) Size() uint32 { return f.size }

// A Commit is the pages of one or more whole commits of the primary, each
// page in its last version, and where they leave the file.
type Commit struct {
	Pages     map[uint32][]byte
	SizeAfter uint32   // the database size in pages after the commit
	Pos       Position // the position after the commit
}

// ErrBadCommit is a Commit that would not leave a valid file; nothing of
// it was written.
var ErrBadCommit = errors.New("localdb: invalid commit")

// ErrMoved is a local file that another writer moved since this File
// last applied to it: two replicas must not write the same file.
var ErrMoved = errors.New("localdb: the local file was changed by another writer")

// pageSource is what a local transaction writes: a Commit's pages in
// memory or a Spool's on disk.
type pageSource interface {
	pgnos() []uint32 // every page, in any order
	page(pgno uint32, buf []byte) ([]byte, error)
}

type mapSource map[uint32][]byte

func (m mapSource) pgnos() []uint32 {
	s := make([]uint32, 0, len(m))
	for pgno := range m {
		s = append(s, pgno)
	}
	return s
}

func (m mapSource) page(pgno uint32, _ []byte) ([]byte, error) { return m[pgno], nil }

// Apply writes c in one local transaction: the pages in ascending order,
// page 1 (stamped with c.Pos) last, then a truncation if the database
// shrank. Page 1 holds the schema: written before the pages it refers
// to, it would make the next statement fail with "malformed database
// schema". On any error nothing of c is applied.
func (f *File) Apply(ctx context.Context, c Commit) error {
	for pgno, data := range c.Pages {
		if len(data) != PageSize {
			return fmt.Errorf("%w: page %d has %d bytes", ErrBadCommit, pgno, len(data))
		}
	}
	return f.apply(ctx, mapSource(c.Pages), c.SizeAfter, c.Pos)
}

// ApplySpool writes the pages of s as Apply writes a Commit's, in one
// local transaction, reading them back one at a time.
func (f *File) ApplySpool(ctx context.Context, s *Spool, sizeAfter uint32, pos Position) error {
	return f.apply(ctx, s, sizeAfter, pos)
}

// The caches rule. A transaction of apply writes pages behind SQLite's
// back, through sqlite_dbpage, and every connection to the file must
// forget what it cached of the pages and the schema before:
//
//   - Another connection's page cache is dropped by SQLite itself: it
//     compares the WAL index header at the start of each read transaction
//     and empties its cache when another connection has committed since.
//   - Its parsed schema (each table's and index's root page) SQLite keeps
//     for as long as the schema cookie (header bytes 40-43) stays what it
//     was when the schema was read. The primary's cookie and the local
//     writes' cookie count separately, so a restore, or the primary's
//     replay of a local CREATE INDEX, can leave the file with a cookie a
//     connection holds and other root pages: that connection would then
//     read an index's pages as another's (wrong rows, "database disk image
//     is malformed"). So the local file keeps a cookie of its own, which
//     only grows: a transaction of apply leaves the file's cookie as it
//     was, plus one when the schema may have changed (a restore, the
//     first commit this File applies, a commit whose primary cookie
//     differs from the last one applied), and no value ever stands for
//     two schemas (checked in nextPage1).
//   - The connection that wrote keeps its own page cache, in which the
//     b-tree pages it parsed before sqlite_dbpage overwrote them stay
//     parsed as they were: so each transaction of apply runs on a new
//     connection, closed after it (the pool keeps none idle), and within
//     it no statement after the first page write reads a b-tree (the
//     cookie is set last with PRAGMA schema_version, which reads none).
//
// Offline writes (base.go) add no cache of their own: the writer is one
// more connection to the file, replaced after each sync that moved
// the cookie (embedded's offline.renew).

func (f *File) apply(ctx context.Context, src pageSource, sizeAfter uint32, pos Position) error {
	restoring := f.restoring
	if err := f.applyTx(ctx, src, sizeAfter, pos); err != nil {
		what := "apply the frames before frame %d"
		if restoring {
			what = "restore the base and apply the frames before frame %d"
		}
		return fmt.Errorf("localdb: "+what+": %w", pos.Next, err)
	}
	return nil
}

// applyTx is apply's transaction.
func (f *File) applyTx(ctx context.Context, src pageSource, sizeAfter uint32, pos Position) error {
	w, err := f.plan(src, sizeAfter, pos)
	if err != nil {
		return err
	}
	defer w.close()
	conn, err := f.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err := f.nextPage1(ctx, conn, w); err != nil {
		return err
	}
	if err := w.write(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	f.pos, f.size = pos, sizeAfter
	if w.hasPage1 {
		// A restore's page 1 from the base is the primary's state at
		// f.pos too, so its cookie stays the one known.
		f.primaryCookie, f.cookieKnown = w.primaryCookie, true
	}
	f.restoring = false
	return nil
}

// A pageWrite is what one transaction of apply writes.
type pageWrite struct {
	src       pageSource
	pgnos     []uint32 // src's pages but page 1, in ascending order
	hasPage1  bool
	sizeAfter uint32
	pos       Position
	b         *base    // the base to restore from; nil: no restore
	restore   []uint32 // the base's pages to write back, ascending

	// Set by nextPage1, in the transaction:
	page1         []byte
	primaryCookie uint32 // the cookie of src's page 1
	cookie        uint32 // the cookie the file is left with
	bump          bool   // cookie is the file's plus one
}

// plan checks src against the file and returns what writing it takes.
func (f *File) plan(src pageSource, sizeAfter uint32, pos Position) (*pageWrite, error) {
	if sizeAfter == 0 {
		return nil, fmt.Errorf("%w: size_after 0", ErrBadCommit)
	}
	if pos.Next == 0 {
		return nil, fmt.Errorf("%w: no position", ErrBadCommit)
	}
	w := &pageWrite{src: src, sizeAfter: sizeAfter, pos: pos}
	all := src.pgnos()
	w.pgnos = make([]uint32, 0, len(all))
	hasLast := false
	for _, pgno := range all {
		if pgno == 0 || pgno > sizeAfter {
			return nil, fmt.Errorf("%w: page %d past size_after %d", ErrBadCommit, pgno, sizeAfter)
		}
		hasLast = hasLast || pgno == sizeAfter
		if pgno == 1 {
			w.hasPage1 = true
		} else {
			w.pgnos = append(w.pgnos, pgno)
		}
	}
	slices.Sort(w.pgnos)
	if f.restoring {
		var err error
		if w.b, w.restore, err = f.restorePages(sizeAfter, all); err != nil {
			return nil, err
		}
		f.size = w.b.size
	}
	if sizeAfter > f.size && !hasLast {
		w.close()
		// A file grows only by the pages written: its last page must be
		// among them.
		return nil, fmt.Errorf("%w: size_after %d past the file's %d pages, without its last page", ErrBadCommit, sizeAfter, f.size)
	}
	return w, nil
}

func (w *pageWrite) close() {
	if w.b != nil {
		w.b.close()
	}
}

// write writes the pages in conn's transaction: the base's, the
// commit's, page 1, then the truncation, which must come last (a page
// written after it cancels it in sqlite_dbpage), and the schema cookie.
func (w *pageWrite) write(ctx context.Context, conn *sql.Conn) error {
	var cur uint32
	if err := conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&cur); err != nil {
		return err
	}
	stmt, err := conn.PrepareContext(ctx, "INSERT INTO sqlite_dbpage(pgno, data) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer stmt.Close()
	var buf []byte
	for _, pgno := range w.restore {
		if buf, err = w.b.page(pgno, buf); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, pgno, buf); err != nil {
			return fmt.Errorf("restore page %d: %w", pgno, err)
		}
	}
	for _, pgno := range w.pgnos {
		if buf, err = w.src.page(pgno, buf); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, pgno, buf); err != nil {
			return fmt.Errorf("write page %d: %w", pgno, err)
		}
	}
	if _, err := stmt.ExecContext(ctx, 1, w.page1); err != nil {
		return fmt.Errorf("write page 1: %w", err)
	}
	if w.sizeAfter < cur {
		if _, err := stmt.ExecContext(ctx, w.sizeAfter+1, nil); err != nil {
			return fmt.Errorf("truncate to %d pages: %w", w.sizeAfter, err)
		}
	}
	if w.bump {
		// Page 1 went in with the cookie the connection's schema has, so
		// that no statement above had to read the schema again through
		// b-tree pages it parsed before they were overwritten.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA schema_version = %d", w.cookie)); err != nil {
			return fmt.Errorf("set the schema cookie: %w", err)
		}
	}
	return nil
}

// nextPage1 sets w.page1, the page 1 that w writes, in conn's
// transaction: the commit's own, else the base's if restoring, else the
// file's; stamped with w.pos, in WAL mode, with the file's schema cookie;
// and the cookie the transaction leaves (the caches rule above). It
// checks first that the file is still where this File left it: another
// process applying older frames over newer ones would mix two states.
func (f *File) nextPage1(ctx context.Context, conn *sql.Conn, w *pageWrite) error {
	var cur []byte // the file's page 1 now; nil for a file without pages
	if f.pos.Next != 0 || f.size > 0 {
		var err error
		if cur, err = f.page(ctx, conn, 1); err != nil {
			return err
		}
	}
	if f.pos.Next != 0 {
		if at, err := readStamp(cur); err != nil || at != f.pos {
			return fmt.Errorf("%w (at %+v, this replica at %+v)", ErrMoved, at, f.pos)
		}
	}
	var p []byte
	var err error
	switch {
	case w.hasPage1:
		p, err = w.src.page(1, nil)
	case w.b != nil:
		p, err = w.b.page(1, nil)
	case f.pos.Next != 0:
		p = cur
	default:
		return fmt.Errorf("%w: the first commit has no page 1", ErrBadCommit)
	}
	if err != nil {
		return err
	}
	page1 := bytes.Clone(p)
	if !bytes.HasPrefix(page1, []byte("SQLite format 3\x00")) {
		return fmt.Errorf("%w: page 1 has no SQLite header", ErrBadCommit)
	}
	if ps := int(page1[16])<<8 | int(page1[17]); ps != PageSize {
		return fmt.Errorf("%w: page 1 says page size %d", ErrBadCommit, ps)
	}
	w.primaryCookie = schemaCookie(page1)
	var local uint32
	if cur != nil {
		local = schemaCookie(cur)
	}
	w.bump = w.b != nil || !f.cookieKnown || (w.hasPage1 && w.primaryCookie != f.primaryCookie)
	w.cookie = local
	if w.bump {
		w.cookie = local + 1
		if w.cookie <= local {
			return fmt.Errorf("localdb: the schema cookie %d cannot grow", local)
		}
	}
	setSchemaCookie(page1, local)
	stamp(page1, w.pos)
	// The local file is in WAL mode whatever the primary's header says.
	page1[18], page1[19] = 2, 2
	w.page1 = page1
	return nil
}

// StartRestore makes the next transaction that applies the primary's
// frames (or Restore) first write back the primary's version of every
// page the local writes changed, from the base (the main file, or the
// base file SaveBase wrote), and cut the file to the primary's size:
// the local writes vanish in the same transaction that applies the
// primary's next commits, so readers never see them vanish and come back.
// Call it once the local writes are on the primary.
func (f *File) StartRestore() { f.restoring = true }

// Restoring reports whether a restore is pending.
func (f *File) Restoring() bool { return f.restoring }

// Restore writes back the base in a transaction of its own, if a restore
// is still pending (StartRestore, with no frames applied since).
func (f *File) Restore(ctx context.Context) error {
	if !f.restoring {
		return nil
	}
	b, err := openBase(f.path, f.key)
	if err != nil {
		return err
	}
	size := b.size
	b.close()
	return f.apply(ctx, mapSource{}, size, f.pos)
}

// restorePages opens the base and returns the pages a restore writes:
// those of the WAL's frames that the primary has at sizeAfter and that
// the commit being applied (pages) does not write, in ascending order,
// page 1 aside.
func (f *File) restorePages(sizeAfter uint32, pages []uint32) (*base, []uint32, error) {
	b, err := openBase(f.path, f.key)
	if err != nil {
		return nil, nil, err
	}
	wal, err := walPages(f.path+"-wal", f.key)
	if err != nil {
		b.close()
		return nil, nil, err
	}
	for pgno := range b.saved {
		wal[pgno] = true
	}
	for _, pgno := range pages {
		delete(wal, pgno)
	}
	out := make([]uint32, 0, len(wal))
	for pgno := range wal {
		if pgno > 1 && pgno <= b.size && pgno <= sizeAfter {
			out = append(out, pgno)
		}
	}
	slices.Sort(out)
	return b, out, nil
}

// schemaCookie and setSchemaCookie read and write the schema cookie of a
// page 1 (the database header's bytes 40-43).
func schemaCookie(page1 []byte) uint32 { return binary.BigEndian.Uint32(page1[40:]) }

func setSchemaCookie(page1 []byte, v uint32) { binary.BigEndian.PutUint32(page1[40:], v) }

// Checkpoint moves the WAL's content into the database file and empties
// the WAL, so that the file stands alone (before a rename).
func (f *File) Checkpoint(ctx context.Context) error {
	var busy, logN, done int
	if err := f.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logN, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("localdb: checkpoint blocked by a reader")
	}
	return nil
}

// Close closes the file's connections.
func (f *File) Close() error {
	if f.pin != nil {
		f.pin.Close()
	}
	return f.db.Close()
}
