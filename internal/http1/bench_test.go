package http1

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/helperproc"
)

var (
	benchReqBody  = bytes.Repeat([]byte("x"), 180)
	benchRespBody = []byte(`{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"1","decltype":null}],"rows":[[{"type":"integer","value":"1"}]],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}}}]}`)
)

func benchHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(benchRespBody)))
	w.Write(benchRespBody)
}

// TestBenchServer is the server process of BenchmarkRoundTrip/*/process:
// it runs only when the benchmark starts it, prints its URL and serves
// until its stdin closes.
func TestBenchServer(t *testing.T) {
	if os.Getenv("H1_BENCH_SERVER") != "1" {
		t.Skip("the benchmark's server process")
	}
	srv := httptest.NewServer(http.HandlerFunc(benchHandler))
	defer srv.Close()
	fmt.Println(srv.URL)
	io.Copy(io.Discard, os.Stdin)
}

// startServerProcess runs TestBenchServer in a child process, on one CPU.
func startServerProcess(b *testing.B) string {
	h := helperproc.Start(b, []string{"H1_BENCH_SERVER=1", "GOMAXPROCS=1"}, "-test.run=^TestBenchServer$")
	if !strings.HasPrefix(h.Line, "http://127.0.0.1:") {
		b.Fatalf("server process printed %q", h.Line)
	}
	return h.Line
}

// BenchmarkRoundTrip: one small pipeline-sized POST and its response body
// per op, through this transport and through net/http's (configured as the
// driver used to configure it), both under an http.Client as the driver
// uses them, against an httptest server on loopback: in this process
// ("inproc", where the server competes for the same Ps and the scheduler's
// wake-ups look different) and in a child process ("process", like a real
// sqld).
func BenchmarkRoundTrip(b *testing.B) {
	transports := []struct {
		name string
		rt   func() (http.RoundTripper, func())
	}{
		{"http1", func() (http.RoundTripper, func()) {
			t := New(Options{})
			return t, t.CloseIdleConnections
		}},
		{"net-http", func() (http.RoundTripper, func()) {
			t := &http.Transport{
				DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				ForceAttemptHTTP2:   true,
				DisableCompression:  true,
				MaxIdleConns:        64,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     90 * time.Second,
			}
			return t, t.CloseIdleConnections
		}},
	}
	for _, where := range []string{"inproc", "process"} {
		var url string
		if where == "inproc" {
			srv := httptest.NewServer(http.HandlerFunc(benchHandler))
			defer srv.Close()
			url = srv.URL
		}
		for _, tc := range transports {
			b.Run(where+"/"+tc.name, func(b *testing.B) {
				if url == "" {
					url = startServerProcess(b) // one per sub-benchmark run
					defer func() { url = "" }()
				}
				rt, done := tc.rt()
				defer done()
				benchLoop(b, &http.Client{Transport: rt}, url+"/v3/pipeline")
			})
		}
	}
}

func benchLoop(b *testing.B, hc *http.Client, url string) {
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(benchReqBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", "identity")
		req.Header.Set("Authorization", "Bearer token")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf = buf[:0]
		for {
			n, err := resp.Body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		cancel()
		if len(buf) != len(benchRespBody) {
			b.Fatalf("%d bytes", len(buf))
		}
	}
}
