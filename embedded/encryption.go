package embedded

import (
	"errors"

	"github.com/gohrana/libsql/embedded/internal/encrypt"
)

// ErrEncryptionKey matches (errors.Is) the error of NewConnector when the
// key does not fit the local replica: a wrong key (WithEncryption), no key
// for an encrypted replica, a key for a replica written without one, or
// a key file (the database's path + "-keycheck") that is missing or
// damaged. The message says which. Nothing was read from the replica or
// written to it.
var ErrEncryptionKey = encrypt.ErrKey

// ErrOfflineEncryption is the error of NewConnector given both
// WithOfflineWrites and WithEncryption: offline writes keep the
// primary's version of the pages they change by reading the database and
// its WAL as files, which encryption would have to cover too; until it
// does, the two are refused together rather than leave pages in the clear.
var ErrOfflineEncryption = errors.New("embedded: WithOfflineWrites and WithEncryption cannot be used together yet")

// WithEncryption encrypts the local replica at rest under a key derived
// from key (go-libsql's option of the same name): the database, its WAL
// and the files a sync writes beside it (snapshot spools, the file built
// after a reset of the primary's log) hold no data of the primary in the
// clear, and SQLite's temporary tables stay in memory. The key must be
// the same at every open: a wrong key, no key for an encrypted replica,
// and a key for one written without encryption fail NewConnector with an
// error that matches ErrEncryptionKey. See docs/EMBEDDED.md for what is
// protected and what is not.
func WithEncryption(key string) Option {
	return func(o *options) { o.encKey, o.encrypted = key, true }
}
