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
