package localdb

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/gohrana/libsql/embedded/internal/durable"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// Local writes (an embedded replica with offline writes) go to the WAL of
// the replica file and are never checkpointed into it while they wait to
// be pushed: the main database file keeps the primary's pages at the
// applied position, the base that a restore writes back before the
// primary's next frames. Only SQLite's checkpoint when the last connection
// to the file closes would move them in; before that, SaveBase copies the
// base pages it would overwrite to a base file beside the database, which
// a restore then reads instead of the main file.

// walHeader and walFrameHeader are the sizes of SQLite's WAL headers.
const (
	walHeader      = 32
	walFrameHeader = 24
)

// walPages returns the page numbers of the frames of the WAL at path that
// belong to its current generation (their salts match the header's): every
// page a transaction since the last checkpoint wrote, and possibly a few
// of an unfinished transaction, which a restore writes back harmlessly.
// The WAL is enciphered under key, if not nil.
func walPages(path string, key *encrypt.Key) (map[uint32]bool, error) {
	pages := map[uint32]bool{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return pages, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var units *encrypt.Units
	if key != nil {
		units = key.Units(encrypt.KindWAL)
	}
	var hdr [walHeader]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return pages, nil // empty or torn: no frames
	}
	if units != nil {
		units.Open(hdr[:], 0)
	}
	if ps := binary.BigEndian.Uint32(hdr[8:]); ps != PageSize {
		return nil, fmt.Errorf("localdb: WAL page size %d", ps)
	}
	salt := hdr[16:24]
	var fh [walFrameHeader]byte
	for off := int64(walHeader); ; off += walFrameHeader + PageSize {
		if _, err := f.ReadAt(fh[:], off); err != nil {
			return pages, nil // the end
		}
		if units != nil {
			units.Open(fh[:], off)
		}
		if !bytes.Equal(fh[8:16], salt) {
			return pages, nil // a frame of an earlier generation
		}
		pages[binary.BigEndian.Uint32(fh[:4])] = true
	}
}

// BasePath is the base file of the database at path.
func BasePath(path string) string { return path + "-base" }

// baseMagic starts a base file.
var baseMagic = []byte("libsql-embedded-base-1\n")

// A base is where the primary's version of a page is: the base file's
// copy if it has one, else the main database file.
type base struct {
	main  *os.File
	units *encrypt.Units // the main file's cipher; nil: in the clear
	saved map[uint32][]byte
	size  uint32 // the primary's size in pages
}

// openBase opens the base of the database at path, enciphered under key
// if not nil: its main file, and the base file if there is one.
func openBase(path string, key *encrypt.Key) (*base, error) {
	main, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	b := &base{main: main, saved: map[uint32][]byte{}}
	if key != nil {
		b.units = key.Units(encrypt.KindMain)
	}
	size, saved, err := readBaseFile(BasePath(path), key)
	switch {
	case err == nil:
		b.size, b.saved = size, saved
	case errors.Is(err, os.ErrNotExist):
		st, err := main.Stat()
		if err != nil {
			main.Close()
			return nil, err
		}
		b.size = uint32(st.Size() / PageSize)
	default:
		main.Close()
		return nil, err
	}
	return b, nil
}

func (b *base) close() error { return b.main.Close() }

// page returns the primary's version of page pgno (<= b.size).
func (b *base) page(pgno uint32, buf []byte) ([]byte, error) {
	if p, ok := b.saved[pgno]; ok {
		return p, nil
	}
	if cap(buf) < PageSize {
		buf = make([]byte, PageSize)
	}
	buf = buf[:PageSize]
	if _, err := b.main.ReadAt(buf, int64(pgno-1)*PageSize); err != nil {
		return nil, fmt.Errorf("localdb: base page %d: %w", pgno, err)
	}
	if b.units != nil {
		b.units.Open(buf, int64(pgno-1)*PageSize)
	}
	return buf, nil
}

