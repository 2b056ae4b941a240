// Package ceiling measures the upper bounds for workload (a): the pipeline
// request the driver sends for fixture.Query (an execute and a close),
// POSTed with plain net/http, the response body read and discarded. No
// decoding, no database/sql: what is left is the server's work and the
// HTTP exchange. Run sends it in JSON to /v3/pipeline and RunProtobuf in
// Protobuf to /v3-protobuf/pipeline, each asking for the body uncompressed,
// as the driver does on loopback (compression=auto); RunGzip is Run with
// net/http's transparent gzip on, as the peer has it, for comparison.
package ceiling

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/bench/internal/harness"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// wire is one of Hrana 3's encodings over HTTP: its pipeline route, the
// Content-Type of its bodies and a codec that speaks it.
type wire struct {
	path, contentType string
	codec             codec.Codec
}

var (
	jsonWire     = wire{"/v3/pipeline", "application/json", direct.Codec}
	protobufWire = wire{"/v3-protobuf/pipeline", "application/x-protobuf", protobuf.Codec}
)

// Request returns the body the driver sends for fixture.Query outside a
// transaction, encoded with c.
func Request(c codec.Codec) ([]byte, error) {
	return c.AppendPipelineRequest(nil, &codec.PipelineRequest{Requests: []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: fixture.Query, WantRows: true}},
		{Type: codec.RequestClose},
	}})
}

// Run fetches the result in JSON o.Iters times after one checked warm-up;
// base is the server's URL ("http://127.0.0.1:8080"). Rate is o.N rows
// over the median fetch time. Like the driver on loopback, it sends
// Accept-Encoding: identity, so sqld sends the body as it is, with a
// Content-Length.
func Run(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return run(ctx, base, o, jsonWire, false)
}

// RunProtobuf is Run in Protobuf, on /v3-protobuf/pipeline: the bound for
// the driver with codec=protobuf.
func RunProtobuf(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return run(ctx, base, o, protobufWire, false)
}

// RunGzip is Run with net/http's transparent compression on, as the peer
// (and this driver with compression=gzip) has it: Go asks for gzip, sqld
// compresses the body and the client inflates it while discarding it.
func RunGzip(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return run(ctx, base, o, jsonWire, true)
}

func run(ctx context.Context, base string, o workload.Options, w wire, gzip bool) (workload.Result, error) {
	r := workload.Result{Workload: "ceiling"}
	body, err := Request(w.codec)
	if err != nil {
		return r, err
	}
	url := strings.TrimRight(base, "/") + w.path
	client := &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		DisableCompression:  !gzip,
	}}
	defer client.CloseIdleConnections()
	fetch := func(dst io.Writer) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", w.contentType)
		if !gzip {
			req.Header.Set("Accept-Encoding", "identity") // as the driver sends it
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, w.contentType) {
			return 0, fmt.Errorf("response of type %q, want %s", ct, w.contentType)
		}
		return io.Copy(dst, resp.Body)
	}
	// Warm-up: decode the answer once to check that it holds the rows.
	var full bytes.Buffer
	size, err := fetch(&full)
	if err != nil {
		return r, err
	}
	var resp codec.PipelineResponse
	if err := w.codec.DecodePipelineResponse(full.Bytes(), &resp); err != nil {
		return r, err
	}
	if len(resp.Results) != 2 || !resp.Results[0].OK || resp.Results[0].Response.Result.NumRows != o.N {
		return r, fmt.Errorf("the warm-up response does not hold %d rows", o.N)
	}
	secs := make([]float64, 0, o.Iters)
	m := workload.Begin()
	for range o.Iters {
		t := time.Now()
		n, err := fetch(io.Discard)
		if err != nil {
			return r, err
		}
		// The body differs a little from run to run (query_duration_ms).
		if n < size-size/20 || n > size+size/20 {
			return r, fmt.Errorf("response of %d bytes, the warm-up had %d", n, size)
		}
		secs = append(secs, time.Since(t).Seconds())
	}
	r.Rate = float64(o.N) / harness.Median(secs)
	m.End(&r, int64(o.N)*int64(o.Iters))
	return r, nil
}
