package libsql

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultCodec is the codec used when the DSN names none. Protobuf did not
// win every end-to-end workload (docs/dev/PERF.md "Which codec and which
// transport by default"), so it is JSON; codec=auto asks for Protobuf
// where the server offers it.
const DefaultCodec = "direct"

// The transports (Config.Transport).
const (
	// TransportHTTP is Hrana over HTTP: one request per autocommit
	// statement, a server stream per transaction. It is the default.
	TransportHTTP = "http"
	// TransportWS is Hrana over WebSocket: each connection keeps one server
	// stream for its whole life, on a few sockets the Connector's
	// connections share, so the connection state on it (PRAGMAs,
	// last_insert_rowid(), changes()) lasts from one statement to the next.
	TransportWS = "ws"
)

// Config is a parsed DSN. Build one by hand to keep the auth token out of
// URLs, then pass it to NewConnector.
type Config struct {
	// URL is the server's base URL with scheme http or https and no query,
	// e.g. "https://mydb-org.turso.io" or "http://127.0.0.1:8080", whatever
	// the Transport (a ws:// DSN parses to http:// and TransportWS).
	URL string
	// Transport is TransportHTTP (or "", the default) or TransportWS (DSN
	// parameter transport, or a ws:// or wss:// DSN).
	Transport string
	// AuthToken is sent as a Bearer token. It never appears in errors or in
	// the output of String, GoString or fmt's %v and %+v.
	AuthToken string `json:"-"`
	// Codec names the codec: "direct" (JSON, the default), "protobuf"
	// (Hrana 3 over Protobuf; the server must offer /v3-protobuf), "auto"
	// (Protobuf where the server offers it, else direct) or "gojson"
	// (JSON, the baseline; its package must be imported).
	Codec string
	// Timeout bounds each HTTP request to the server (over WebSocket, each
	// request's wait for its answers); 0 means only the caller's context
	// does.
	Timeout time.Duration
	// Compression is "gzip" (ask the server to compress responses), "none",
	// or "" (auto: gzip unless the host is a loopback address or
	// localhost, where compressing costs more time than it saves). It
	// applies to HTTP only: sqld does not compress WebSocket messages.
	Compression string
	// TLSConfig, if set, is used for https (for example a private CA in
	// RootCAs). Certificates are always verified unless the caller's
	// TLSConfig says otherwise.
	TLSConfig *tls.Config `json:"-"`
	// DeferredExec makes Exec inside a transaction return before the
	// server has run the statement: statements are queued and sent together,
	// many per request, when a Query, Commit or Result method needs an
	// answer or the queue is full. A failed statement is then reported late,
	// by the next call on the transaction, and rolls the whole transaction
	// back (docs/GUIDE.md "Deferred execution"). WithDeferredExec overrides
	// it per transaction.
	DeferredExec bool
	// Namespace, if set, names the database on a sqld that serves several
	// (--enable-namespaces): it is sent as the x-namespace header (DSN
	// parameter namespace).
	Namespace string
	// DisableReadYourWrites stops the Connector from keeping the highest
	// replication index its results report and sending it with every
	// request (DSN parameter readYourWrites=0). Through a sqld replica, a
	// read may then miss a write just made (see the README).
	DisableReadYourWrites bool
	// DisableKeptStreams makes every statement outside a transaction open
	// a server stream of its own over HTTP and close it (DSN parameter
	// keepStreams=0), instead of keeping a connection's stream for its next
	// statement: for a server behind a load balancer that does not send a
	// stream's requests to the node that holds it, where a kept stream
	// would be refused, and the statement sent again, every time.
	DisableKeptStreams bool
	// ReplicationWait bounds each request that carries a replication index,
	// which a replica holds until it has applied that frame (DSN parameter
	// replicationWait); 0 means DefaultReplicationWait.
	ReplicationWait time.Duration
	// Pragmas are connection settings, each "name(value)" as in
	// "foreign_keys(1)" or "busy_timeout(5000)", applied on every server
	// stream of every connection (DSN parameter _pragma, repeatable). They
	// ride in the same request as a stream's first statement.
	Pragmas []string
	// BusyTimeout bounds how long an autocommit statement that failed with
	// SQLITE_BUSY (it did not apply) is retried, with backoff, always within
	// the caller's context; 0 turns retries off. NewConfig sets
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxWriters bounds how many autocommit statements that may write the
	// connections of one Connector send at once (DSN parameter
	// maxWriters); the others wait for a slot, within their context.
	// Statements that certainly only read (SELECT, VALUES, EXPLAIN, and
	// WITH without a write) and statements inside transactions are not
	// bounded. 0 means unbounded. MaxWritersAuto, which NewConfig sets,
	// means LoopbackMaxWriters for a server on a loopback address or
	// localhost and unbounded elsewhere: on loopback a round trip is so
	// short that one write at a time loses nothing and keeps sqld from
	// stalling under many writers (docs/dev/RELIABILITY.md has the
	// measurements), while over a real network a bound of n caps the
	// connector at n writes per round trip.
	MaxWriters int
	// TxLock says how BeginTx begins a transaction that may write (DSN
	// parameter _txlock, as in mattn/go-sqlite3 and modernc.org/sqlite):
	// TxLockDeferred (or "", the default) sends BEGIN, which takes the
	// write lock at the first write; TxLockImmediate sends BEGIN
	// IMMEDIATE, which takes it at once, so that a transaction that reads
	// and then writes waits for other writers (within the server's lock
	// timeout and BusyTimeout) instead of failing with SQLITE_BUSY at its
	// first write; TxLockExclusive sends BEGIN EXCLUSIVE. Read-only
	// transactions keep their own BEGIN.
	TxLock string
	// Sockets bounds how many WebSocket sockets the connections of one
	// Connector share (DSN parameter sockets; WebSocket only): each
	// connection's server stream lives on one of them. 0 means
	// DefaultSockets. SocketPerConn (DSN sockets=conn) gives each
	// connection a socket of its own instead, whose answers the goroutine
	// that waits for them reads itself.
	Sockets int
	// Proxy says which proxy the requests go through, over HTTP and
	// WebSocket alike (DSN parameter proxy): "" (the default) follows the
	// environment as net/http does (HTTPS_PROXY for https and wss,
	// HTTP_PROXY for http and ws, NO_PROXY; never for localhost or a
	// loopback address); ProxyNone goes direct; a URL
	// (http://[user:password@]host:port, or https://) is the proxy for
	// every request. WebSocket goes through a proxy by CONNECT; HTTP as
	// net/http does (CONNECT for https). Its password, like the auth
	// token, never appears in String's output.
	Proxy string `json:"-"`
}

