package replica

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/replog"
)

// chain returns frames from frame_no 0 with a valid checksum chain: one
// per (page, size_after) pair.
func chain(specs ...[2]uint32) []replog.Frame {
	var out []replog.Frame
	var prev uint64
	for i, s := range specs {
		page := bytes.Repeat([]byte{byte(i + 1)}, replog.PageSize)
		sum := replog.NextChecksum(prev, page)
		out = append(out, replog.Frame{FrameNo: uint64(i), Checksum: sum, PageNo: s[0], SizeAfter: s[1], Page: page})
		prev = sum
	}
	return out
}

func TestAssembler(t *testing.T) {
	frames := chain([2]uint32{1, 0}, [2]uint32{2, 2}, [2]uint32{2, 0}, [2]uint32{3, 3}, [2]uint32{1, 0})
	a := newAssembler(0, 0, true)
	for i, f := range frames[:2] {
		if err := a.add(f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if !a.ready() || a.pending() {
		t.Fatal("one whole commit expected")
	}
	// A commit carried over: frame 2 waits for frame 3, in a copy once
	// its answer is reused.
	if err := a.add(frames[2]); err != nil {
		t.Fatal(err)
	}
	a.keep()
	frames[2].Page[0] = 0xee
	pages, size, next, _, n := a.take()
	if len(pages) != 2 || size != 2 || next != 2 || n != 2 || !a.pending() || a.ready() {
		t.Fatalf("take: %d pages, size %d, next %d, %d frames", len(pages), size, next, n)
	}
	if err := a.add(frames[3]); err != nil {
		t.Fatal(err)
	}
	pages, size, next, sum, n := a.take()
	if len(pages) != 2 || pages[2][0] != 3 || size != 3 || next != 4 || n != 2 || sum != frames[3].Checksum {
		t.Fatalf("second take: %d pages (page 2 from frame %d), size %d, next %d", len(pages), pages[2][0]-1, size, next)
	}
	if pages[2][0] == 0xee {
		t.Error("a kept page aliases its answer")
	}
	// The last frame, without size_after, stays pending.
	if err := a.add(frames[4]); err != nil || !a.pending() || a.ready() {
		t.Fatalf("pending frame: %v", err)
	}
}

func TestAssemblerRefuses(t *testing.T) {
	frames := chain([2]uint32{1, 0}, [2]uint32{2, 2})
	broken := frames[1]
	broken.Page = bytes.Repeat([]byte{9}, replog.PageSize)
	tests := []struct {
		name   string
		a      *assembler
		frames []replog.Frame
	}{
		{"gap", newAssembler(0, 0, true), []replog.Frame{frames[1]}},
		{"repeat", newAssembler(0, 0, true), []replog.Frame{frames[0], frames[0]}},
		{"broken chain", newAssembler(0, 0, true), []replog.Frame{frames[0], broken}},
		{"broken chain from a known checksum", newAssembler(1, frames[0].Checksum, true), []replog.Frame{broken}},
	}
	for _, tt := range tests {
		var err error
		for _, f := range tt.frames {
			if err = tt.a.add(f); err != nil {
				break
			}
		}
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *ProtocolError", tt.name, err)
		}
		if tt.a.ready() {
			t.Errorf("%s: a commit is ready", tt.name)
		}
	}
	// Without a known chain (a file reopened mid-log), the first frame is
	// taken as it is and the chain continues from it.
	a := newAssembler(1, 0, false)
	if err := a.add(broken); err != nil || !a.ready() {
		t.Errorf("unknown chain: %v", err)
	}
}
