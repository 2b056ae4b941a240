package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/transport"
	httptransport "github.com/gohrana/libsql/transport/http"
	"github.com/gohrana/libsql/transport/ws"
)

var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)
)

// Connector opens connections to one server. All its connections share one
// HTTP client and connection pool (over WebSocket, a few sockets), and the
// bound on writes in flight (Config.MaxWriters). Use it with sql.OpenDB.
type Connector struct {
	// A pointer, so that printing a *sql.DB by reflection (which cannot
	// call Format on an unexported field) shows an address, not the token.
	cfg       *Config
	transport transport.Transport
	// side is the HTTP transport to the same server that cursors outside
	// transactions run on over WebSocket (session.Conn.SetSideCursors);
	// nil over HTTP.
	side transport.Transport
	// The replication indexes, shared by the connections.
	repl    *session.Replication
	writers *writers // Config.MaxWriters, shared by the connections
	// infinities: the codec carries ±Inf (see checkFloat).
	infinities bool
	tracer     *tracer // WithTracer's; nil: none
}

// ConnectorOption adjusts a Connector beyond its Config: with what keeps
// secrets out of URLs, or replaces a part of the driver.
type ConnectorOption func(*connectorOptions)

// connectorOptions are what the ConnectorOptions set.
type connectorOptions struct {
	headers      http.Header
	roundTripper http.RoundTripper
	tokens       func(context.Context) (string, error)
	tracer       Tracer
}

// WithAuthTokenProvider makes the connector ask tokens for its JWT instead
// of using Config.AuthToken (which must then be empty), for tokens that
// expire: it is called before every HTTP request, and over WebSocket before
// every burst of requests, where a token other than the one a socket said
// hello with goes first in a new hello on that socket, which keeps its
// streams and their transactions. tokens should be cheap (cache a token
// until shortly before it expires) and safe for concurrent use; its error
// fails the statement, which then certainly had no effect. Its tokens never
// appear in errors or logs.
func WithAuthTokenProvider(tokens func(ctx context.Context) (string, error)) ConnectorOption {
	return func(o *connectorOptions) { o.tokens = tokens }
}

// WithRoundTripper makes the connector send its HTTP requests through rt
// instead of its own lean HTTP/1.1 client (for instrumentation or tests, or
// to get what that client leaves out: an *http.Transport brings HTTP/2 and
// proxies). With rt, Config.TLSConfig is not used (configure rt instead),
// and with compression it is up to rt to ask for gzip (http.Transport does).
// It applies to TransportHTTP only; NewConnector refuses it with
// TransportWS.
func WithRoundTripper(rt http.RoundTripper) ConnectorOption {
	return func(o *connectorOptions) { o.roundTripper = rt }
}

// WithRequestHeaders adds headers to every request the connector sends
// (libsql-client-go's WithRequestHeaders; over WebSocket, to each socket's
// handshake). The driver's own Content-Type, Accept-Encoding and
// Authorization override headers of those names. The values never appear
// in errors or logs.
func WithRequestHeaders(h http.Header) ConnectorOption {
	return func(o *connectorOptions) {
		if o.headers == nil {
			o.headers = http.Header{}
		}
		for k, vs := range h {
			for _, v := range vs {
				o.headers.Add(k, v)
			}
		}
	}
}

// EncryptionKeyHeader is the header that carries the key of a Turso
// database encrypted at rest.
const EncryptionKeyHeader = "x-turso-encryption-key"

// WithRemoteEncryptionKey sends key, base64-encoded as Turso issues it, in
// the x-turso-encryption-key header of every request, for databases
// encrypted at rest (libsql-client-go's WithRemoteEncryptionKey). It is not
// a DSN parameter, so that the key stays out of URLs and their logs.
func WithRemoteEncryptionKey(key string) ConnectorOption {
	return WithRequestHeaders(http.Header{http.CanonicalHeaderKey(EncryptionKeyHeader): {key}})
}