// ProxyNone is the Config.Proxy (DSN proxy=none) that goes direct whatever
// the environment says.
const ProxyNone = "none"

// The values of Config.TxLock.
const (
	TxLockDeferred  = "deferred"
	TxLockImmediate = "immediate"
	TxLockExclusive = "exclusive"
)

// SocketPerConn is the Config.Sockets that gives each connection a
// WebSocket socket of its own (DSN sockets=conn).
const SocketPerConn = -1

// maxSockets bounds Config.Sockets.
const maxSockets = 1024

// DefaultSockets is the number of sockets the connections of a Connector
// share over WebSocket when Config.Sockets is 0.
const DefaultSockets = 2

// DefaultBusyTimeout is NewConfig's BusyTimeout, as mattn/go-sqlite3's
// default busy timeout.
const DefaultBusyTimeout = 5 * time.Second

const (
	// MaxWritersAuto is NewConfig's MaxWriters: LoopbackMaxWriters on a
	// loopback host, unbounded elsewhere.
	MaxWritersAuto = -1
	// LoopbackMaxWriters is the bound MaxWritersAuto sets for a server on a
	// loopback address or localhost.
	LoopbackMaxWriters = 1
)

// NewConfig returns a Config with the defaults filled in.
func NewConfig() *Config {
	return &Config{Codec: DefaultCodec, BusyTimeout: DefaultBusyTimeout, MaxWriters: MaxWritersAuto}
}

