package replog

import (
	"encoding/binary"
	"fmt"
)

// PageSize is the size of the pages sqld replicates: libSQL's logs always
// carry 4 KiB pages.
const PageSize = 4096

// HeaderSize is the size of a frame's header.
const HeaderSize = 24

// FrameSize is the size of Frame.data: the header, then the page.
const FrameSize = HeaderSize + PageSize

// MaxPages bounds a page number or database size read from a frame:
// SQLite's own limit (4294967294 pages) would let garbage size a file of
// 16 TiB; libSQL's default max_page_count is 0xfffffffe too, so this is
// only a sanity bound well above any real database (4 TiB).
const MaxPages = 1 << 30

// Frame is one frame of the replication log: a page as some transaction
// left it. Page aliases the data it was decoded from.
type Frame struct {
	FrameNo  uint64
	Checksum uint64
	PageNo   uint32
	// SizeAfter is the database size in pages after the commit this frame
	// ends; 0 for the frames before the last of a commit.
	SizeAfter uint32
	Page      []byte
}

// IsCommit reports whether the frame is the last of a commit.
func (f *Frame) IsCommit() bool { return f.SizeAfter != 0 }

// A FrameError is a Frame.data that is not a valid frame.
type FrameError struct{ Msg string }

func (e *FrameError) Error() string { return "replog: invalid frame: " + e.Msg }

// DecodeFrame decodes Frame.data: frame_no u64 | checksum u64 | page_no
// u32 | size_after u32, little-endian, then the page.
func DecodeFrame(data []byte) (Frame, error) {
	if len(data) != FrameSize {
		return Frame{}, &FrameError{Msg: fmt.Sprintf("%d bytes, want %d", len(data), FrameSize)}
	}
	f := Frame{
		FrameNo:   binary.LittleEndian.Uint64(data[0:]),
		Checksum:  binary.LittleEndian.Uint64(data[8:]),
		PageNo:    binary.LittleEndian.Uint32(data[16:]),
		SizeAfter: binary.LittleEndian.Uint32(data[20:]),
		Page:      data[HeaderSize:],
	}
	switch {
	case f.PageNo == 0 || f.PageNo > MaxPages:
		return Frame{}, &FrameError{Msg: fmt.Sprintf("frame %d: page number %d", f.FrameNo, f.PageNo)}
	case f.SizeAfter > MaxPages:
		return Frame{}, &FrameError{Msg: fmt.Sprintf("frame %d: size_after %d pages", f.FrameNo, f.SizeAfter)}
	case f.FrameNo == ^uint64(0):
		return Frame{}, &FrameError{Msg: "frame number 2^64-1"}
	}
	return f, nil
}

// EncodeFrame appends f as Frame.data to b (for tests and fixtures).
func EncodeFrame(b []byte, f Frame) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.FrameNo)
	b = binary.LittleEndian.AppendUint64(b, f.Checksum)
	b = binary.LittleEndian.AppendUint32(b, f.PageNo)
	b = binary.LittleEndian.AppendUint32(b, f.SizeAfter)
	page := f.Page
	if len(page) > PageSize {
		page = page[:PageSize]
	}
	b = append(b, page...)
	return append(b, make([]byte, PageSize-len(page))...)
}
