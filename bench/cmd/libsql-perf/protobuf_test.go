package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// The capture: sqld 0.24.32's answer on POST /v3-protobuf/pipeline to
// captureRequest, with the bench table filled with fixture rows
// 1..captureRows (the fixture's shape, a few hundred rows to stay small in
// git). To regenerate it, start a throwaway sqld and point the test at it:
//
//	sqld -d "$(mktemp -d)" --http-listen-addr 127.0.0.1:18080 --no-welcome &
//	LIBSQL_PERF_RECAPTURE=http://127.0.0.1:18080 go test -run TestRecaptureProtobuf ./cmd/libsql-perf
//
// (from the bench module; it drops and refills table bench), then stop
// that sqld.
const (
	captureRows = 500
	captureFile = "testdata/sqld-0.24.32-protobuf-500rows.pb.gz"
)

// captureRequest is the request the driver sends for fixture.Query outside
// a transaction: an execute and a close.
func captureRequest() ([]byte, error) {
	return protobuf.Codec.AppendPipelineRequest(nil, &codec.PipelineRequest{Requests: []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: fixture.Query, WantRows: true}},
		{Type: codec.RequestClose},
	}})
}

func readCapture(t *testing.T) []byte {
	t.Helper()
	b, err := fixture.ReadCapture(captureFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeProtobuf(t *testing.T, body []byte) codec.PipelineResponse {
	t.Helper()
	var resp codec.PipelineResponse
	if err := protobuf.Codec.DecodePipelineResponse(body, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestProtobufMatchesCapture checks the generator against sqld: once the
// metrics are taken from the capture, the generated body of the same rows
// decodes (with codec/protobuf) to the capture's values, and it has the
// capture's bytes. The metrics are the fields internal/fixture's test of
// the JSON form leaves out too: the replication index and the query
// duration vary from run to run, and rows_read is n in both fixtures where
// sqld counts 2n for this query (the table scan and the sorter).
func TestProtobufMatchesCapture(t *testing.T) {
	capture := readCapture(t)
	got := decodeProtobuf(t, capture)
	if len(got.Results) != 2 || got.Results[0].Response.Type != codec.RequestExecute {
		t.Fatalf("the capture holds %d results, want an execute and a close", len(got.Results))
	}
	cr := &got.Results[0].Response.Result
	if !cr.HasReplicationIndex || cr.QueryDurationMS == 0 {
		t.Fatalf("the capture lacks the metrics the generator writes: %+v", cr)
	}

	want := fixturePipeline(captureRows)
	wr := &want.Results[0].Response.Result
	wr.ReplicationIndex, wr.RowsRead, wr.QueryDurationMS = cr.ReplicationIndex, cr.RowsRead, cr.QueryDurationMS
	generated := protobufBody(want)

	dec := decodeProtobuf(t, generated)
	if d := codectest.DiffPipelineResponse(&dec, &got); d != "" {
		t.Fatalf("the generated body and the capture decode differently: %s", d)
	}
	if !bytes.Equal(generated, capture) {
		n := 0
		for n < len(generated) && n < len(capture) && generated[n] == capture[n] {
			n++
		}
		t.Fatalf("generator (%d bytes) differs from the capture (%d bytes) at byte %d:\n got % x\nwant % x",
			len(generated), len(capture), n, generated[n:min(n+32, len(generated))], capture[n:min(n+32, len(capture))])
	}
}

// TestProtobufMatchesJSON checks that the Protobuf fixture carries what the
// JSON one does, metrics included, at the sizes the workloads use.
func TestProtobufMatchesJSON(t *testing.T) {
	for _, n := range []int{0, 1, 7, captureRows, 5000, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var fromJSON codec.PipelineResponse
			if err := direct.Codec.DecodePipelineResponse(fixture.Response(n), &fromJSON); err != nil {
				t.Fatal(err)
			}
			got := decodeProtobuf(t, protobufResponse(n))
			if d := codectest.DiffPipelineResponse(&got, &fromJSON); d != "" {
				t.Fatal(d)
			}
			if err := checkDecoded(&got.Results[0].Response.Result, n); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecaptureProtobuf rewrites the capture from the sqld whose URL is in
// $LIBSQL_PERF_RECAPTURE (see captureFile); without it, it is skipped.
func TestRecaptureProtobuf(t *testing.T) {
	base := os.Getenv("LIBSQL_PERF_RECAPTURE")
	if base == "" {
		t.Skip("set LIBSQL_PERF_RECAPTURE to the URL of a throwaway sqld to rewrite " + captureFile)
	}
	base = strings.TrimRight(base, "/")
	if err := fillLive(base, captureRows); err != nil {
		t.Fatal(err)
	}
	reqBody, err := captureRequest()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v3-protobuf/pipeline", bytes.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", protobufContentType)
	req.Header.Set("Accept-Encoding", "identity") // the bytes as sqld writes them
	resp, body := do(t, http.DefaultClient, req)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != protobufContentType {
		t.Fatalf("HTTP %d, Content-Type %q: %.200q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	decodeProtobuf(t, body) // a well-formed answer before it replaces the old one

	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(captureFile, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d bytes (%d compressed)", captureFile, len(body), gz.Len())
}
