package libsql

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn  string
		want Config
	}{
		{"libsql://db.example.com", Config{URL: "https://db.example.com", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"libsql://db.example.com:8443?tls=1", Config{URL: "https://db.example.com:8443", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"libsql://127.0.0.1:8080?tls=0", Config{URL: "http://127.0.0.1:8080", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"LIBSQL://h?tls=false", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"https://h/prefix/", Config{URL: "https://h/prefix", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://127.0.0.1:8080?codec=gojson", Config{URL: "http://127.0.0.1:8080", Codec: "gojson", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?authToken=abc.def", Config{URL: "http://h", Codec: "direct", AuthToken: "abc.def", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?auth_token=abc", Config{URL: "http://h", Codec: "direct", AuthToken: "abc", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?timeout=5", Config{URL: "http://h", Codec: "direct", Timeout: 5 * time.Second, BusyTimeout: DefaultBusyTimeout}},
		{"http://h?timeout=250ms", Config{URL: "http://h", Codec: "direct", Timeout: 250 * time.Millisecond, BusyTimeout: DefaultBusyTimeout}},
		{"http://h?compression=gzip", Config{URL: "http://h", Codec: "direct", Compression: "gzip", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?compression=none", Config{URL: "http://h", Codec: "direct", Compression: "none", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?compression=auto", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?deferredExec=1", Config{URL: "http://h", Codec: "direct", DeferredExec: true, BusyTimeout: DefaultBusyTimeout}},
		{"http://h?deferred_exec=false", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?busyTimeout=250ms", Config{URL: "http://h", Codec: "direct", BusyTimeout: 250 * time.Millisecond}},
		{"http://h?_busy_timeout=1500", Config{URL: "http://h", Codec: "direct", BusyTimeout: 1500 * time.Millisecond}},
		{"http://h?busyTimeout=0", Config{URL: "http://h", Codec: "direct"}},
		{"http://h?namespace=tenant1", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, Namespace: "tenant1"}},
		{"http://h?readYourWrites=0", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, DisableReadYourWrites: true}},
		{"http://h?readYourWrites=true", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?keepStreams=0", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, DisableKeptStreams: true}},
		{"http://h?keepStreams=1", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?replicationWait=2s", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, ReplicationWait: 2 * time.Second}},
		{"http://h?_txlock=immediate", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, TxLock: TxLockImmediate}},
		{"http://h?_txlock=exclusive", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, TxLock: TxLockExclusive}},
		{"http://h?_txlock=deferred", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout, TxLock: TxLockDeferred}},
		{"ws://127.0.0.1:8080", Config{URL: "http://127.0.0.1:8080", Transport: TransportWS, Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"wss://db.example.com/p/?authToken=t", Config{URL: "https://db.example.com/p", Transport: TransportWS, Codec: "direct", AuthToken: "t", BusyTimeout: DefaultBusyTimeout}},
		{"WS://h?transport=ws", Config{URL: "http://h", Transport: TransportWS, Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"libsql://h?transport=ws", Config{URL: "https://h", Transport: TransportWS, Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"libsql://h?transport=ws&tls=0", Config{URL: "http://h", Transport: TransportWS, Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"libsql://h?transport=http", Config{URL: "https://h", Transport: TransportHTTP, Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"https://h?transport=ws&codec=protobuf", Config{URL: "https://h", Transport: TransportWS, Codec: "protobuf", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?transport=", Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout}},
		{"http://h?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_pragma=main.cache_size(-2000)&_pragma=temp_store('memory')",
			Config{URL: "http://h", Codec: "direct", BusyTimeout: DefaultBusyTimeout,
				Pragmas: []string{"foreign_keys(1)", "busy_timeout(5000)", "main.cache_size(-2000)", "temp_store('memory')"}}},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			got, err := ParseDSN(tt.dsn)
			if err != nil {
				t.Fatalf("ParseDSN: %v", err)
			}
			want := tt.want
			if want.MaxWriters == 0 {
				// Entries leave MaxWriters at its default; TestParseDSNMaxWriters
				// has the others.
				want.MaxWriters = MaxWritersAuto
			}
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("got %+v, want %+v", *got, want)
			}
		})
	}
}

func TestParseDSNMaxWriters(t *testing.T) {
	for dsn, want := range map[string]int{
		"http://h":                 MaxWritersAuto,
		"http://h?maxWriters=auto": MaxWritersAuto,
		"http://h?maxWriters=0":    0,
		"http://h?maxWriters=4":    4,
	} {
		cfg, err := ParseDSN(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if cfg.MaxWriters != want {
			t.Errorf("%s: MaxWriters %d, want %d", dsn, cfg.MaxWriters, want)
		}
	}
	for _, dsn := range []string{"http://h?maxWriters=-1", "http://h?maxWriters=many", "http://h?maxWriters="} {
		if _, err := ParseDSN(dsn); err == nil || !strings.Contains(err.Error(), "maxWriters: want auto or a whole number") {
			t.Errorf("%s: error %v", dsn, err)
		}
	}
	cfg := NewConfig()
	cfg.URL = "http://h"
	cfg.MaxWriters = -2
	if _, err := NewConnector(cfg); err == nil || !strings.Contains(err.Error(), "Config.MaxWriters") {
		t.Errorf("MaxWriters -2: error %v", err)
	}
	cfg.MaxWriters = MaxWritersAuto
	cfg.TxLock = "Immediate"
	if _, err := NewConnector(cfg); err == nil || !strings.Contains(err.Error(), "Config.TxLock") {
		t.Errorf("TxLock %q: error %v", cfg.TxLock, err)
	}
}

func TestParseDSNErrors(t *testing.T) {
	tests := []struct{ dsn, wantInErr string }{
		{"http://h?foo=1&bar=2", `unknown parameter(s): "bar", "foo"`},
		{"ws://h?sockets=-1", "sockets: want conn or a whole number"},
		{"ws://h?sockets=many", "sockets: want conn or a whole number"},
		{"http://h?_txlock=IMMEDIATE", "_txlock: want deferred, immediate or exclusive"},
		{"http://h?_txlock=", "_txlock: want deferred, immediate or exclusive"},
		{"http://h?txlock=immediate", `unknown parameter(s): "txlock" (did you mean "_txlock"?)`},
		// Misspelt names get the closest known one, never the value.
		{"http://h?authtoken=SECRET", `unknown parameter(s): "authtoken" (did you mean "authToken"? names are case-sensitive)`},
		{"http://h?AUTH_TOKEN=SECRET", `unknown parameter(s): "AUTH_TOKEN" (did you mean "auth_token"? names are case-sensitive)`},
		{"http://h?auth-token=SECRET", `unknown parameter(s): "auth-token" (did you mean "authToken"?)`},
		{"http://h?timout=5s", `unknown parameter(s): "timout" (did you mean "timeout"?)`},
		{"http://h?maxwriter=1", `unknown parameter(s): "maxwriter" (did you mean "maxWriters"?)`},
		{"http://h?authTokn=SECRET", `unknown parameter(s): "authTokn" (did you mean "authToken"?)`},
		{"http://h?authtokenSECRET=1", `(a malformed name of 15 bytes, not shown)`},
		{"http://h?codec=nope", `unknown codec "nope"`},
		{"http://h?tls=1", "libsql:// URLs only"},
		{"libsql://h?tls=maybe", "tls is not a boolean"},
		{"http://h?timeout=-1s", "negative"},
		{"http://h?timeout=soon", "not a duration"},
		{"ftp://h", "unsupported scheme"},
		{"ws://h?transport=http", "contradicts a ws:// URL"},
		{"wss://h?tls=1", "libsql:// URLs only"},
		{"http://h?transport=grpc", "transport: want http or ws"},
		{"ftp://h", "wss:// or ws://"},
		{"http://", "missing host"},
		{"http://user:secret@h", "user information"},
		{"http://h?authToken=a&auth_token=b", "twice"},
		{"http://h?codec=a&codec=b", "given 2 times"},
		{"http://h?busyTimeout=-1s", "negative"},
		{"http://h?busyTimeout=later", "not a duration or a number of milliseconds"},
		{"http://h?_pragma=foreign_keys", "want name(value)"},
		{"http://h?_pragma=foreign_keys(1)%3BDROP%20TABLE%20t", "want name(value)"},
		{"http://h?_pragma=foreign_keys(1)%3BDROP%20TABLE%20t%3Bx(1)", "the value must be"},
		{"http://h?_pragma=temp_store('a'b')", "the value must be"},
		{"http://h?_pragma=(1)", "want name(value)"},
		{"http://h#frag", "fragment"},
		{"::not a url", "not a valid URL"},
		{"http://h?compression=br", "want gzip, none or auto"},
		{"http://h?deferredExec=maybe", "deferredExec is not a boolean"},
		{"http://h?readYourWrites=maybe", "readYourWrites is not a boolean"},
		{"http://h?keepStreams=maybe", "keepStreams is not a boolean"},
		{"http://h?replicationWait=-1s", "replicationWait: "},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			_, err := ParseDSN(tt.dsn)
			var de *DSNError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *DSNError", err)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("error %q does not mention %q", err, tt.wantInErr)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error %q shows a value", err)
			}
		})
	}
}

func TestConfigRedactsToken(t *testing.T) {
	// Shaped like a real token: a JWT.
	const secret = "eyJhbGciOiJFZERTQSJ9.eyJhIjoicnciLCJleHAiOjE5MDAwMDAwMDB9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	cfg, err := ParseDSN("https://h?authToken=" + secret)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		for _, x := range []any{cfg, *cfg, c} {
			if s := fmt.Sprintf(verb, x); strings.Contains(s, secret) {
				t.Errorf("%s of %T leaks the token: %s", verb, x, s)
			}
		}
	}
	for _, dsn := range []string{
		"http://h?authToken=" + secret + "&nope=1",
		"http://h?" + secret,
		"http://h?authToken:" + secret,
		"http://h?authtoken=" + secret,
		"libsql://h?tls=" + secret,
		"http://h?timeout=" + secret,
		"http://h?codec=" + secret,
	} {
		if _, err := ParseDSN(dsn); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("DSN error for %q leaks the token or is nil: %v", dsn, err)
		}
	}
	if b, err := json.Marshal(cfg); err != nil || strings.Contains(string(b), secret) {
		t.Errorf("json.Marshal(Config) = %s, %v", b, err)
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("cfg", "config", cfg)
	if strings.Contains(logged.String(), secret) {
		t.Errorf("slog leaks the token: %s", logged.String())
	}
}

// validDSNs are DSNs of every scheme and parameter, which ParseDSN
// accepts: each survives FormatDSN and ParseDSN unchanged, and FuzzDSN
// starts from them.
var validDSNs = []string{
	"libsql://db.example.com?authToken=x%2By&timeout=3s",
	"http://127.0.0.1:1/p?codec=gojson",
	"https://h",
	"http://h?busyTimeout=0&_pragma=foreign_keys(0)&_pragma=synchronous(NORMAL)",
	"http://h?_busy_timeout=20",
	"http://h?maxWriters=0",
	"http://h?maxWriters=3",
	"http://h?maxWriters=auto",
	"http://h?namespace=a-b&readYourWrites=0&keepStreams=0&replicationWait=1500ms",
	"ws://127.0.0.1:8080",
	"ws://127.0.0.1:8080?sockets=8",
	"ws://127.0.0.1:8080?sockets=conn",
	"http://h?_txlock=immediate",
	"ws://h?_txlock=exclusive&busyTimeout=1s",
	"wss://h/p?authToken=t&codec=protobuf",
	"libsql://h?transport=ws",
	"libsql://h?transport=http&tls=0",
	"libsql://db.example.com?authToken=abc",
	"http://127.0.0.1:8080?codec=gojson&timeout=5s",
	"https://h/p?auth_token=%20x",
	"libsql://h?tls=0",
	"http://[::1]:80",
	"http://h?_pragma=foreign_keys(1)&busyTimeout=1s",
	"http://h?maxWriters=2",
	"ws://h?timeout=1s",
	"wss://h?transport=ws",
	"libsql://h?transport=http",
}

func TestFormatDSNRoundTrip(t *testing.T) {
	for _, dsn := range validDSNs {
		cfg, err := ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		wantRoundTrip(t, dsn, cfg)
	}
}

// wantRoundTrip checks that cfg, which ParseDSN made of dsn, survives
// FormatDSN and ParseDSN unchanged.
func wantRoundTrip(t *testing.T, dsn string, cfg *Config) {
	t.Helper()
	again, err := ParseDSN(cfg.FormatDSN())
	if err != nil {
		t.Fatalf("FormatDSN(%q) = %q does not parse: %v", dsn, cfg.FormatDSN(), err)
	}
	if !reflect.DeepEqual(*again, *cfg) {
		t.Fatalf("round trip of %q: got %+v, want %+v", dsn, *again, *cfg)
	}
}

// FuzzDSN checks that ParseDSN never panics and that every Config it
// accepts survives FormatDSN and ParseDSN unchanged.
func FuzzDSN(f *testing.F) {
	for _, s := range validDSNs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		cfg, err := ParseDSN(dsn)
		if err != nil {
			return
		}
		wantRoundTrip(t, dsn, cfg)
	})
}

// TestWebSocketConfig: a WebSocket Config formats as a ws:// or wss:// DSN,
// a ws:// URL in Config.URL is refused with a pointer to Transport, and the
// Connector refuses what WebSocket cannot take.
func TestWebSocketConfig(t *testing.T) {
	for dsn, want := range map[string]string{
		"ws://127.0.0.1:8080":            "ws://127.0.0.1:8080",
		"libsql://h?transport=ws":        "wss://h",
		"http://h/p?transport=ws":        "ws://h/p",
		"libsql://h?transport=http":      "https://h?transport=http",
		"wss://h?authToken=a&timeout=2s": "wss://h?authToken=a&timeout=2s",
	} {
		cfg, err := ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.FormatDSN(); got != want {
			t.Errorf("FormatDSN of %q = %q, want %q", dsn, got, want)
		}
	}
	cfg := NewConfig()
	cfg.URL = "wss://h"
	if _, err := NewConnector(cfg); err == nil || !strings.Contains(err.Error(), "TransportWS") {
		t.Errorf("a wss:// Config.URL: %v", err)
	}
	cfg.URL, cfg.Transport = "https://h", "carrier-pigeon"
	if _, err := NewConnector(cfg); err == nil {
		t.Error("an unknown Transport was taken")
	}
	cfg.Transport = TransportWS
	c, err := NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewConnector(cfg, WithRoundTripper(http.DefaultTransport)); err == nil || !strings.Contains(err.Error(), "transport=http only") {
		t.Errorf("WithRoundTripper with WebSocket: %v", err)
	}
}

// String shows every field of Config (secrets redacted), so that a Config
// logged while debugging says all that was set.
func TestConfigStringNamesEveryField(t *testing.T) {
	s := Config{}.String()
	typ := reflect.TypeOf(Config{})
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && !strings.Contains(s, f.Name+": ") {
			t.Errorf("Config.String() leaves out %s: %s", f.Name, s)
		}
	}
}

// DSN parameter proxy: none, or a proxy's URL (its password redacted in
// String), anything else refused.
func TestProxyDSN(t *testing.T) {
	for _, tt := range []struct {
		dsn, want, err string
	}{
		{"http://h?proxy=none", ProxyNone, ""},
		{"http://h?proxy=" + "http%3A%2F%2Fu%3Asecret%40proxy%3A3128", "http://u:secret@proxy:3128", ""},
		{"http://h?proxy=socks5%3A%2F%2Fproxy%3A1080", "", "proxy: want none"},
		{"http://h?proxy=http%3A%2F%2Fproxy%3A3128%2Fpath", "", "proxy: want none"},
	} {
		cfg, err := ParseDSN(tt.dsn)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want %q", tt.dsn, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.Proxy != tt.want {
			t.Errorf("%s: %+v, %v", tt.dsn, cfg, err)
			continue
		}
		if again, err := ParseDSN(cfg.FormatDSN()); err != nil || again.Proxy != tt.want {
			t.Errorf("%s: round trip %q, %v", tt.dsn, again.Proxy, err)
		}
		if s := cfg.String(); strings.Contains(s, "secret") {
			t.Errorf("String shows the proxy's password: %s", s)
		}
	}
}
