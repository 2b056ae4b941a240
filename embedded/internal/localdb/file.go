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
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// PageSize is the only page size a replica handles: libSQL's.
const PageSize = 4096

// DSN returns the modernc.org/sqlite DSN of path with pragmas, each
// "name(value)".
func DSN(path string, pragmas ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// File is the writing side of a local replica file: one connection, which
// only this package writes through. Readers open their own connections.
type File struct {
	path string
	key  *encrypt.Key // nil: the file is in the clear
	db   *sql.DB
	pos  Position
	size uint32 // the file's size in pages
	// restoring says that the next transaction first writes back the
	// primary's version of the pages local writes changed (see base.go).
	restoring bool
}

// Open opens or creates the local file at path, in WAL mode, and reads
// its position. A file with pages but no position was not made by a
// replica and is refused.
func Open(ctx context.Context, path string) (*File, error) {
	return OpenKey(ctx, path, nil)
}

// OpenKey is Open of a file encrypted under key (nil: in the clear). The
// key must already have been checked against the file (encrypt.Load).
func OpenKey(ctx context.Context, path string, key *encrypt.Key) (*File, error) {
	db, err := openKeyDB(path, key, "busy_timeout(10000)", "synchronous(FULL)", "journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	f := &File{path: path, key: key, db: db}
	if err := f.load(ctx); err != nil {
		db.Close()
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
	if errors.Is(err, errNoStamp) && n == 1 {
		// A new file: setting WAL mode wrote its header, nothing else.
		var tables int
		if err := f.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return err
		}
		if tables == 0 {
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

// Apply writes c in one local transaction: a truncation first if the
// database shrank, then the pages in ascending order, page 1 (stamped with
// c.Pos) last. Page 1 holds the schema: written before the pages it refers
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

func (f *File) apply(ctx context.Context, src pageSource, sizeAfter uint32, pos Position) error {
	if sizeAfter == 0 {
		return fmt.Errorf("%w: size_after 0", ErrBadCommit)
	}
	if pos.Next == 0 {
		return fmt.Errorf("%w: no position", ErrBadCommit)
	}
	all := src.pgnos()
	pgnos := make([]uint32, 0, len(all))
	hasPage1, hasLast := false, false
	for _, pgno := range all {
		if pgno == 0 || pgno > sizeAfter {
			return fmt.Errorf("%w: page %d past size_after %d", ErrBadCommit, pgno, sizeAfter)
		}
		hasLast = hasLast || pgno == sizeAfter
		if pgno == 1 {
			hasPage1 = true
		} else {
			pgnos = append(pgnos, pgno)
		}
	}
	slices.Sort(pgnos)
	var restore []uint32
	var b *base
	if f.restoring {
		var err error
		if b, restore, err = f.restorePages(sizeAfter, all); err != nil {
			return err
		}
		defer b.close()
		f.size = b.size
	}
	if sizeAfter > f.size && !hasLast {
		// A file grows only by the pages written: its last page must be
		// among them.
		return fmt.Errorf("%w: size_after %d past the file's %d pages, without its last page", ErrBadCommit, sizeAfter, f.size)
	}

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

	// The file must still be where this File left it: another process
	// applying older frames over newer ones would mix two states.
	var page1 []byte
	if f.pos.Next != 0 {
		if page1, err = f.page(ctx, conn, 1); err != nil {
			return err
		}
		if cur, err := readStamp(page1); err != nil || cur != f.pos {
			return fmt.Errorf("%w (at %+v, this replica at %+v)", ErrMoved, cur, f.pos)
		}
	}
	switch {
	case hasPage1:
		p, err := src.page(1, nil)
		if err != nil {
			return err
		}
		page1 = bytes.Clone(p)
	case b != nil:
		p, err := b.page(1, nil)
		if err != nil {
			return err
		}
		page1 = bytes.Clone(p)
	case page1 == nil:
		return fmt.Errorf("%w: the first commit has no page 1", ErrBadCommit)
	}
	if !bytes.HasPrefix(page1, []byte("SQLite format 3\x00")) {
		return fmt.Errorf("%w: page 1 has no SQLite header", ErrBadCommit)
	}
	if ps := int(page1[16])<<8 | int(page1[17]); ps != PageSize {
		return fmt.Errorf("%w: page 1 says page size %d", ErrBadCommit, ps)
	}
	stamp(page1, pos)
	// The local file is in WAL mode whatever the primary's header says.
	page1[18], page1[19] = 2, 2

	cur := f.size
	if b != nil {
		// Local writes may have grown the file past the base.
		if err := conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&cur); err != nil {
			return err
		}
	}
	if sizeAfter < cur {
		if _, err := conn.ExecContext(ctx, "INSERT INTO sqlite_dbpage(pgno, data) VALUES (?, NULL)", sizeAfter+1); err != nil {
			return fmt.Errorf("truncate to %d pages: %w", sizeAfter, err)
		}
	}
	stmt, err := conn.PrepareContext(ctx, "INSERT INTO sqlite_dbpage(pgno, data) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer stmt.Close()
	var buf []byte
	for _, pgno := range restore {
		if buf, err = b.page(pgno, buf); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, pgno, buf); err != nil {
			return fmt.Errorf("restore page %d: %w", pgno, err)
		}
	}
	for _, pgno := range pgnos {
		if buf, err = src.page(pgno, buf); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, pgno, buf); err != nil {
			return fmt.Errorf("write page %d: %w", pgno, err)
		}
	}
	if _, err := stmt.ExecContext(ctx, 1, page1); err != nil {
		return fmt.Errorf("write page 1: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	f.pos, f.size = pos, sizeAfter
	if b != nil {
		// The connection that restored is not used again: the next
		// transaction on it fails writing its first page with "database
		// disk image is malformed" (TestRestore's next commits), while a
		// new connection applies it. Only a restore does this, not a
		// truncation alone.
		stmt.Close()
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	f.restoring = false
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

// Close closes the file's connection.
func (f *File) Close() error { return f.db.Close() }