// ParseDSN parses a data source name:
//
//	libsql://host[:port][/path][?param=value&...]   (HTTPS unless tls=0)
//	https://host[:port][/path][?...]
//	http://host[:port][/path][?...]
//	wss://host[:port][/path][?...]                   (WebSocket over TLS)
//	ws://host[:port][/path][?...]                    (WebSocket)
//
// Parameters (README "DSN reference" says what each does):
//
//	authToken (alias auth_token)   the JWT
//	codec                          direct, protobuf, auto, or gojson once imported
//	transport                      http or ws (not with ws:// and wss://, which mean ws)
//	tls                            libsql:// only: 1/0, true/false
//	timeout                        a Go duration ("10s") or whole seconds
//	compression                    gzip, none or auto
//	busyTimeout (alias _busy_timeout, in ms)
//	maxWriters                     auto, or a whole number (0: no bound)
//	sockets                        WebSocket only: sockets the connections share (0: DefaultSockets), or conn: one per connection
//	_pragma                        name(value), repeatable
//	namespace                      a database of a sqld that serves several
//	readYourWrites                 1/0, true/false
//	keepStreams                    HTTP only: 1/0, true/false
//	replicationWait                a Go duration or whole seconds
//	deferredExec (alias deferred_exec)  1/0, true/false
//	_txlock                        deferred, immediate or exclusive
//
// Unknown parameters are an error that names them (a misspelt one with the
// name it is closest to), without their values.
func ParseDSN(dsn string) (*Config, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Parse quotes the input, which may hold a token.
		return nil, &DSNError{Msg: "not a valid URL"}
	}
	if u.User != nil {
		return nil, &DSNError{Msg: "user information in the URL is not supported; use the authToken parameter or Config.AuthToken"}
	}
	if u.Host == "" {
		return nil, &DSNError{Msg: "missing host"}
	}
	if u.Fragment != "" || u.Opaque != "" {
		return nil, &DSNError{Msg: "unexpected fragment or opaque part"}
	}
	cfg := NewConfig()
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, &DSNError{Msg: "malformed query string"}
	}
	useTLS := -1 // unset
	var unknown []string
	for key, vals := range q {
		p := dsnParamByName(key)
		switch {
		case p == nil:
			unknown = append(unknown, key)
			continue
		case len(vals) != 1 && !p.repeat:
			return nil, &DSNError{Msg: fmt.Sprintf("parameter %q given %d times", key, len(vals))}
		case key == "tls":
			b, err := parseBoolParam(key, vals[0])
			if err != nil {
				return nil, err
			}
			useTLS = 0
			if b {
				useTLS = 1
			}
			continue
		}
		for _, v := range vals {
			if err := p.parse(cfg, key, v); err != nil {
				return nil, err
			}
		}
	}
	if len(unknown) > 0 {
		for i, k := range unknown {
			unknown[i] = describeUnknownParam(k)
		}
		slices.Sort(unknown)
		return nil, &DSNError{Msg: "unknown parameter(s): " + strings.Join(unknown, ", ")}
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "libsql":
		scheme = "https"
		if useTLS == 0 {
			scheme = "http"
		}
	case "https", "http":
		if useTLS >= 0 {
			return nil, &DSNError{Msg: "the tls parameter applies to libsql:// URLs only"}
		}
	case "wss", "ws":
		if useTLS >= 0 {
			return nil, &DSNError{Msg: "the tls parameter applies to libsql:// URLs only"}
		}
		if cfg.Transport == TransportHTTP {
			return nil, &DSNError{Msg: "transport=http contradicts a " + scheme + ":// URL"}
		}
		cfg.Transport = TransportWS
		scheme = "http" + strings.TrimPrefix(scheme, "ws") // ws: http, wss: https
	default:
		return nil, &DSNError{Msg: fmt.Sprintf("unsupported scheme %q; use libsql://, https://, http://, wss:// or ws://", u.Scheme)}
	}
	base := url.URL{Scheme: scheme, Host: u.Host, Path: strings.TrimRight(u.Path, "/")}
	cfg.URL = base.String()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseTimeout reads a Go duration or whole seconds.
