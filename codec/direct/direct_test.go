package direct

import (
	"sync"
	"testing"

	"github.com/gohrana/libsql/codec"
)

func TestRegistered(t *testing.T) {
	c, ok := codec.Lookup("direct")
	if !ok || c != Codec {
		t.Fatalf("Lookup(direct) = %v, %v", c, ok)
	}
	if Codec.Name() != "direct" || Name != "direct" {
		t.Errorf("Name() = %q", Codec.Name())
	}
}

// TestConcurrent decodes and encodes from many goroutines at once (run it
// with -race): the pooled scratch state and arena chunks must never be
// shared between two calls in flight.
func TestConcurrent(t *testing.T) {
	inputs := []string{
		readFixture(t, "pipeline_batch.json"),
		readFixture(t, "pipeline_values.json"),
		pipe(exec(oneRow(`{"type":"text","value":"a\nb"}`, `{"type":"blob","base64":"AAECAwQF"}`))),
		pipe(exec(oneRow(`{"type":"text","value":"\u00e9\ud83d\ude00"}`, `{"type":"blob","base64":"/w"}`))),
	}
	want := make([]string, len(inputs))
	for i, in := range inputs {
		r, err := decodePipeline(t, in)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = full(r)
	}
	req := benchRequest()
	wantReq, _ := Codec.AppendPipelineRequest(nil, req)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var kept []*codec.PipelineResponse
			var buf []byte
			for i := 0; i < 200; i++ {
				k := (g + i) % len(inputs)
				r := new(codec.PipelineResponse)
				if err := Codec.DecodePipelineResponse([]byte(inputs[k]), r); err != nil {
					t.Error(err)
					return
				}
				kept = append(kept, r)
				buf, _ = Codec.AppendPipelineRequest(buf[:0], req)
				if string(buf) != string(wantReq) {
					t.Error("encoding differs")
					return
				}
			}
			for i, r := range kept {
				if got := full(r); got != want[(g+i)%len(inputs)] {
					t.Errorf("goroutine %d, decode %d: result changed", g, i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}