// NewConnector validates cfg and returns a Connector. The Config is copied.
func NewConnector(cfg *Config, opts ...ConnectorOption) (*Connector, error) {
	if cfg == nil {
		return nil, &DSNError{Msg: "nil Config"}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var co connectorOptions
	for _, opt := range opts {
		opt(&co)
	}
	if co.tokens != nil && cfg.AuthToken != "" {
		return nil, &DSNError{Msg: "both an auth token and WithAuthTokenProvider; use one"}
	}
	to, err := transportOptions(cfg, &co)
	if err != nil {
		return nil, err
	}
	trc := newTracer(co.tracer, cfg)
	if trc != nil {
		to.TraceFetch = trc.fetch
	}
	newTransport := httptransport.New
	if cfg.Transport == TransportWS {
		if co.roundTripper != nil {
			return nil, errors.New("libsql: WithRoundTripper applies to transport=http only; over WebSocket, Config.Proxy (DSN proxy=) or HTTPS_PROXY route the sockets through a proxy")
		}
		newTransport = ws.New
	}
	tr, err := newTransport(to)
	if err != nil {
		return nil, &DSNError{Msg: err.Error()}
	}
	var side transport.Transport
	if cfg.Transport == TransportWS {
		side = sideTransport(to)
	}
	own := *cfg
	return &Connector{
		cfg:        &own,
		repl:       session.NewReplication(!cfg.DisableReadYourWrites, cfg.ReplicationWait),
		transport:  tr,
		side:       side,
		writers:    newWriters(maxWriters(cfg)),
		infinities: to.Codec.Format() == codec.FormatProtobuf && !to.Fallback,
		tracer:     trc,
	}, nil
}

// sideTransport returns the HTTP transport to the server of the WebSocket
// options o, for side cursors (see session.Conn.SetSideCursors), or nil if
// there can be none.
func sideTransport(o transport.Options) transport.Transport {
	for ws, h := range map[string]string{"ws://": "http://", "wss://": "https://"} {
		if rest, ok := strings.CutPrefix(o.URL, ws); ok {
			o.URL = h + rest
		}
	}
	t, err := httptransport.New(o)
	if err != nil {
		return nil
	}
	return t
}

// transportOptions are the transport's options for cfg and the
// ConnectorOptions.
func transportOptions(cfg *Config, co *connectorOptions) (transport.Options, error) {
	cd, auto, err := lookupCodec(cfg.Codec)
	if err != nil {
		return transport.Options{}, err
	}
	js, _ := codec.Lookup("direct")
	if cd.Format() == codec.FormatJSON {
		js = cd
	}
	if _, ok := cd.(codec.SocketCodec); !ok && cfg.Transport == TransportWS {
		return transport.Options{}, &DSNError{Msg: "codec " + safeParamName(cd.Name()) + " cannot speak Hrana over WebSocket"}
	}
	return transport.Options{
		URL:          cfg.URL,
		AuthToken:    cfg.AuthToken,
		TokenSource:  co.tokens,
		Headers:      co.headers,
		Namespace:    cfg.Namespace,
		TLSConfig:    cfg.TLSConfig,
		Timeout:      cfg.Timeout,
		Codec:        cd,
		JSON:         js,
		Fallback:     auto,
		Compress:     wantCompression(cfg),
		RoundTripper: co.roundTripper,
		Proxy:        proxyFunc(cfg.Proxy),
		Sockets:      cfg.Sockets,
		CloseStreams: cfg.DisableKeptStreams,
	}, nil
}

// Connect returns a new connection. It sends nothing: connections are
// cheap, and the server is first contacted by the first statement or Ping.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cn := newConn(c.transport.NewStream(), c.cfg, c.repl, c.writers, c.infinities, c.tracer.forConn())
	if c.side != nil {
		cn.s.SetSideCursors(c.side)
	}
	return cn, nil
}

// Driver returns the libsql Driver.
func (c *Connector) Driver() driver.Driver { return &Driver{} }

// Close closes idle HTTP connections, or over WebSocket every socket
// (which ends the server streams on them); database/sql calls it from
// DB.Close, once the connections are closed.
func (c *Connector) Close() error {
	if c.side != nil {
		_ = c.side.Close()
	}
	return c.transport.Close()
}

// String describes the connector with the auth token redacted.
func (c *Connector) String() string { return "libsql.Connector{" + c.cfg.String() + "}" }

// GoString is String, so that %#v redacts the token too.
func (c *Connector) GoString() string { return c.String() }

// Format implements fmt.Formatter so that every verb redacts the token.
func (c *Connector) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, c.String()) }

func joinNames(names []string) string { return strings.Join(names, ", ") }

// wantCompression resolves Config.Compression's auto mode: gzip pays off on
// real networks, not on loopback.
func wantCompression(cfg *Config) bool {
	switch cfg.Compression {
	case "gzip":
		return true
	case "none":
		return false
	}
	return !isLoopback(cfg.URL)
}

// maxWriters resolves Config.MaxWriters's auto mode (see there): on
// loopback a bound costs nothing and keeps sqld from stalling.
func maxWriters(cfg *Config) int {
	if cfg.MaxWriters != MaxWritersAuto {
		return cfg.MaxWriters
	}
	if isLoopback(cfg.URL) {
		return LoopbackMaxWriters
	}
	return 0
}

// isLoopback reports whether the URL's host is localhost or a loopback
// address.
func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