// readBaseFile reads a base file: the primary's size, then its pages,
// each with its number, then a CRC-32 of all that. Under a key, the pages
// are enciphered (encrypt.KindBase, each under its offset in the
// database).
func readBaseFile(path string, key *encrypt.Key) (uint32, map[uint32][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	bad := fmt.Errorf("localdb: %s is not a whole base file", path)
	n := len(data) - 4
	if n < len(baseMagic)+4 || !bytes.HasPrefix(data, baseMagic) ||
		crc32.ChecksumIEEE(data[:n]) != binary.BigEndian.Uint32(data[n:]) {
		return 0, nil, bad
	}
	body := data[len(baseMagic):n]
	size := binary.BigEndian.Uint32(body)
	body = body[4:]
	if len(body)%(4+PageSize) != 0 {
		return 0, nil, bad
	}
	var units *encrypt.Units
	if key != nil {
		units = key.Units(encrypt.KindBase)
	}
	saved := make(map[uint32][]byte, len(body)/(4+PageSize))
	for ; len(body) > 0; body = body[4+PageSize:] {
		pgno, p := binary.BigEndian.Uint32(body), body[4:4+PageSize]
		if units != nil {
			units.Open(p, int64(pgno-1)*PageSize)
		}
		saved[pgno] = p
	}
	return size, saved, nil
}

// SaveBase makes the base of the database at path stand without its main
// file: it writes the primary's version of every page the WAL holds (and
// of those the base file held already) to the base file, durably. Call it
// while the file has local writes, before closing the last connection to
// it, whose checkpoint moves them into the main file. Under a key (not
// nil) the files are enciphered, and so are the base file's pages.
func SaveBase(path string, key *encrypt.Key) error {
	b, err := openBase(path, key)
	if err != nil {
		return err
	}
	defer b.close()
	pages, err := walPages(path+"-wal", key)
	if err != nil {
		return err
	}
	for pgno := range b.saved {
		pages[pgno] = true
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-base-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	w := bufio.NewWriter(tmp)
	sum := crc32.NewIEEE()
	out := io.MultiWriter(w, sum)
	var units *encrypt.Units
	var sealed []byte
	if key != nil {
		units, sealed = key.Units(encrypt.KindBase), make([]byte, PageSize)
	}
	var num [4]byte
	out.Write(baseMagic)
	binary.BigEndian.PutUint32(num[:], b.size)
	out.Write(num[:])
	for pgno := range pages {
		if pgno == 0 || pgno > b.size {
			continue // a page the primary lacks: a restore truncates it
		}
		p, err := b.page(pgno, nil)
		if err != nil {
			tmp.Close()
			return err
		}
		if units != nil {
			copy(sealed, p)
			units.Seal(sealed, int64(pgno-1)*PageSize)
			p = sealed
		}
		binary.BigEndian.PutUint32(num[:], pgno)
		out.Write(num[:])
		out.Write(p)
	}
	binary.BigEndian.PutUint32(num[:], sum.Sum32())
	w.Write(num[:])
	return durable.Replace(tmp, BasePath(path), w.Flush())
}

// RemoveBase removes the base file of the database at path: call it once
// the main file holds the primary's pages again and no local write is left.
func RemoveBase(path string) error {
	err := os.Remove(BasePath(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// OpenWriter opens the connection that runs a replica's local writes
// (offline writes) on the file at path: it never checkpoints on its own
// (wal_autocheckpoint 0), since a checkpoint would move the local writes
// into the main file, and commits with synchronous FULL if full, else
// NORMAL (a commit then survives a crash of the process, and a power loss
// may take back the last ones). The file is encrypted under key, if not
// nil. Like every connection to the file it loads the schema with
// writable_schema; the statements that writable_schema would change run
// under Strict.
func OpenWriter(path string, full bool, key *encrypt.Key) (*sql.DB, error) {
	sync := "synchronous(NORMAL)"
	if full {
		sync = "synchronous(FULL)"
	}
	db, err := openKeyDB(path, key, "busy_timeout(10000)", sync, "wal_autocheckpoint(0)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// Strict runs f, a statement on the writer's connection conn, with
// writable_schema off, the schema loaded first with it on. writable_schema
// lets SQLite load a schema with objects it cannot read (engine.go), but
// also skips the checks of ALTER TABLE (a DROP COLUMN that a view needs),
// lets sqlite_schema be written and lets names begin with sqlite_: all of
// which the primary refuses, so a local write must be refused too.
func Strict(ctx context.Context, conn *sql.Conn, f func() error) error {
	if _, err := conn.ExecContext(ctx, "SELECT 1 FROM sqlite_schema LIMIT 0"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA writable_schema = OFF"); err != nil {
		return err
	}
	err := f()
	if _, onErr := conn.ExecContext(ctx, "PRAGMA writable_schema = ON"); err == nil {
		err = onErr
	}
	return err
}
