package http1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// FuzzReadResponse feeds arbitrary bytes as the server's answer through a
// fake connection: RoundTrip and the body must fail cleanly or succeed, and
// what they accept, net/http's own parser must read the same way.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: Sun, 29 Nov 2026 20:00:00 GMT\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 9\r\n\r\nnot found",
		"HTTP/1.1 200 OK\ncontent-length: 1\n\nx",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 23\r\n\r\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x01\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n",
		"SSH-2.0-OpenSSH\r\n",
		"",
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		tr := New(Options{Compress: compress})
		tr.dial = func(context.Context, string, string) (net.Conn, error) {
			return &fakeConn{r: bytes.NewReader(data)}, nil
		}
		req, _ := http.NewRequest("POST", "http://127.0.0.1:1/v3/pipeline", strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			if resp != nil {
				t.Fatal("a response with an error")
			}
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 999 || resp.Body == nil || resp.Header == nil {
			t.Fatalf("response %+v", resp)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return
		}
		if !resp.Uncompressed {
			if len(body) > len(data) {
				t.Fatalf("%d body bytes out of %d", len(body), len(data))
			}
			if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
				t.Fatalf("%d body bytes, ContentLength %d", len(body), resp.ContentLength)
			}
		}
		if compress {
			return
		}
		// net/http reads what http1 read: same status, same body.
		br := bufio.NewReader(bytes.NewReader(data))
		want, err := http.ReadResponse(br, req)
		for err == nil && want.StatusCode < 200 { // as http.Transport skips them
			want, err = http.ReadResponse(br, req)
		}
		if err != nil {
			t.Fatalf("net/http rejects what http1 accepts: %v", err)
		}
		wantBody, err := io.ReadAll(want.Body)
		if err != nil {
			t.Fatalf("net/http cannot read the body http1 read: %v", err)
		}
		if want.StatusCode != resp.StatusCode || !bytes.Equal(wantBody, body) {
			t.Fatalf("net/http: %d %q; http1: %d %q", want.StatusCode, wantBody, resp.StatusCode, body)
		}
	})
}
