package libsql

import (
	"context"
	"database/sql"
	"errors"

	"github.com/gohrana/libsql/internal/session"
)

// DefaultReplicationWait is how long a request that carries a replication
// index may take when Config.ReplicationWait is 0.
const DefaultReplicationWait = session.DefaultReplicationWait

// ErrReplicationWait is matched (errors.Is) by the error of a request that
// carried a replication index and had no answer within
// Config.ReplicationWait: the replica had not applied that frame of its
// primary's log (the primary may be down, or its log was reset). The
// Connector then forgets the index, so later requests do not wait for it.
var ErrReplicationWait = session.ErrReplicationWait

// WithReplicationIndex returns a context whose statements carry at least
// replication index idx: a sqld replica runs them only once it has applied
// that frame. Use it to carry read-your-writes from one process to another,
// with an index read by ReplicationIndex or Connector.ReplicationIndex in
// the process that wrote. It works with read-your-writes turned off too.
func WithReplicationIndex(ctx context.Context, idx uint64) context.Context {
	return session.WithReplicationIndex(ctx, idx)
}

// ReplicationIndex returns the highest replication index that the results
// of the Connector's connections have reported (0: none, or
// read-your-writes is off). A reader elsewhere that passes it to
// WithReplicationIndex sees every write this Connector had made when it was
// read.
func (c *Connector) ReplicationIndex() uint64 { return c.repl.Index() }

// ReplicationIndex returns the Connector's replication index (see
// Connector.ReplicationIndex) for a *sql.DB opened with this driver, by way
// of one of its connections.
func ReplicationIndex(ctx context.Context, db *sql.DB) (uint64, error) {
	sc, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	var idx uint64
	err = sc.Raw(func(dc any) error {
		c, ok := dc.(*conn)
		if !ok {
			return errors.New("libsql: ReplicationIndex: not a libsql connection")
		}
		if c.repl != nil {
			idx = c.repl.Index()
		}
		return nil
	})
	return idx, err
}
