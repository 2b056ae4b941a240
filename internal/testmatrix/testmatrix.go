// Package testmatrix names the ways the driver reaches sqld that the
// integration tests (itest) and the tool examples (examples/*) run with:
// every codec over every transport. Both take the list and the DSNs from
// here, so that they cover the same variants under the same names.
//
// (The package is not called variant so that variant stays free as the
// name of a variable holding one.)
package testmatrix

import (
	"fmt"
	"strings"
)

// A Transport is how requests reach the server: the DSN's scheme.
type Transport string

const (
	// HTTP is Hrana over HTTP (http:// and https:// DSNs), the driver's
	// default.
	HTTP Transport = "http"
	// WebSocket is Hrana over WebSocket (ws:// and wss:// DSNs).
	WebSocket Transport = "ws"
)

// Transports and Codecs span the matrix, in the order the variants run.
// The codecs are the values of the DSN parameter codec= that name one
// encoding ("auto", which picks one of them, is not in the matrix).
var (
	Transports = []Transport{HTTP, WebSocket}
	Codecs     = []string{"direct", "gojson", "protobuf"}
)

// A Variant is one codec over one transport.
type Variant struct {
	// Name identifies the variant in subtest and table names: the codec
	// ("direct") over HTTP, "ws_" and the codec ("ws_direct") over
	// WebSocket.
	Name      string
	Transport Transport
	Codec     string // the DSN's codec= parameter
}

// wsPrefix starts the name of a variant over WebSocket.
const wsPrefix = "ws_"

// New returns the variant of codec over transport. It panics if the
// transport is neither HTTP nor WebSocket.
func New(transport Transport, codec string) Variant {
	switch transport {
	case HTTP:
		return Variant{Name: codec, Transport: HTTP, Codec: codec}
	case WebSocket:
		return Variant{Name: wsPrefix + codec, Transport: WebSocket, Codec: codec}
	}
	panic(fmt.Sprintf("testmatrix: unknown transport %q (want %q or %q)", transport, HTTP, WebSocket))
}

// Named returns the variant called name: "ws_" and a codec is the codec
// over WebSocket, any other name the codec of that name over HTTP.
func Named(name string) Variant {
	if codec, ok := strings.CutPrefix(name, wsPrefix); ok {
		return New(WebSocket, codec)
	}
	return New(HTTP, name)
}

// Matrix returns every codec over every transport, transport by transport.
func Matrix(transports []Transport, codecs []string) []Variant {
	vs := make([]Variant, 0, len(transports)*len(codecs))
	for _, tr := range transports {
		for _, c := range codecs {
			vs = append(vs, New(tr, c))
		}
	}
	return vs
}

// All returns the whole matrix: Matrix(Transports, Codecs).
func All() []Variant { return Matrix(Transports, Codecs) }

// String returns the variant's name.
func (v Variant) String() string { return v.Name }

// WS reports whether the variant runs over WebSocket.
func (v Variant) WS() bool { return v.Transport == WebSocket }

// DSN returns the variant's DSN for the server at baseURL (http:// or
// https://, perhaps with a path or a query): the same URL, with ws:// or
// wss:// over WebSocket, and the query parameter codec= followed by the
// extra "key=value" params, as given.
func (v Variant) DSN(baseURL string, params ...string) string {
	if v.WS() {
		if rest, ok := strings.CutPrefix(baseURL, "http://"); ok {
			baseURL = "ws://" + rest
		} else if rest, ok := strings.CutPrefix(baseURL, "https://"); ok {
			baseURL = "wss://" + rest
		}
	}
	sep := "?"
	if strings.Contains(baseURL, "?") {
		sep = "&"
	}
	return baseURL + sep + strings.Join(append([]string{"codec=" + v.Codec}, params...), "&")
}
