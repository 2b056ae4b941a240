package testmatrix_test

import (
	"testing"

	"github.com/gohrana/libsql"
	_ "github.com/gohrana/libsql/codec/gojson" // for ParseDSN of codec=gojson
	"github.com/gohrana/libsql/internal/testmatrix"
)

func TestAll(t *testing.T) {
	want := []testmatrix.Variant{
		{"direct", testmatrix.HTTP, "direct"},
		{"gojson", testmatrix.HTTP, "gojson"},
		{"protobuf", testmatrix.HTTP, "protobuf"},
		{"ws_direct", testmatrix.WebSocket, "direct"},
		{"ws_gojson", testmatrix.WebSocket, "gojson"},
		{"ws_protobuf", testmatrix.WebSocket, "protobuf"},
	}
	got := testmatrix.All()
	if len(got) != len(want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("All()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestNamed(t *testing.T) {
	for _, v := range testmatrix.All() {
		if got := testmatrix.Named(v.Name); got != v {
			t.Errorf("Named(%q) = %+v, want %+v", v.Name, got, v)
		}
	}
	if got, want := testmatrix.Named("ws_auto"), testmatrix.New(testmatrix.WebSocket, "auto"); got != want {
		t.Errorf("Named(\"ws_auto\") = %+v, want %+v", got, want)
	}
}

func TestNewUnknownTransport(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(\"grpc\", ...) did not panic")
		}
	}()
	testmatrix.New("grpc", "direct")
}

func TestDSN(t *testing.T) {
	ws := testmatrix.New(testmatrix.WebSocket, "protobuf")
	http := testmatrix.New(testmatrix.HTTP, "gojson")
	for _, tc := range []struct {
		v       testmatrix.Variant
		base    string
		params  []string
		want    string
		wantURL string // the URL libsql.ParseDSN reads from it
	}{
		{http, "http://127.0.0.1:8080", nil, "http://127.0.0.1:8080?codec=gojson", "http://127.0.0.1:8080"},
		{ws, "http://127.0.0.1:8080", nil, "ws://127.0.0.1:8080?codec=protobuf", "http://127.0.0.1:8080"},
		{ws, "https://db.example", nil, "wss://db.example?codec=protobuf", "https://db.example"},
		{ws, "http://127.0.0.1:8080/prefix", []string{"authToken=tok", "timeout=5s"},
			"ws://127.0.0.1:8080/prefix?codec=protobuf&authToken=tok&timeout=5s", "http://127.0.0.1:8080/prefix"},
		{http, "http://127.0.0.1:8080?namespace=a", nil, "http://127.0.0.1:8080?namespace=a&codec=gojson", "http://127.0.0.1:8080"},
	} {
		got := tc.v.DSN(tc.base, tc.params...)
		if got != tc.want {
			t.Errorf("%s.DSN(%q, %q) = %q, want %q", tc.v, tc.base, tc.params, got, tc.want)
			continue
		}
		cfg, err := libsql.ParseDSN(got)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", got, err)
			continue
		}
		wantTransport := "" // HTTP, the default
		if tc.v.WS() {
			wantTransport = libsql.TransportWS
		}
		if cfg.URL != tc.wantURL || cfg.Codec != tc.v.Codec || cfg.Transport != wantTransport {
			t.Errorf("ParseDSN(%q) = URL %q, codec %q, transport %q; want %q, %q, %q",
				got, cfg.URL, cfg.Codec, cfg.Transport, tc.wantURL, tc.v.Codec, wantTransport)
		}
	}
}