func parseTimeout(v string) (time.Duration, error) {
	return parseDuration(v, time.Second, "not a duration")
}

// parseBusyTimeout reads a Go duration or, as mattn/go-sqlite3's
// _busy_timeout, whole milliseconds.
func parseBusyTimeout(v string) (time.Duration, error) {
	return parseDuration(v, time.Millisecond, "not a duration or a number of milliseconds")
}

// parseDuration reads a Go duration or a whole number of units, neither
// negative nor beyond 2^62 ns; notOne is the error for a value that is
// neither.
func parseDuration(v string, unit time.Duration, notOne string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > int64(1<<62)/int64(unit) {
			return 0, fmt.Errorf("out of range")
		}
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New(notOne)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative")
	}
	return d, nil
}

// FormatDSN returns a DSN that ParseDSN turns back into the same Config
// (TLSConfig, which has no DSN form, aside). It includes the auth token.
// A Config of TransportWS gives a ws:// or wss:// DSN.
func (c *Config) FormatDSN() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		u = &url.URL{}
	}
	q := url.Values{}
	switch {
	case c.Transport == TransportWS && (u.Scheme == "http" || u.Scheme == "https"):
		u.Scheme = "ws" + strings.TrimPrefix(u.Scheme, "http")
	case c.Transport != "":
		q.Set("transport", c.Transport)
	}
	for _, p := range dsnParamTable {
		if p.format != nil {
			q[p.names[0]] = p.format(c)
		}
	}
	for k, v := range q {
		if len(v) == 0 {
			delete(q, k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// validate checks a Config built by hand or by ParseDSN.
func (c *Config) validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &DSNError{Msg: "Config.URL must be an http:// or https:// URL with a host (for WebSocket, set Config.Transport to TransportWS)"}
	}
	if c.Transport != "" && c.Transport != TransportHTTP && c.Transport != TransportWS {
		return &DSNError{Msg: "Config.Transport must be TransportHTTP, TransportWS or \"\""}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return &DSNError{Msg: "Config.URL must not carry user information, a query or a fragment"}
	}
	if err := checkProxy(c.Proxy); err != nil {
		return err
	}
	if c.Compression != "" && c.Compression != "gzip" && c.Compression != "none" {
		return &DSNError{Msg: "Config.Compression must be \"gzip\", \"none\" or \"\""}
	}
	if c.Timeout < 0 {
		return &DSNError{Msg: "Config.Timeout must not be negative"}
	}
	if c.ReplicationWait < 0 {
		return &DSNError{Msg: "Config.ReplicationWait must not be negative"}
	}
	if c.BusyTimeout < 0 {
		return &DSNError{Msg: "Config.BusyTimeout must not be negative"}
	}
	if c.Sockets < SocketPerConn || c.Sockets > maxSockets {
		return &DSNError{Msg: fmt.Sprintf("Config.Sockets must be SocketPerConn, or 0 (the default) to %d", maxSockets)}
	}
	switch c.TxLock {
	case "", TxLockDeferred, TxLockImmediate, TxLockExclusive:
	default:
		return &DSNError{Msg: "Config.TxLock must be TxLockDeferred, TxLockImmediate, TxLockExclusive or \"\""}
	}
	if c.MaxWriters < MaxWritersAuto {
		return &DSNError{Msg: "Config.MaxWriters must be MaxWritersAuto, 0 (no bound) or positive"}
	}
	for _, p := range c.Pragmas {
		if _, err := pragmaSQL(p); err != nil {
			return &DSNError{Msg: "Config.Pragmas: " + err.Error()}
		}
	}
	if _, _, err := lookupCodec(c.Codec); err != nil {
		return err
	}
	return nil
}

// String describes the Config with the auth token redacted.
func (c Config) String() string {
	tok := ""
	if c.AuthToken != "" {
		tok = "[REDACTED]"
	}
	return fmt.Sprintf("libsql.Config{URL: %q, Transport: %q, AuthToken: %q, Codec: %q, Timeout: %v, Compression: %q, TLSConfig: %t, DeferredExec: %t, "+
		"Namespace: %q, DisableReadYourWrites: %t, DisableKeptStreams: %t, ReplicationWait: %v, Pragmas: %q, BusyTimeout: %v, MaxWriters: %s, TxLock: %q, Sockets: %d, Proxy: %q}",
		c.URL, c.Transport, tok, c.Codec, c.Timeout, c.Compression, c.TLSConfig != nil, c.DeferredExec,
		c.Namespace, c.DisableReadYourWrites, c.DisableKeptStreams, c.ReplicationWait, c.Pragmas, c.BusyTimeout, maxWritersString(c.MaxWriters), c.TxLock, c.Sockets, redactProxy(c.Proxy))
}

func maxWritersString(n int) string {
	if n == MaxWritersAuto {
		return "auto"
	}
	return strconv.Itoa(n)
}

// GoString is String, so that %#v redacts the token too.
func (c Config) GoString() string { return c.String() }

// Format implements fmt.Formatter so that every verb redacts the token.
func (c Config) Format(f fmt.State, verb rune) {
	_, _ = f.Write([]byte(c.String()))
}

// checkProxy checks a Config.Proxy.
func checkProxy(p string) error {
	if p == "" || p == ProxyNone {
		return nil
	}
	u, err := url.Parse(p)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return &DSNError{Msg: "proxy: want none or a proxy's URL, http://host:port or https://host:port"}
	}
	return nil
}

