package embedded

import (
	"context"
	"database/sql"
	"sync"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
	"github.com/gohrana/libsql/embedded/internal/localdb"
)

// maxLocalReaders bounds the connections reading the local file at once.
const maxLocalReaders = 16

// local is the reading side of the local file: a pool of read-only
// connections, and the gate a file swap closes (replica.Readers). Every
// local read holds a reference from its start to its rows' Close, so that
// a swap waits for the reads in flight and none straddles two files.
type local struct {
	path string
	key  *encrypt.Key // nil: the file is in the clear

	mu       sync.Mutex
	db       *sql.DB       // nil while detached
	inflight int           // reads holding a reference
	drained  chan struct{} // while detaching: closed when inflight is 0
	gate     chan struct{} // while detaching or detached: closed on Attach
	closed   bool
}

func (l *local) open() (*sql.DB, error) {
	return localdb.OpenReaders(l.path, maxLocalReaders, l.key)
}

// acquire returns the pool for one read and the func that ends the read.
// During a swap it waits, within ctx, for the new file.
func (l *local) acquire(ctx context.Context) (*sql.DB, func(), error) {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, nil, ErrClosed
		}
		if l.gate == nil {
			l.inflight++
			db := l.db
			l.mu.Unlock()
			return db, l.release, nil
		}
		gate := l.gate
		l.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func (l *local) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	if l.inflight == 0 && l.drained != nil {
		close(l.drained)
		l.drained = nil
	}
}

// Detach implements replica.Readers.
func (l *local) Detach(ctx context.Context) error {
	l.mu.Lock()
	l.gate = make(chan struct{})
	var drained chan struct{}
	if l.inflight > 0 {
		drained = make(chan struct{})
		l.drained = drained
	}
	l.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-ctx.Done():
			l.mu.Lock()
			l.drained = nil
			close(l.gate)
			l.gate = nil
			l.mu.Unlock()
			return ctx.Err()
		}
	}
	l.mu.Lock()
	db := l.db
	l.db = nil
	l.mu.Unlock()
	if db != nil {
		return db.Close()
	}
	return nil
}

// Attach implements replica.Readers.
func (l *local) Attach() error {
	db, err := l.open()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.db = db
	}
	if l.gate != nil {
		close(l.gate)
		l.gate = nil
	}
	return err
}

// Close closes the pool; reads in flight fail.
func (l *local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.db == nil {
		return nil
	}
	return l.db.Close()
}
