package codectest

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gohrana/libsql/codec"
)

// Conformance runs every fixture and encode case through c and checks the
// rules of docs/CODECS.md:
//
//   - Decode: each fixture decodes to its expected value, or fails with a
//     *codec.DecodeError naming c (wrapping ErrIs when set); no panics.
//   - DecodeReset: decoding into a destination full of stale data gives the
//     same result (decoders reset their destination).
//   - DecodeCopiesStrings: Go strings in the result survive overwriting the
//     input.
//   - Encode: each request encodes to JSON equal to the expected JSON, or
//     fails with a *codec.EncodeError; the output is appended to dst.
//   - EncodeFloatSpelling: a float is never sent as an integer literal when
//     that would change it (-0).
//   - RoundTrip: values encoded by c decode back, with c, to equal values.
//   - SocketRoundTrip: every socket message c encodes reads back, with
//     ReadClientMsgJSON, as the message it was made from.
//   - Concurrent: decoding and encoding from several goroutines at once.
//
// The server-message fixtures and the socket encode cases need c to be a
// codec.SocketCodec.
func Conformance(t *testing.T, c codec.Codec) {
	t.Run("Registered", func(t *testing.T) {
		got, ok := codec.Lookup(c.Name())
		if !ok {
			t.Fatalf("codec %q is not registered", c.Name())
		}
		if got.Name() != c.Name() {
			t.Fatalf("Lookup(%q).Name() = %q", c.Name(), got.Name())
		}
	})
	fixtures := Fixtures()
	t.Run("Decode", func(t *testing.T) {
		for _, f := range fixtures {
			t.Run(f.Name, func(t *testing.T) {
				got := Decode(c, f.Kind, clone(f.Input))
				checkFixture(t, c, &f, &got)
			})
		}
	})
	t.Run("DecodeReset", func(t *testing.T) {
		for _, f := range fixtures {
			got := StaleResult(f.Kind)
			DecodeInto(c, clone(f.Input), &got)
			if f.Fail {
				if got.Err == nil {
					t.Errorf("%s: decoding into a used destination succeeded", f.Name)
				}
				continue
			}
			if got.Err != nil {
				t.Errorf("%s: decoding into a used destination failed: %v", f.Name, got.Err)
				continue
			}
			if d := Diff(&got, &f.Want); d != "" {
				t.Errorf("%s: decoding into a used destination: %s", f.Name, d)
			}
		}
	})
	t.Run("DecodeCopiesStrings", func(t *testing.T) {
		for _, f := range fixtures {
			if f.Fail {
				continue
			}
			in := clone(f.Input)
			got := Decode(c, f.Kind, in)
			if got.Err != nil {
				continue // reported by Decode
			}
			scribble(in)
			gs, ws := got.strings(), f.Want.strings()
			if strings.Join(gs, "\x00") != strings.Join(ws, "\x00") {
				t.Errorf("%s: strings changed with the input: %q, want %q", f.Name, gs, ws)
			}
		}
	})
	t.Run("Encode", func(t *testing.T) {
		for _, ec := range EncodeCases() {
			t.Run(ec.Name, func(t *testing.T) { checkEncode(t, c, &ec) })
		}
	})
	t.Run("EncodeFloatSpelling", func(t *testing.T) {
		for _, f := range []float64{math.Copysign(0, -1), -1, -1e20} {
			req := pipe("", execReq(codec.Stmt{SQL: "s", Args: []codec.Value{vF(f)}}))
			out, err := c.AppendPipelineRequest(nil, req)
			if err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			tok, err := FloatToken(out)
			if err != nil {
				t.Fatalf("%v: %v in %s", f, err, out)
			}
			if !strings.ContainsAny(tok, ".eE") {
				t.Errorf("float %v is sent as %s, an integer literal: the server would read it as an integer (losing -0)", f, tok)
			}
		}
	})
	t.Run("RoundTrip", func(t *testing.T) { checkRoundTrip(t, c, encodeValues()) })
	t.Run("SocketRoundTrip", func(t *testing.T) {
		for _, ec := range EncodeCases() {
			if ec.Fail || ec.Socket == nil && ec.Hello == nil {
				continue
			}
			t.Run(ec.Name, func(t *testing.T) {
				out, err := ec.Encode(c, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReadClientMsgJSON(out)
				if err != nil {
					t.Fatalf("%v in %s", err, out)
				}
				if d := DiffClientMsg(&got, ec.ClientMsg()); d != "" {
					t.Fatalf("%s\nencoded: %s", d, out)
				}
			})
		}
	})
	t.Run("Concurrent", func(t *testing.T) { checkConcurrent(t, c, fixtures) })
}

func checkFixture(t *testing.T, c codec.Codec, f *Fixture, got *Result) {
	t.Helper()
	var pe *PanicError
	if errors.As(got.Err, &pe) {
		t.Fatalf("input %q: %v", f.Input, pe)
	}
	if f.Fail {
		if got.Err == nil {
			t.Fatalf("input %q decoded (rule: %s); want an error", trim(f.Input), f.Rule)
		}
		var de *codec.DecodeError
		if !errors.As(got.Err, &de) {
			t.Fatalf("error %v (%T) is not a *codec.DecodeError", got.Err, got.Err)
		}
		if de.Codec != c.Name() {
			t.Errorf("DecodeError.Codec = %q, want %q", de.Codec, c.Name())
		}
		if f.ErrIs != nil && !errors.Is(got.Err, f.ErrIs) {
			t.Errorf("error %v does not wrap %v", got.Err, f.ErrIs)
		}
		return
	}
	if got.Err != nil {
		t.Fatalf("input %q: %v (rule: %s)", trim(f.Input), got.Err, f.Rule)
	}
	if d := Diff(got, &f.Want); d != "" {
		t.Fatalf("input %q: %s (rule: %s)", trim(f.Input), d, f.Rule)
	}
}

func trim(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func checkEncode(t *testing.T, c codec.Codec, ec *EncodeCase) {
	t.Helper()
	prefix := []byte("prefix:")
	out, err := ec.Encode(c, clone(prefix))
	if ec.Fail {
		if err == nil {
			t.Fatalf("encoded to %s; want an error (rule: %s)", out, ec.Rule)
		}
		var ee *codec.EncodeError
		if !errors.As(err, &ee) {
			t.Fatalf("error %v (%T) is not a *codec.EncodeError", err, err)
		}
		if ee.Codec != c.Name() {
			t.Errorf("EncodeError.Codec = %q, want %q", ee.Codec, c.Name())
		}
		if ec.ErrIs != nil && !errors.Is(err, ec.ErrIs) {
			t.Errorf("error %v does not wrap %v", err, ec.ErrIs)
		}
		return
	}
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("output %q does not start with the bytes of dst", out)
	}
	if d := JSONDiff(out[len(prefix):], []byte(ec.Want)); d != "" {
		t.Fatalf("%s (rule: %s)", d, ec.Rule)
	}
	// With room in dst, the output is written in place.
	buf := make([]byte, 0, 1<<16)
	buf = append(buf, prefix...)
	out2, err := ec.Encode(c, buf)
	if err != nil {
		t.Fatalf("encode again: %v", err)
	}
	if !bytes.Equal(out2, out) {
		t.Fatalf("encoding is not deterministic:\n%s\n%s", out, out2)
	}
	if len(out2) <= cap(buf) && &out2[0] != &buf[:1][0] {
		t.Errorf("output does not use the room in dst")
	}
}

func checkRoundTrip(t *testing.T, c codec.Codec, vals []codec.Value) {
	t.Helper()
	req := pipe("", execReq(codec.Stmt{SQL: "select", Args: vals, WantRows: true}))
	enc, err := c.AppendPipelineRequest(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := ArgsAsResponse(enc)
	if err != nil {
		t.Fatalf("%v in %s", err, enc)
	}
	var resp codec.PipelineResponse
	if err := c.DecodePipelineResponse(body, &resp); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	if len(resp.Results) != 1 || !resp.Results[0].OK {
		t.Fatalf("decoded %+v", resp)
	}
	if d := DiffValues(resp.Results[0].Response.Result.Values, vals); d != "" {
		t.Fatalf("round trip: %s\nencoded: %s", d, enc)
	}
}

func checkConcurrent(t *testing.T, c codec.Codec, fixtures []Fixture) {
	t.Helper()
	cases := EncodeCases()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			report := func(s string) {
				select {
				case errs <- s:
				default:
				}
			}
			for i := range fixtures {
				f := &fixtures[(i+g*len(fixtures)/4)%len(fixtures)]
				got := Decode(c, f.Kind, f.Input)
				if f.Fail != (got.Err != nil) {
					report(f.Name + ": outcome differs from the sequential run")
					continue
				}
				if !f.Fail {
					if d := Diff(&got, &f.Want); d != "" {
						report(f.Name + ": " + d)
					}
				}
			}
			for i := range cases {
				ec := &cases[i]
				out, err := ec.Encode(c, nil)
				if ec.Fail != (err != nil) {
					report(ec.Name + ": outcome differs from the sequential run")
				} else if !ec.Fail {
					if d := JSONDiff(out, []byte(ec.Want)); d != "" {
						report(ec.Name + ": " + d)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// StaleResult returns a Result of the given kind whose payloads are full of
// stale data, as a destination reused from an earlier, larger response is.
// Decoding into it (DecodeInto) must give what decoding into a fresh Result
// gives.
func StaleResult(kind Kind) Result {
	// Every part is built anew: a decoder may append into any slice of the
	// destination, so no two of them may share memory.
	stale := func() codec.StmtResult {
		r := rows(cols("stale", "STALE", "x", "y"), row(vI(7), vT("stale")), row(vB(1, 2), vF(3)), row(vN(), vI(-1)))
		r.AffectedRowCount, r.LastInsertRowID, r.HasLastInsertRowID = 5, 6, true
		r.ReplicationIndex, r.HasReplicationIndex = 7, true
		r.RowsRead, r.RowsWritten, r.QueryDurationMS = 8, 9, 10
		return r
	}
	results := make([]codec.StreamResult, 0, 64)
	for i := 0; i < 40; i++ {
		r := okExec(stale())
		r.Response.Batch = codec.BatchResult{Steps: []codec.StepOutcome{stepOK(stale()), stepErr("e", "c"), stepSkip, stepOK(stale())}, ReplicationIndex: 3, HasReplicationIndex: true}
		r.Response.Describe = codec.DescribeResult{Params: []codec.DescribeParam{{Name: ":p"}}, Cols: cols("d", "D"), IsExplain: true, IsReadonly: true}
		r.Response.IsAutocommit = true
		r.Error = codec.Error{Message: "stale", Code: "STALE"}
		if i%2 == 1 {
			r.OK = false
			r.Response.Type = codec.RequestBatch
		}
		results = append(results, r)
	}
	return Result{
		Kind:     kind,
		Pipeline: codec.PipelineResponse{Baton: "stale", BaseURL: "stale", Results: results},
		Header:   codec.CursorHeader{Baton: "stale", BaseURL: "stale"},
		Entry: codec.CursorEntry{Type: codec.EntryStepError, Step: 9, Cols: cols("a", "b", "c", "d", "e", "f"),
			Row: row(vI(1), vI(2), vI(3), vT("x"), vB(1), vF(2)), AffectedRowCount: 1, LastInsertRowID: 2, HasLastInsertRowID: true,
			Error: codec.Error{Message: "stale", Code: "STALE"}, ReplicationIndex: 3, HasReplicationIndex: true},
		Error: codec.Error{Message: "stale", Code: "STALE"},
		Server: codec.ServerMsg{Type: codec.ServerResponseOK, RequestID: 99, Error: codec.Error{Message: "stale", Code: "STALE"},
			Response: codec.SocketResponse{Type: codec.SocketBatch, Result: stale(),
				Batch:        codec.BatchResult{Steps: []codec.StepOutcome{stepOK(stale()), stepErr("e", "c"), stepSkip, stepOK(stale())}, ReplicationIndex: 3, HasReplicationIndex: true},
				Describe:     codec.DescribeResult{Params: []codec.DescribeParam{{Name: ":p"}}, Cols: cols("d", "D"), IsExplain: true, IsReadonly: true},
				IsAutocommit: true, Done: true, Entries: staleEntries()}},
	}
}

// staleEntries is a list of cursor entries of every type, for stale
// destinations.
func staleEntries() []codec.CursorEntry {
	var es []codec.CursorEntry
	for i := 0; i < 12; i++ {
		es = append(es, codec.CursorEntry{Type: codec.EntryType(i % 7), Step: uint32(i), Cols: cols("a", "b", "c", "d"),
			Row: row(vI(1), vT("x"), vB(2), vF(3)), AffectedRowCount: 4, LastInsertRowID: 5, HasLastInsertRowID: true,
			Error: codec.Error{Message: "stale", Code: "STALE"}, ReplicationIndex: 6, HasReplicationIndex: true})
	}
	return es
}
