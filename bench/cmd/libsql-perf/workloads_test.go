package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// do sends req with client and returns the response and its body, read to
// the end and closed; a failure to do either fails the test.
func do(t *testing.T, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestRouteFormat(t *testing.T) {
	for path, want := range map[string]*wireFormat{
		"/v3":                   jsonFormat,
		"/v3/pipeline":          jsonFormat,
		"/v3-protobuf":          protobufFormat,
		"/v3-protobuf/pipeline": protobufFormat,
		"/v3-protobuf/cursor":   protobufFormat,
		"/v2/pipeline":          nil,
		"/v3x/pipeline":         nil,
		"/":                     nil,
	} {
		if got := routeFormat(path); got != want {
			t.Errorf("routeFormat(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestCannedServer checks what the scan workloads are served: the probes
// answer 200, and each pipeline route its encoding's 20,000-row body.
func TestCannedServer(t *testing.T) {
	e := &env{}
	defer e.close()
	srv := e.server()
	for _, c := range []struct {
		method, path string
		ctype        string
		body         []byte
	}{
		{http.MethodGet, "/v3", "", nil},
		{http.MethodGet, "/v3-protobuf", "", nil},
		{http.MethodPost, "/v3/pipeline", "application/json", e.body(jsonFormat, 20000)},
		{http.MethodPost, "/v2/pipeline", "application/json", e.body(jsonFormat, 20000)},
		{http.MethodPost, "/v3-protobuf/pipeline", "application/x-protobuf", e.body(protobufFormat, 20000)},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader("request"))
			if err != nil {
				t.Fatal(err)
			}
			resp, body := do(t, srv.Client(), req)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("HTTP %d", resp.StatusCode)
			}
			if c.ctype != "" && resp.Header.Get("Content-Type") != c.ctype {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), c.ctype)
			}
			if !bytes.Equal(body, c.body) {
				t.Errorf("got a %d-byte body, want %d bytes", len(body), len(c.body))
			}
		})
	}
	if n := e.posts[protobufFormat].Load(); n != 1 {
		t.Errorf("%d POSTs counted on /v3-protobuf, want 1", n)
	}
}
