package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/replica"
	"github.com/gohrana/libsql/embedded/internal/replog"
)

// Replicated is what a Sync did.
type Replicated struct {
	// FrameNo is the last frame of the primary's log the local file has
	// applied: the replication index it is at.
	FrameNo uint64
	// FramesSynced is how many frames this Sync applied.
	FramesSynced int
}

// Connector opens connections that read a local replica of a libSQL
// primary and write to the primary. Use it with sql.OpenDB; close it
// after the *sql.DB.
type Connector struct {
	opts    options
	primary *libsql.Connector
	repl    *replica.Replicator
	client  *replog.Client // the replication log's, for its byte count
	local   *local
	key     *encrypt.Key // nil: the replica is in the clear
	log     *slog.Logger

	// With offline writes (WithOfflineWrites): the local writing side, and
	// the pool its pushes use on the primary.
	off    *offline
	pushDB *sql.DB

	// wrote is the Replicator's sync count when the last write through
	// the Connector ended: read-your-writes waits for a later sync.
	wrote atomic.Uint64

	kick     chan struct{} // asks the background loop for a sync now
	stop     chan struct{}
	done     chan struct{}
	closeMu  sync.Once
	closeErr error
}

var _ driver.Connector = (*Connector)(nil)

// NewConnector opens (or creates) the local replica at dbPath of the
// primary at primaryURL, any DSN the driver takes (libsql://, https://,
// http://, wss://, ws://, with parameters such as authToken, namespace,
// codec or timeout), and starts the background sync. It sends nothing
// itself: a new replica is empty until its first sync (call Sync before
// reading, or wait for the background one).
func NewConnector(dbPath, primaryURL string, opts ...Option) (*Connector, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if dbPath == "" {
		return nil, errors.New("embedded: no local database path")
	}
	path, err := filepath.Abs(dbPath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	cfg, err := libsql.ParseDSN(primaryURL)
	if err != nil {
		return nil, err
	}
	if o.authToken != nil {
		cfg.AuthToken = *o.authToken
	}
	if o.timeoutSet || cfg.Timeout == 0 {
		cfg.Timeout = o.timeout
	}
	if o.tls != nil {
		cfg.TLSConfig = o.tls
	}
	cfg.DisableReadYourWrites = false // the Connector needs the index
	// The key is checked against the file before anything opens it.
	key, err := encrypt.Load(path, o.encKey, o.encrypted)
	if err != nil {
		return nil, err
	}
	primary, err := libsql.NewConnector(cfg, o.primary...)
	if err != nil {
		key.Close()
		return nil, err
	}

	log := o.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := replog.NewClient(replog.Config{
		URL:       cfg.URL,
		AuthToken: cfg.AuthToken,
		Namespace: cfg.Namespace,
		Client:    replicationClient(cfg),
		Timeout:   cfg.Timeout,
	})
	c := &Connector{opts: o, primary: primary, client: client, key: key, log: log,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	ctx := context.Background()
	// The writing side opens first: it sets the file's WAL mode.
	c.local = &local{path: path, key: key}
	var readers replica.Readers = c.local
	if o.offline {
		c.off = &offline{path: path, full: o.syncFull, handler: o.conflicts, key: key}
		readers = readerPair{c.local, c.off}
	}
	c.repl, err = replica.Open(ctx, replica.Config{Path: path, Client: client, Logger: log, Readers: readers, Key: key})
	if err != nil {
		primary.Close()
		key.Close()
		return nil, err
	}
	if c.off != nil {
		if err := c.off.open(ctx); err != nil {
			c.off.close()
			c.repl.Close()
			primary.Close()
			key.Close()
			return nil, err
		}
		c.pushDB = sql.OpenDB(keepOpen{primary})
	}
	if err := c.local.Attach(); err != nil {
		c.repl.Close()
		primary.Close()
		key.Close()
		return nil, err
	}
	go c.loop()
	return c, nil
}

// replicationClient returns the HTTP/1.1 client of the replication calls,
// with the TLS settings of the primary's Config.
func replicationClient(cfg *libsql.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ForceAttemptHTTP2 = false
	t.MaxIdleConnsPerHost = 2
	if cfg.TLSConfig != nil {
		t.TLSClientConfig = cfg.TLSConfig.Clone()
	}
	return &http.Client{Transport: t}
}

// Connect returns a new connection. It sends nothing.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	select {
	case <-c.stop:
		return nil, ErrClosed
	default:
	}
	p, err := c.primary.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, primary: p}, nil
}

// Driver returns a driver whose Open refuses: an embedded replica is
// opened with NewConnector and sql.OpenDB, not by a DSN.
func (c *Connector) Driver() driver.Driver { return noDSN{} }

type noDSN struct{}

func (noDSN) Open(string) (driver.Conn, error) {
	return nil, errors.New("embedded: open a replica with embedded.NewConnector and sql.OpenDB")
}

// Sync applies what the primary has beyond the local file now, and waits
// for a background sync in progress first. It fails if the primary cannot
// be reached; the local file is then as it was.
func (c *Connector) Sync(ctx context.Context) (Replicated, error) {
	select {
	case <-c.stop:
		return Replicated{}, ErrClosed
	default:
	}
	if c.off != nil {
		return c.offlineSync(ctx)
	}
	res, err := c.repl.Sync(ctx)
	return Replicated{FrameNo: res.FrameNo, FramesSynced: res.Frames}, err
}

// Close stops the background sync and closes the local file and the
// connections to the primary. Close the *sql.DB first.
func (c *Connector) Close() error {
	c.closeMu.Do(func() {
		close(c.stop)
		<-c.done
		var offErr error
		if c.off != nil {
			// Before the file's other connections close: see offline.close.
			offErr = errors.Join(c.off.close(), c.pushDB.Close())
		}
		c.closeErr = errors.Join(offErr, c.local.Close(), c.repl.Close(), c.primary.Close())
		c.client.CloseIdleConnections()
		c.key.Close()
	})
	return c.closeErr
}

// loop syncs at the interval, and whenever a read waits for a write.
func (c *Connector) loop() {
	defer close(c.done)
	var tick <-chan time.Time
	if c.opts.syncInterval > 0 {
		t := time.NewTicker(c.opts.syncInterval)
		defer t.Stop()
		tick = t.C
		c.syncOnce() // a new Connector starts in step
	}
	for {
		select {
		case <-c.stop:
			return
		case <-tick:
		case <-c.kick:
		}
		c.syncOnce()
	}
}

func (c *Connector) syncOnce() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, _ = c.Sync(ctx) // failures are logged; the next tick retries
}

// wroteNow records that a write through the Connector has ended.
func (c *Connector) wroteNow() {
	if c.opts.ryw {
		c.wrote.Store(c.repl.Started() + 1)
	}
}

// readYourWrites waits, within ctx and the read-your-writes bound, until
// the local file has applied every write made through the Connector: until
// a sync that began after the last write ended has succeeded. Such a sync
// has applied the primary's log up to its end, so past the replication
// index the write reported; and it stays right when the primary's log was
// reset and its indexes started over, which comparing indexes cannot tell.
func (c *Connector) readYourWrites(ctx context.Context) error {
	need := c.wrote.Load()
	if !c.opts.ryw || need == 0 {
		return nil
	}
	synced, changed := c.repl.Synced()
	if synced >= need {
		return nil
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
	timer := time.NewTimer(c.opts.rywWait)
	defer timer.Stop()
	for {
		select {
		case <-changed:
		case <-timer.C:
			return c.notReplicated(fmt.Errorf("not within %v", c.opts.rywWait))
		case <-ctx.Done():
			return c.notReplicated(ctx.Err())
		}
		if synced, changed = c.repl.Synced(); synced >= need {
			return nil
		}
	}
}

func (c *Connector) notReplicated(why error) error {
	next, _ := c.repl.Applied()
	return &NotReplicatedError{Want: c.primary.ReplicationIndex(), Applied: applied(next), Err: why}
}

// applied is the last applied frame for a next frame_no.
func applied(next uint64) uint64 {
	if next == 0 {
		return 0
	}
	return next - 1
}

// ReplicationIndex returns the highest replication index the primary
// reported for the Connector's statements (0: none yet). Pass it to
// libsql.WithReplicationIndex to carry read-your-writes to another
// process that reads through a sqld replica.
func (c *Connector) ReplicationIndex() uint64 { return c.primary.ReplicationIndex() }

// keepOpen is the primary's Connector for the push pool, whose Close
// must leave the Connector open.
type keepOpen struct{ driver.Connector }

// readerPair detaches and attaches two sides of the file.
type readerPair struct{ a, b replica.Readers }

func (p readerPair) Detach(ctx context.Context) error {
	if err := p.a.Detach(ctx); err != nil {
		return err
	}
	if err := p.b.Detach(ctx); err != nil {
		return errors.Join(err, p.a.Attach())
	}
	return nil
}

func (p readerPair) Attach() error { return errors.Join(p.a.Attach(), p.b.Attach()) }
