package embedded

import "github.com/gohrana/libsql/embedded/internal/encrypt"

// ErrEncryptionKey matches (errors.Is) the error of NewConnector when the
// key does not fit the local replica: a wrong key (WithEncryption), no key
// for an encrypted replica, a key for a replica written without one, or
// a key file (the database's path + "-keycheck") that is missing or
// damaged. The message says which. Nothing was read from the replica or
// written to it.
var ErrEncryptionKey = encrypt.ErrKey

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
