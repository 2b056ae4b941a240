package localdb

import (
	"database/sql"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// DriverName is the database/sql driver of every connection to a local
// replica file: modernc.org/sqlite, registered under a name of its own so
// that what it registers reaches the replica's connections and no other
// connection of the program.
const DriverName = "libsql-embedded-sqlite"

// errVectorIndex is what the stand-in for libsql_vector_idx returns if it
// is ever called: the replica sends SQL naming it to the primary.
var errVectorIndex = errors.New("libsql_vector_idx: libSQL's vector index is not maintained by the local file")

func init() {
	d := &sqlite.Driver{}
	// A libSQL vector index is, to vanilla SQLite, an index on the
	// expression libsql_vector_idx(col); libSQL keeps that b-tree empty
	// (the index lives in shadow tables), so any plan that used it would
	// see no rows: SELECT count(*) would answer 0. SQLite refuses
	// non-deterministic functions in index expressions, so with this
	// stand-in registered as non-deterministic the index fails to load
	// and no plan can pick it (the schema loads without it: see
	// schemaPragmas, and reloadSchema for a connection's first load). SQL
	// that names the function goes to the primary.
	d.MustRegisterScalarFunction("libsql_vector_idx", -1, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return nil, errVectorIndex
	})
	registerVector(d)
	replicaDriver = topKDriver{d}
	sql.Register(DriverName, replicaDriver)
}

// replicaDriver is the driver registered as DriverName.
var replicaDriver topKDriver

// schemaPragmas are set on every connection to a local file.
// writable_schema lets SQLite load the rest of a schema in which an
// object fails to load (libSQL's RANDOM ROWID table option, a vector
// index) instead of failing every statement with "malformed database
// schema"; the connections never write the schema (readers are
// query_only, the File writes pages through sqlite_dbpage only, and the
// offline writer runs what writable_schema would change under Strict).
var schemaPragmas = []string{"writable_schema(1)"}

// openDB opens path with the replica's driver, the schema pragmas and
// pragmas, each "name(value)".
func openDB(path string, pragmas ...string) (*sql.DB, error) {
	return openKeyDB(path, nil, pragmas...)
}

// openKeyDB is openDB through the encrypting VFS under key (nil: the
// default VFS, in the clear). An encrypted file keeps SQLite's temporary
// tables and indexes in memory (the VFS would encipher them, at a cost).
func openKeyDB(path string, key *encrypt.Key, pragmas ...string) (*sql.DB, error) {
	dsn, err := keyDSN(path, key, pragmas...)
	if err != nil {
		return nil, err
	}
	return sql.Open(DriverName, dsn)
}

// keyDSN is the DSN of openKeyDB.
func keyDSN(path string, key *encrypt.Key, pragmas ...string) (string, error) {
	dsn := DSN(path, append(append([]string(nil), schemaPragmas...), pragmas...)...)
	if key != nil {
		if err := encrypt.Register(); err != nil {
			return "", err
		}
		dsn += "&vfs=" + encrypt.VFSName + "&" + key.URIParam() + "&_pragma=temp_store(MEMORY)"
	}
	return dsn, nil
}

// readerPragmas are set on the connections that serve local reads. The
// file is read through a memory map (up to 1 GiB): a scan of a table
// larger than the page cache (vector_top_k's exact search, an ORDER BY
// vector_distance_cos) then reads the OS's pages in place instead of one
// pread syscall per page on every pass.
var readerPragmas = []string{"query_only(1)", "busy_timeout(5000)", "mmap_size(1073741824)"}

// OpenReaders opens the read-only pool of connections that serve local
// reads of the file at path, at most max at once, under key (nil: a file
// in the clear).
func OpenReaders(path string, max int, key *encrypt.Key) (*sql.DB, error) {
	db, err := openKeyDB(path, key, readerPragmas...)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(max)
	db.SetMaxIdleConns(max)
	return db, nil
}