// redactProxy is a Config.Proxy with its password, if any, redacted.
func redactProxy(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.User == nil {
		return p
	}
	return u.Redacted()
}

// proxyFunc is what the transports ask which proxy a request goes
// through (nil: none), for a checked Config.Proxy.
func proxyFunc(p string) func(*http.Request) (*url.URL, error) {
	switch p {
	case "":
		return http.ProxyFromEnvironment
	case ProxyNone:
		return nil
	}
	u, _ := url.Parse(p)
	return http.ProxyURL(u)
}

// describeUnknownParam names an unknown parameter for an error message and,
// if it looks like a misspelling of a known one, says which.
func describeUnknownParam(k string) string {
	known := closestParam(k)
	switch {
	case known == "":
		return safeParamName(k)
	case strings.EqualFold(k, known):
		// The name is a known one in other letters: safe to show.
		return strconv.Quote(k) + " (did you mean " + strconv.Quote(known) + "? names are case-sensitive)"
	default:
		return safeParamName(k) + " (did you mean " + strconv.Quote(known) + "?)"
	}
}

// closestParam returns the known parameter k most likely means: the same
// name in other letters or with other separators, or one at most two edits
// away; "" if none.
func closestParam(k string) string {
	fold := func(s string) string { return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s)) }
	best, bestDist := "", 3
	for _, p := range dsnParamNames() {
		if strings.EqualFold(k, p) {
			return p
		}
		if fold(k) == fold(p) {
			if bestDist > 0 {
				best, bestDist = p, 0
			}
			continue
		}
		if len(k) < 4 || len(k) > 2*len(p) {
			continue
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(p)); d < bestDist {
			best, bestDist = p, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// safeParamName returns an unknown parameter's name for an error message,
// unless it might be a token typed in the wrong place (too long, or odd
// characters), which is described instead of shown.
func safeParamName(k string) string {
	ok := len(k) <= 32
	for i := 0; ok && i < len(k); i++ {
		c := k[i]
		ok = c == '_' || c == '-' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	lower := strings.ToLower(k)
	if ok && !strings.HasPrefix(lower, "authtoken") && !strings.HasPrefix(lower, "auth_token") || k == "" {
		return strconv.Quote(k)
	}
	return fmt.Sprintf("(a malformed name of %d bytes, not shown)", len(k))
}

// LogValue makes log/slog print the Config with the token redacted.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }
