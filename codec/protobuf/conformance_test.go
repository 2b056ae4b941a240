package protobuf_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
)

func TestRegistered(t *testing.T) {
	c, ok := codec.Lookup("protobuf")
	if !ok || c.Name() != protobuf.Name || c != protobuf.Codec {
		t.Fatalf("Lookup(protobuf) = %v, %v", c, ok)
	}
}

// TestConformanceFixtures decodes the Protobuf form of every codectest
// fixture that decodes and checks that the result is the fixture's (as far
// as Protobuf can say it), into a fresh and into a stale destination, and
// that the Go strings do not share the input.
func TestConformanceFixtures(t *testing.T) {
	fixtures := codectest.ProtobufFixtures()
	if len(fixtures) < 100 {
		t.Fatalf("only %d fixtures", len(fixtures))
	}
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			in := bytes.Clone(f.Input)
			got := codectest.Decode(protobuf.Codec, f.Kind, in)
			if got.Err != nil {
				t.Fatalf("input %x: %v", f.Input, got.Err)
			}
			if d := codectest.Diff(&got, &f.Want); d != "" {
				t.Fatalf("input %x: %s", f.Input, d)
			}
			stale := codectest.StaleResult(f.Kind)
			codectest.DecodeInto(protobuf.Codec, f.Input, &stale)
			if d := codectest.Diff(&stale, &f.Want); d != "" {
				t.Fatalf("into a used destination: %s", d)
			}
			// Strings are copies: overwriting the input leaves them alone
			// (the values, which point into it, do change).
			for i := range in {
				in[i] = '#'
			}
			again := codectest.Decode(protobuf.Codec, f.Kind, f.Input)
			dropValues(&got)
			dropValues(&again)
			if d := codectest.Diff(&got, &again); d != "" {
				t.Fatalf("strings changed with the input: %s", d)
			}
		})
	}
}

// dropValues removes the values of r, which point into the input, keeping
// its Go strings: the slices that hold values are replaced by copies
// without them.
func dropValues(r *codectest.Result) {
	results := make([]codec.StreamResult, len(r.Pipeline.Results))
	for i, sr := range r.Pipeline.Results {
		sr.Response.Result.Values = nil
		sr.Response.Batch.Steps = stepsWithoutValues(sr.Response.Batch.Steps)
		results[i] = sr
	}
	r.Pipeline.Results = results
	r.Entry.Row = nil
	resp := &r.Server.Response
	resp.Result.Values = nil
	resp.Batch.Steps = stepsWithoutValues(resp.Batch.Steps)
	entries := make([]codec.CursorEntry, len(resp.Entries))
	for i, e := range resp.Entries {
		e.Row = nil
		entries[i] = e
	}
	resp.Entries = entries
}

func stepsWithoutValues(steps []codec.StepOutcome) []codec.StepOutcome {
	out := make([]codec.StepOutcome, len(steps))
	for i, st := range steps {
		st.Result.Values = nil
		out[i] = st
	}
	return out
}

// TestSameAsDirect checks the conversion itself: for every fixture, direct
// decoding the JSON input and this codec decoding its Protobuf form agree
// (after ProtobufWant, what Protobuf cannot carry).
func TestSameAsDirect(t *testing.T) {
	n := 0
	for _, f := range codectest.Fixtures() {
		if f.Fail {
			continue
		}
		j := codectest.Decode(direct.Codec, f.Kind, f.Input)
		if j.Err != nil {
			t.Fatalf("%s: direct: %v", f.Name, j.Err)
		}
		want := codectest.ProtobufWant(j)
		p := codectest.Decode(protobuf.Codec, f.Kind, codectest.ProtobufInput(&j))
		if d := codectest.Diff(&p, &want); d != "" {
			t.Errorf("%s: %s", f.Name, d)
		}
		n++
	}
	t.Logf("%d fixtures", n)
}

// TestConformanceErrors checks the form of decode errors on a few
// malformed inputs of every kind.
func TestConformanceErrors(t *testing.T) {
	for _, k := range codectest.Kinds {
		for _, in := range [][]byte{{0x80}, {0x0a, 0x05, 1}, {0x07}, {0x00}} {
			r := codectest.Decode(protobuf.Codec, k, in)
			var de *codec.DecodeError
			if !errors.As(r.Err, &de) || de.Codec != protobuf.Name || de.Offset < 0 || de.Offset > len(in) {
				t.Errorf("%v %x: error %#v", k, in, r.Err)
			}
		}
	}
}
