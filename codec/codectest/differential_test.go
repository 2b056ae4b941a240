package codectest_test

import (
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/gojson"
)

// The two codecs compared: the hand-written one and the baseline.
var (
	codecA codec.Codec = direct.Codec
	codecB codec.Codec = gojson.Codec
)

// compare decodes data with both codecs, fresh and, with reuse, also into a
// used destination, and reports any disagreement.
func compare(t *testing.T, kind codectest.Kind, data []byte, reuse bool) {
	t.Helper()
	a := codectest.Decode(codecA, kind, data)
	b := codectest.Decode(codecB, kind, data)
	for _, r := range []struct {
		c   codec.Codec
		res *codectest.Result
	}{{codecA, &a}, {codecB, &b}} {
		var pe *codectest.PanicError
		if errors.As(r.res.Err, &pe) {
			t.Fatalf("%s panicked on %q: %v", r.c.Name(), data, pe)
		}
		var de *codec.DecodeError
		if r.res.Err != nil && (!errors.As(r.res.Err, &de) || de.Codec != r.c.Name()) {
			t.Fatalf("%s: error %v (%T) is not a *codec.DecodeError of the codec", r.c.Name(), r.res.Err, r.res.Err)
		}
	}
	if d := codectest.Diff(&a, &b); d != "" {
		t.Fatalf("%s vs %s on %s %q: %s\n%s: %v\n%s: %v", codecA.Name(), codecB.Name(), kind, data, d,
			codecA.Name(), a.Err, codecB.Name(), b.Err)
	}
	if !reuse {
		return
	}
	// Decoding into a used destination must not change the outcome.
	for _, r := range []struct {
		c   codec.Codec
		res *codectest.Result
	}{{codecA, &a}, {codecB, &b}} {
		dirty := codectest.StaleResult(kind)
		codectest.DecodeInto(r.c, data, &dirty)
		if d := codectest.Diff(&dirty, r.res); d != "" {
			t.Fatalf("%s: decoding %s %q into a used destination differs from a fresh one: %s", r.c.Name(), kind, data, d)
		}
	}
}

// TestDifferentialFixtures runs every fixture, and prefixes of it, through
// both codecs.
func TestDifferentialFixtures(t *testing.T) {
	for _, f := range codectest.Fixtures() {
		t.Run(f.Name, func(t *testing.T) {
			compare(t, f.Kind, f.Input, true)
			// About 16 prefixes.
			step := max(1, len(f.Input)/16)
			for n := 0; n < len(f.Input); n += step {
				compare(t, f.Kind, f.Input[:n], false)
			}
		})
	}
}

// TestDifferentialEncode encodes every encode case with both codecs: both
// fail, or both give equal JSON.
func TestDifferentialEncode(t *testing.T) {
	for _, ec := range codectest.EncodeCases() {
		t.Run(ec.Name, func(t *testing.T) {
			a, errA := ec.Encode(codecA, nil)
			b, errB := ec.Encode(codecB, nil)
			switch {
			case errA != nil && errB != nil:
				if errors.Is(errA, codec.ErrInvalidUTF8) != errors.Is(errB, codec.ErrInvalidUTF8) {
					t.Errorf("only one error wraps ErrInvalidUTF8: %v / %v", errA, errB)
				}
			case errA != nil || errB != nil:
				t.Fatalf("%s: %v, %s: %v", codecA.Name(), errA, codecB.Name(), errB)
			default:
				if d := codectest.JSONDiff(a, b); d != "" {
					t.Fatalf("%s vs %s: %s", codecA.Name(), codecB.Name(), d)
				}
			}
		})
	}
}

// FuzzDifferential decodes arbitrary bytes with both codecs, as any of the
// kinds of input: both must fail, or both succeed with equal results;
// neither may panic. The seed corpus is the fixture table (also stored
// under testdata/fuzz/FuzzDifferential), less its largest inputs, which
// TestDifferentialFixtures covers.
func FuzzDifferential(f *testing.F) {
	for _, fx := range codectest.Fixtures() {
		if len(fx.Input) <= maxSeedFile { // large seeds slow the fuzzer down
			f.Add(uint8(fx.Kind), fx.Input)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		compare(t, codectest.Kind((kind-1)%uint8(len(codectest.Kinds))+1), data, true)
	})
}

// FuzzDifferentialServerMsg is FuzzDifferential for server messages
// alone, seeded with their fixtures, so that every input the fuzzer makes
// is decoded as one.
func FuzzDifferentialServerMsg(f *testing.F) {
	for _, fx := range codectest.Fixtures() {
		if fx.Kind == codectest.KindServerMsg && len(fx.Input) <= maxSeedFile {
			f.Add(fx.Input)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compare(t, codectest.KindServerMsg, data, true)
	})
}
