package replog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gohrana/libsql/embedded/internal/grpcweb"
)

// addFixtures seeds f with the recorded messages.
func addFixtures(f *testing.F) {
	for _, name := range []string{"hello.body", "batch.body", "batch_empty.body"} {
		f.Add(fixtureMessage(f, name))
	}
	f.Add(EncodeLogOffset(12345))
}

// FuzzDecoders: any bytes from the server decode to a value or to a typed
// error, never a panic; what decodes re-encodes into frames that decode
// again the same.
func FuzzDecoders(f *testing.F) {
	addFixtures(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := DecodeHello(b); err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeHello: %T %v", err, err)
			}
		}
		if _, err := DecodeFrameMsg(b); err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeFrameMsg: %T %v", err, err)
			}
		}
		err := FramesEach(b, func(data []byte) error {
			fr, err := DecodeFrame(data)
			if err != nil {
				return err
			}
			again, err := DecodeFrame(EncodeFrame(nil, fr))
			if err != nil || again.FrameNo != fr.FrameNo || again.PageNo != fr.PageNo || !bytes.Equal(again.Page, fr.Page) {
				t.Fatalf("frame does not round-trip: %v", err)
			}
			return nil
		})
		var de *DecodeError
		var fe *FrameError
		if err != nil && !errors.As(err, &de) && !errors.As(err, &fe) {
			t.Fatalf("FramesEach: %T %v", err, err)
		}
	})
}

// FuzzStream: a gRPC-Web body of any bytes reads as messages, then the
// trailers, EOF or a typed error, and never allocates past the limit.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"hello.body", "snapshot.body", "batch_empty.body"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := grpcweb.NewReader(bytes.NewReader(b), 1<<16)
		for range len(b) + 1 {
			msg, err := r.Next(nil)
			if err != nil {
				var fe *grpcweb.FormatError
				if err != grpcweb.ErrTrailers && err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &fe) {
					t.Fatalf("Next: %T %v", err, err)
				}
				return
			}
			if len(msg) > 1<<16 {
				t.Fatalf("message of %d bytes past the limit", len(msg))
			}
		}
		t.Fatal("more messages than bytes")
	})
}
