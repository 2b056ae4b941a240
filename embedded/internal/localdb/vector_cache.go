package localdb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"sync"

	"github.com/gohrana/libsql/embedded/internal/vector"
	"modernc.org/sqlite"
)

// vector_top_k over a FLOAT32 index searches the index's rows decoded
// once into a vector.Matrix, kept while the file stays at the position
// it was read at: an exact search then computes each distance from
// floats in memory instead of calling vector_distance_* through SQLite
// for each row (an order of magnitude faster; docs/dev/PERF.md).
//
// What a cached index answers for is exactly what the SQL scan would read:
// the key is the file, the index's definition and the file's version in
// the statement's own snapshot (snapshotVersion).

// topKCacheLimit bounds the memory of all cached indexes together; an
// index larger than that is searched through SQLite.
const topKCacheLimit = 64 << 20

type topKCacheKey struct {
	file  string // the main database's path
	index string
}

type topKEntry struct {
	version fileVersion
	ix      vectorIndex
	ready   chan struct{} // closed once keys and rows are set
	keys    []any
	rows    *vector.Matrix // nil: not cacheable (a row the scan must judge)
}

// topKCache holds the decoded indexes, the most recently used last.
type topKCache struct {
	mu      sync.Mutex
	entries map[topKCacheKey]*topKEntry
	order   []topKCacheKey
	bytes   int
}

var topKIndexes = &topKCache{entries: map[topKCacheKey]*topKEntry{}}

// QueueTable is the local table of an embedded replica's offline writes:
// each local transaction adds a row to it, with a greater id than any
// before, in the same SQLite transaction, and only a restore (with the
// primary's next commit) removes them.
const QueueTable = "libsql_offline_queue"

// fileVersion tells the states of a replica file apart: the position
// stamped in page 1, which every commit applied from the primary rewrites
// (File.apply stamps page 1 in the same transaction), and the last local
// transaction of offline writes (0 without any).
type fileVersion struct {
	stamp [stampLen]byte
	local int64
}

// snapshotVersion reads the file's version in conn's current snapshot
// (within the calling statement's read transaction).
func snapshotVersion(ctx context.Context, conn sqlite.ExecQuerierContext) (fileVersion, error) {
	var v fileVersion
	rows, err := query(ctx, conn, "SELECT (SELECT data FROM sqlite_dbpage('main') WHERE pgno = 1), "+
		"(SELECT count(*) FROM main.sqlite_schema WHERE type = 'table' AND name = ?)", QueueTable)
	if err != nil {
		return v, err
	}
	p, _ := rows[0][0].([]byte)
	if len(p) < stampOff+stampLen {
		return v, fmt.Errorf("localdb: page 1 is %d bytes", len(p))
	}
	copy(v.stamp[:], p[stampOff:])
	if n, _ := rows[0][1].(int64); n > 0 {
		if rows, err = query(ctx, conn, "SELECT coalesce(max(rowid), 0) FROM main."+QueueTable); err != nil {
			return v, err
		}
		v.local, _ = rows[0][0].(int64)
	}
	return v, nil
}

// rows returns the decoded rows of ix on conn's file, reading them if the
// cache has none at this snapshot; nil if the index is not one the cache
// serves, or rows of it are not FLOAT32 vectors of its length.
func (c *topKCache) rows(ctx context.Context, conn sqlite.ExecQuerierContext, file string, ix *vectorIndex) (*topKEntry, error) {
	if ix.typ != vector.Float32 || file == "" {
		return nil, nil
	}
	version, err := snapshotVersion(ctx, conn)
	if err != nil {
		return nil, err
	}
	key := topKCacheKey{file, ix.name}
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && (e.version != version || e.ix != *ix) {
		c.dropLocked(key)
		e = nil
	}
	if e != nil {
		c.touchLocked(key)
		c.mu.Unlock()
		select {
		case <-e.ready:
			return e, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e = &topKEntry{version: version, ix: *ix, ready: make(chan struct{})}
	c.entries[key] = e
	c.order = append(c.order, key)
	c.mu.Unlock()

	keys, m, err := ix.load(ctx, conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || m == nil || m.Bytes() > topKCacheLimit {
		// Nothing to keep: the scan reads the rows through SQLite (and
		// reports a row it cannot search as it would have anyway).
		if c.entries[key] == e {
			c.dropLocked(key)
		}
		close(e.ready)
		return nil, nil
	}
	e.keys, e.rows = keys, m
	close(e.ready)
	if c.entries[key] == e {
		c.bytes += m.Bytes()
		for c.bytes > topKCacheLimit && len(c.order) > 1 {
			c.dropLocked(c.order[0])
		}
	}
	return e, nil
}

func (c *topKCache) touchLocked(key topKCacheKey) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

func (c *topKCache) dropLocked(key topKCacheKey) {
	e := c.entries[key]
	if e == nil {
		return
	}
	delete(c.entries, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
	if e.rows != nil {
		c.bytes -= e.rows.Bytes()
	}
}

// load reads the keys and vectors of the rows ix holds, in the order the
// SQL scan reads them; a nil Matrix if a row is not a FLOAT32 vector of
// the index's length (the SQL scan then fails on it as libSQL would).
func (ix *vectorIndex) load(ctx context.Context, conn sqlite.ExecQuerierContext) ([]any, *vector.Matrix, error) {
	rows, err := conn.QueryContext(ctx, ix.scanSQL(ix.column), nil)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var keys []any
	m := vector.NewMatrix(ix.dims, 0)
	dest := make([]driver.Value, 2)
	for {
		if err := rows.Next(dest); err == io.EOF {
			return keys, m, nil
		} else if err != nil {
			return nil, nil, err
		}
		b, _ := dest[1].([]byte)
		v, ok := vector.View(b, vector.Float32, ix.dims)
		if !ok {
			return nil, nil, nil
		}
		m.Append(v)
		keys = append(keys, dest[0])
		if m.Bytes() > topKCacheLimit {
			return nil, nil, nil
		}
	}
}

// search is scan over a cached index's rows.
func (e *topKEntry) search(q *vector.Vector, k int) []any {
	k = min(k, e.ix.limit)
	if k == 0 {
		return nil
	}
	dist := make([]float32, e.rows.Len())
	e.rows.Distances(e.ix.metric, q, dist)
	best := &nearest{k: k}
	for i, d := range dist {
		best.offer(candidate{dist: d, seq: i, key: e.keys[i]})
	}
	return best.sorted()
}
