package protobuf_test

import (
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/protobuf"
)

// fuzzSeeds adds the Protobuf fixtures and the decode cases of kind k.
func fuzzSeeds(f *testing.F, k codectest.Kind) {
	for _, fx := range codectest.ProtobufFixtures() {
		if fx.Kind == k {
			f.Add(fx.Input)
		}
	}
	for _, tc := range decodeCases() {
		if tc.kind == k {
			f.Add([]byte(tc.in))
		}
	}
}

// checkFuzz holds the invariants of every decode: no panic, errors of the
// documented form, the same outcome into a fresh and a stale destination,
// and for a success, the result survives re-encoding (the Protobuf form of
// the decoded values decodes to the same values).
func checkFuzz(t *testing.T, k codectest.Kind, data []byte) {
	got := codectest.Decode(protobuf.Codec, k, data)
	var pe *codectest.PanicError
	if errors.As(got.Err, &pe) {
		t.Fatal(pe)
	}
	stale := codectest.StaleResult(k)
	codectest.DecodeInto(protobuf.Codec, data, &stale)
	if d := codectest.Diff(&got, &stale); d != "" {
		t.Fatalf("fresh and stale destinations differ: %s", d)
	}
	if got.Err != nil {
		var de *codec.DecodeError
		if !errors.As(got.Err, &de) || de.Codec != protobuf.Name || de.Offset < 0 || de.Offset > len(data) {
			t.Fatalf("bad error %#v", got.Err)
		}
		return
	}
	again := codectest.Decode(protobuf.Codec, k, codectest.ProtobufInput(&got))
	want := codectest.ProtobufWant(got)
	if d := codectest.Diff(&again, &want); d != "" {
		t.Fatalf("re-encoded result differs: %s", d)
	}
}

// FuzzDecodePipeline decodes arbitrary pipeline response bodies.
func FuzzDecodePipeline(f *testing.F) {
	fuzzSeeds(f, codectest.KindPipeline)
	f.Add(benchResponse(3))
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, codectest.KindPipeline, data) })
}

// FuzzDecodeCursor splits arbitrary bytes as a cursor body and decodes the
// first message as the header and the others as entries; the input is also
// decoded whole as one entry and as an error body.
func FuzzDecodeCursor(f *testing.F) {
	fuzzSeeds(f, codectest.KindCursorEntry)
	fuzzSeeds(f, codectest.KindError)
	f.Add([]byte{0x02, 0x0a, 0x00, 0x00, 0x05, 0x22, 0x03, 0x0a, 0x01, 0x0a})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzz(t, codectest.KindCursorEntry, data)
		checkFuzz(t, codectest.KindError, data)
		kind := codectest.KindCursorHeader
		for rest := data; len(rest) > 0; kind = codectest.KindCursorEntry {
			m, r, err := protobuf.SplitDelimited(rest, 1<<16)
			if err != nil {
				var de *codec.DecodeError
				if !errors.As(err, &de) || de.Codec != protobuf.Name {
					t.Fatalf("bad error %#v", err)
				}
				break
			}
			if len(r) >= len(rest) {
				t.Fatal("SplitDelimited made no progress")
			}
			checkFuzz(t, kind, m)
			rest = r
		}
	})
}
