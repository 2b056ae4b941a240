package localdb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// Spool holds the pages of a snapshot on disk until the snapshot is
// whole: a snapshot streams one frame per page, in no order of pages and
// possibly larger than memory, and only its end is a consistent state.
// Each page sits at its own offset of a temporary file, so memory stays at
// a bit per page.
type Spool struct {
	f     *os.File
	have  []uint64 // bitmap of the pages present
	n     int
	seal  *encrypt.Pages // nil: pages in the clear
	sealB []byte         // the enciphered copy of a page being added
}

// SpoolPattern is the glob of the spools of the database at path (for
// removing those a crash left).
func SpoolPattern(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-spool-*")
}

// NewSpool creates a spool beside the database at path (so that a large
// snapshot needs no space elsewhere). Close removes it.
func NewSpool(path string) (*Spool, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-spool-*")
	if err != nil {
		return nil, fmt.Errorf("localdb: spool: %w", err)
	}
	return &Spool{f: f}, nil
}

// NewSpool creates a spool for a snapshot of f: beside it, and for an
// encrypted file with its pages enciphered under a random key held in
// memory only (a spool never outlives its process: Open removes those a
// crash left).
func (f *File) NewSpool() (*Spool, error) {
	s, err := NewSpool(f.path)
	if err == nil && f.key != nil {
		s.seal, s.sealB = encrypt.NewPages(), make([]byte, PageSize)
	}
	return s, err
}

// Add keeps page as page pgno, replacing an earlier one.
func (s *Spool) Add(pgno uint32, page []byte) error {
	if pgno == 0 || len(page) != PageSize {
		return fmt.Errorf("%w: page %d of %d bytes", ErrBadCommit, pgno, len(page))
	}
	if s.seal != nil {
		copy(s.sealB, page)
		s.seal.Seal(s.sealB, pgno)
		page = s.sealB
	}
	if _, err := s.f.WriteAt(page, int64(pgno-1)*PageSize); err != nil {
		return fmt.Errorf("localdb: spool: %w", err)
	}
	w := int(pgno / 64)
	for len(s.have) <= w {
		s.have = append(s.have, 0)
	}
	if s.have[w]&(1<<(pgno%64)) == 0 {
		s.have[w] |= 1 << (pgno % 64)
		s.n++
	}
	return nil
}

// Len returns the number of pages held.
func (s *Spool) Len() int { return s.n }

func (s *Spool) pgnos() []uint32 {
	out := make([]uint32, 0, s.n)
	for w, bits := range s.have {
		for b := range 64 {
			if bits&(1<<b) != 0 {
				out = append(out, uint32(w*64+b))
			}
		}
	}
	return out
}

func (s *Spool) page(pgno uint32, buf []byte) ([]byte, error) {
	if cap(buf) < PageSize {
		buf = make([]byte, PageSize)
	}
	buf = buf[:PageSize]
	if _, err := s.f.ReadAt(buf, int64(pgno-1)*PageSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("localdb: spool: %w", err)
	}
	if s.seal != nil {
		s.seal.Open(buf, pgno)
	}
	return buf, nil
}

// Close removes the spool's file.
func (s *Spool) Close() error {
	err := s.f.Close()
	if rerr := os.Remove(s.f.Name()); err == nil {
		err = rerr
	}
	return err
}
