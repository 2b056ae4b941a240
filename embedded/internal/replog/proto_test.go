package replog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
)

// fixtureMessage returns the first message of a recorded body.
func fixtureMessage(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := grpcweb.NewReader(bytes.NewReader(b), 0).Next(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return msg
}

func TestDecodeHelloFixture(t *testing.T) {
	h, err := DecodeHello(fixtureMessage(t, "hello.body"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.LogID) != 36 || len(h.GenerationID) != 36 {
		t.Errorf("log_id %q, generation_id %q: want UUIDs", h.LogID, h.GenerationID)
	}
	if len(h.SessionToken) != 36 {
		t.Errorf("session token %q: want a UUID", h.SessionToken)
	}
}

// TestBatchFixture: the frames of CREATE TABLE, an INSERT and an UPDATE,
// from frame 0, each commit ending on a frame with size_after, chained by
// their checksums.
func TestBatchFixture(t *testing.T) {
	var got []Frame
	err := FramesEach(fixtureMessage(t, "batch.body"), func(data []byte) error {
		f, err := DecodeFrame(data)
		got = append(got, f)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		no, page, sizeAfter uint32
	}{{0, 1, 0}, {1, 2, 2}, {2, 2, 2}, {3, 2, 2}}
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	var prev uint64
	for i, f := range got {
		w := want[i]
		if f.FrameNo != uint64(w.no) || f.PageNo != w.page || f.SizeAfter != w.sizeAfter {
			t.Errorf("frame %d: %+v, want frame_no %d page %d size_after %d", i, f, w.no, w.page, w.sizeAfter)
		}
		if sum := NextChecksum(prev, f.Page); sum != f.Checksum {
			t.Errorf("frame %d: checksum %x, computed %x", i, f.Checksum, sum)
		}
		prev = f.Checksum
	}
	if !bytes.HasPrefix(got[0].Page, []byte("SQLite format 3\x00")) {
		t.Error("page 1 does not start with SQLite's header")
	}
}

func TestBatchEmptyFixture(t *testing.T) {
	n := 0
	if err := FramesEach(fixtureMessage(t, "batch_empty.body"), func([]byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d frames, want 0", n)
	}
}

// TestSnapshotFixture: a snapshot streams one Frame message per page, in
// decreasing frame_no order, the last one alone with size_after, then the
// trailers with status OK.
func TestSnapshotFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/snapshot.body")
	if err != nil {
		t.Fatal(err)
	}
	r := grpcweb.NewReader(bytes.NewReader(b), 0)
	var frames []Frame
	for {
		msg, err := r.Next(nil)
		if err == grpcweb.ErrTrailers {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := DecodeFrameMsg(msg)
		if err != nil {
			t.Fatal(err)
		}
		f, err := DecodeFrame(data)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	if err := r.Status().Err(); err != nil {
		t.Fatalf("trailers: %v", err)
	}
	if len(frames) < 2 {
		t.Fatalf("%d frames", len(frames))
	}
	pages := map[uint32]bool{}
	for i, f := range frames {
		if pages[f.PageNo] {
			t.Errorf("page %d twice", f.PageNo)
		}
		pages[f.PageNo] = true
		if i > 0 && f.FrameNo >= frames[i-1].FrameNo {
			t.Errorf("frame %d: frame_no %d after %d", i, f.FrameNo, frames[i-1].FrameNo)
		}
		if last := i == len(frames)-1; f.IsCommit() != last {
			t.Errorf("frame %d of %d: size_after %d", i, len(frames), f.SizeAfter)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	frame := EncodeFrame(nil, Frame{FrameNo: 1, PageNo: 1})
	frameMsg := append([]byte{0x0a, 0x98, 0x20}, frame...) // Frame{data}
	tests := []struct {
		name string
		fn   func() error
	}{
		{"hello truncated varint", func() error { _, err := DecodeHello([]byte{0x10}); return err }},
		{"hello length past end", func() error { _, err := DecodeHello([]byte{0x1a, 0x05, 'a'}); return err }},
		{"hello wrong wire type", func() error { _, err := DecodeHello([]byte{0x18, 0x01}); return err }},
		{"hello group", func() error { _, err := DecodeHello([]byte{0x33}); return err }},
		{"hello field 0", func() error { _, err := DecodeHello([]byte{0x00, 0x01}); return err }},
		{"hello no log id", func() error { _, err := DecodeHello([]byte{0x22, 0x01, 't'}); return err }},
		{"hello no token", func() error { _, err := DecodeHello([]byte{0x1a, 0x01, 'l'}); return err }},
		{"hello bad utf8", func() error { _, err := DecodeHello([]byte{0x1a, 0x01, 0xff, 0x22, 0x01, 't'}); return err }},
		{"frames wrong wire type", func() error { return FramesEach([]byte{0x08, 0x01}, nopFrame) }},
		{"frames inner garbage", func() error { return FramesEach([]byte{0x0a, 0x01, 0x07}, nopFrame) }},
		{"frame msg without data", func() error { _, err := DecodeFrameMsg([]byte{0x10, 0x01}); return err }},
		{"frame msg truncated", func() error { _, err := DecodeFrameMsg(frameMsg[:100]); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var de *DecodeError
			if err := tt.fn(); !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *DecodeError", err, err)
			}
		})
	}
	if _, err := DecodeFrameMsg(frameMsg); err != nil {
		t.Errorf("valid Frame message: %v", err)
	}
}

func nopFrame([]byte) error { return nil }

func TestDecodeFrameErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"short", make([]byte, FrameSize-1)},
		{"long", make([]byte, FrameSize+1)},
		{"page 0", EncodeFrame(nil, Frame{FrameNo: 1})},
		{"page too large", EncodeFrame(nil, Frame{PageNo: MaxPages + 1})},
		{"size_after too large", EncodeFrame(nil, Frame{PageNo: 1, SizeAfter: MaxPages + 1})},
		{"frame_no max", EncodeFrame(nil, Frame{FrameNo: ^uint64(0), PageNo: 1})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fe *FrameError
			if _, err := DecodeFrame(tt.data); !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *FrameError", err)
			}
		})
	}
	f := Frame{FrameNo: 7, Checksum: 9, PageNo: 3, SizeAfter: 4, Page: bytes.Repeat([]byte{1}, PageSize)}
	got, err := DecodeFrame(EncodeFrame(nil, f))
	if err != nil || got.FrameNo != 7 || got.Checksum != 9 || got.PageNo != 3 || got.SizeAfter != 4 || !bytes.Equal(got.Page, f.Page) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
}

// BenchmarkFramesEach decodes the recorded batch's frames.
func BenchmarkFramesEach(b *testing.B) {
	msg := fixtureMessage(b, "batch.body")
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		err := FramesEach(msg, func(data []byte) error {
			_, err := DecodeFrame(data)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextChecksum is the chain check of one frame.
func BenchmarkNextChecksum(b *testing.B) {
	page := make([]byte, PageSize)
	b.SetBytes(PageSize)
	var sum uint64
	for b.Loop() {
		sum = NextChecksum(sum, page)
	}
}
