package replica

import (
	"bytes"
	"fmt"

	"github.com/gohrana/libsql/embedded/internal/replog"
)

// ProtocolError is a frame or answer from the primary that a replica must
// not apply: out of order, with a broken checksum chain, or malformed.
// Nothing of the batch it came in is written.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string {
	return "embedded: bad replication data from the primary: " + e.Msg
}

// assembler gathers the frames of the log, in order, into whole commits.
// A page written several times keeps its last version; the frames after
// the last commit frame wait for the rest of their commit. Pages alias the
// answer they came in (a batch is applied before the next is read, and a
// batch of 1024 frames is 4 MiB), except those of an unfinished commit,
// which keep copies once the caller says the answer is done with.
type assembler struct {
	next  uint64 // the frame_no expected next
	prev  uint64 // checksum of the frame before next, if chain
	chain bool

	open map[uint32][]byte // pages of the commit in progress

	done      map[uint32][]byte // pages of whole commits, not applied yet
	doneSize  uint32            // size_after of the last whole commit
	doneNext  uint64            // next after the last whole commit
	doneSum   uint64            // checksum of the last whole commit's last frame
	doneCount int               // frames in done
	openCount int
}

func newAssembler(next, prev uint64, chain bool) *assembler {
	return &assembler{next: next, prev: prev, chain: chain, open: map[uint32][]byte{}, done: map[uint32][]byte{}, doneNext: next, doneSum: prev}
}

// add takes the next frame of the log.
func (a *assembler) add(f replog.Frame) error {
	if f.FrameNo != a.next {
		return &ProtocolError{Msg: fmt.Sprintf("frame %d where frame %d was due", f.FrameNo, a.next)}
	}
	if a.chain {
		if sum := replog.NextChecksum(a.prev, f.Page); sum != f.Checksum {
			return &ProtocolError{Msg: fmt.Sprintf("frame %d: checksum %016x, the chain gives %016x", f.FrameNo, f.Checksum, sum)}
		}
	}
	a.prev, a.chain = f.Checksum, true
	a.next++
	a.open[f.PageNo] = f.Page
	a.openCount++
	if f.IsCommit() {
		for pgno, p := range a.open {
			a.done[pgno] = p
		}
		clear(a.open)
		a.doneSize, a.doneNext, a.doneSum = f.SizeAfter, a.next, f.Checksum
		a.doneCount += a.openCount
		a.openCount = 0
	}
	return nil
}

// ready reports whether whole commits wait to be applied.
func (a *assembler) ready() bool { return a.doneSize != 0 }

// take hands over the whole commits gathered so far.
func (a *assembler) take() (pages map[uint32][]byte, sizeAfter uint32, next, checksum uint64, frames int) {
	pages, sizeAfter, next, checksum, frames = a.done, a.doneSize, a.doneNext, a.doneSum, a.doneCount
	a.done, a.doneSize, a.doneCount = map[uint32][]byte{}, 0, 0
	return
}

// keep copies the pages of the unfinished commit, so that the answer
// they came in can be reused.
func (a *assembler) keep() {
	for pgno, p := range a.open {
		a.open[pgno] = bytes.Clone(p)
	}
}

// pending reports whether frames of an unfinished commit are held.
func (a *assembler) pending() bool { return a.openCount > 0 }
