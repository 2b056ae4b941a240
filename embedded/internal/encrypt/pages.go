package encrypt

import (
	"crypto/rand"
	"encoding/binary"

	"lukechampine.com/adiantum"
	"lukechampine.com/adiantum/hbsh"
)

// Pages enciphers pages under a random key that lives in memory only:
// for files that never outlive the process that wrote them (a snapshot's
// spool, removed at the next open after a crash). Not safe for
// concurrent use.
type Pages struct {
	c     *hbsh.HBSH
	tweak [16]byte
}

// NewPages returns a Pages with a fresh random key.
func NewPages() *Pages {
	key := make([]byte, 32)
	rand.Read(key)
	return &Pages{c: adiantum.New(key)}
}

// Seal enciphers p, page pgno, in place.
func (ps *Pages) Seal(p []byte, pgno uint32) {
	binary.LittleEndian.PutUint64(ps.tweak[:8], uint64(pgno))
	ps.c.Encrypt(p, ps.tweak[:])
}

// Open deciphers p, page pgno, in place.
func (ps *Pages) Open(p []byte, pgno uint32) {
	binary.LittleEndian.PutUint64(ps.tweak[:8], uint64(pgno))
	ps.c.Decrypt(p, ps.tweak[:])
}

// The kinds of file a Key covers outside SQLite, for Units.
const (
	KindMain = kindMain // the database, as the VFS enciphers it
	KindWAL  = kindWAL  // its WAL, as the VFS enciphers it
	KindBase = "base"   // a replica's own copy of the primary's pages
)

// Units enciphers and deciphers, in place, the units of a file of one
// kind under k, each under its offset: the VFS's units, so that code that
// reads a database or a WAL as a file (offline writes' base) sees what
// SQLite sees. Not safe for concurrent use.
type Units struct {
	c     *hbsh.HBSH
	tweak [16]byte
}

// Units returns the cipher of files of kind (KindMain, KindWAL, KindBase).
func (k *Key) Units(kind string) *Units {
	key := k.subkey(kind)
	defer clear(key)
	return &Units{c: adiantum.New(key)}
}

// Open deciphers p, the unit at offset off, in place. A unit of zeros
// stays zeros (a hole: the VFS writes none).
func (u *Units) Open(p []byte, off int64) {
	if allZero(p) {
		return
	}
	binary.LittleEndian.PutUint64(u.tweak[:8], uint64(off))
	u.c.Decrypt(p, u.tweak[:])
}

// Seal enciphers p, the unit at offset off, in place.
func (u *Units) Seal(p []byte, off int64) {
	binary.LittleEndian.PutUint64(u.tweak[:8], uint64(off))
	u.c.Encrypt(p, u.tweak[:])
}
