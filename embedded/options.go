package embedded

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/gohrana/libsql"
)

// Defaults.
const (
	// DefaultSyncInterval is how often the Connector syncs in the
	// background unless WithSyncInterval says otherwise.
	DefaultSyncInterval = time.Second
	// DefaultReadYourWritesWait bounds how long a local read waits for
	// the local file to apply a write made through the Connector (within
	// the read's context), unless WithReadYourWritesWait says otherwise.
	DefaultReadYourWritesWait = 5 * time.Second
	// DefaultRequestTimeout bounds each request to the primary (a
	// statement, a hello, a batch of frames) unless WithRequestTimeout
	// says otherwise. Snapshots are bounded by their context only.
	DefaultRequestTimeout = 30 * time.Second
)

// An Option adjusts a Connector.
type Option func(*options)

type options struct {
	authToken    *string
	syncInterval time.Duration
	ryw          bool
	rywWait      time.Duration
	timeout      time.Duration
	timeoutSet   bool
	logger       *slog.Logger
	tls          *tls.Config
	primary      []libsql.ConnectorOption
	encKey       string
	encrypted    bool
	offline      bool
	syncFull     bool
	conflicts    func(Conflict)
}

func defaultOptions() options {
	return options{
		syncInterval: DefaultSyncInterval,
		ryw:          true,
		rywWait:      DefaultReadYourWritesWait,
		timeout:      DefaultRequestTimeout,
	}
}

// WithAuthToken sets the JWT sent to the primary, for statements and for
// replication; it replaces an authToken in the primary's DSN.
func WithAuthToken(token string) Option {
	return func(o *options) { o.authToken = &token }
}

// WithSyncInterval sets how often the Connector syncs in the background
// (DefaultSyncInterval if not given). 0 turns the background syncs off:
// the file then moves only on Sync and on the waits of read-your-writes.
func WithSyncInterval(d time.Duration) Option {
	return func(o *options) { o.syncInterval = max(d, 0) }
}

// WithReadYourWrites turns read-your-writes on (the default) or off. On,
// a local read after a write made through the Connector waits until the
// local file has applied it. Off, a read may miss a write just made until
// the next sync.
func WithReadYourWrites(on bool) Option {
	return func(o *options) { o.ryw = on }
}

// WithReadYourWritesWait bounds how long a local read waits for a write
// to be applied (DefaultReadYourWritesWait if not given or not positive);
// past it the read fails with ErrNotReplicated.
func WithReadYourWritesWait(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.rywWait = d
		}
	}
}

// WithRequestTimeout bounds each request to the primary (0 leaves only
// the context). It replaces a timeout in the primary's DSN; without
// either, DefaultRequestTimeout applies.
func WithRequestTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout, o.timeoutSet = max(d, 0), true }
}

// WithLogger makes the Connector report its syncs to l: each sync that
// applied frames at Info, each batch at Debug, failures at Warn, a
// snapshot, a reset log and a file swap at Info or Warn. By default it
// logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithTLSConfig sets the TLS configuration for an https or wss primary
// (a private CA, for example), for statements and replication alike.
func WithTLSConfig(c *tls.Config) Option {
	return func(o *options) { o.tls = c }
}

// WithPrimaryOptions passes options to the driver's Connector of the
// primary (libsql.NewConnector): libsql.WithTracer to trace the statements
// and requests that go to the primary, libsql.WithAuthTokenProvider for
// tokens that expire (used for statements; replication uses the DSN's or
// WithAuthToken's token). Local reads are not traced.
func WithPrimaryOptions(opts ...libsql.ConnectorOption) Option {
	return func(o *options) { o.primary = append(o.primary, opts...) }
}

// WithOfflineWrites makes every write and every transaction run on the
// local file at once, visible to the next local read, whether or not the
// primary is reachable; each sync (Sync and the background one) first
// pushes the local transactions not yet on the primary, in the order they
// committed, each applied there exactly once or reported as a Conflict,
// then pulls the primary's log, after which the local file is the
// primary's state. docs/EMBEDDED.md tells the rules of replay.
func WithOfflineWrites() Option {
	return func(o *options) { o.offline = true }
}

// WithConflictHandler sets the function told of each local transaction
// the primary refused (offline writes). It is called during the sync that
// found the conflict, in the order of the transactions, before the local
// file drops them; it must not write through the Connector nor call Sync.
// A crash right after it may have it told of the same conflict again.
func WithConflictHandler(f func(Conflict)) Option {
	return func(o *options) { o.conflicts = f }
}

// WithSynchronousFull makes local writes (offline writes) commit with
// SQLite's synchronous=FULL: a power loss then takes back no committed
// local transaction, for an fsync at each commit. The default, NORMAL,
// survives any crash of the process; a power loss may take back the
// transactions committed since the last sync of the WAL to disk, each
// with its queue entry (never one without the other).
func WithSynchronousFull() Option {
	return func(o *options) { o.syncFull = true }
}
