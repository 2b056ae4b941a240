// Package embedded is an embedded replica of a libSQL database in pure Go:
// reads run on a local SQLite file (modernc.org/sqlite) in microseconds,
// writes and transactions go to the primary (sqld or Turso) through the
// github.com/gohrana/libsql driver, and the local file follows the
// primary's replication log, in the background and after each write.
//
//	c, err := embedded.NewConnector("/var/lib/app/replica.db", "libsql://mydb-org.turso.io",
//		embedded.WithAuthToken(token))
//	if err != nil { ... }
//	defer c.Close()
//	db := sql.OpenDB(c)
//	defer db.Close()
//	if _, err := c.Sync(ctx); err != nil { ... } // a new replica starts empty
//	_, err = db.ExecContext(ctx, "INSERT INTO users (name) VALUES (?)", "ada") // on the primary
//	row := db.QueryRowContext(ctx, "SELECT count(*) FROM users")               // local, sees the insert
//
// Where each statement runs:
//   - outside a transaction, a statement that certainly only reads
//     (SELECT, VALUES, EXPLAIN, WITH without a write, a PRAGMA that only
//     reads) runs on the local file; with read-your-writes on (the
//     default) it first waits until the file has applied every write made
//     through the Connector;
//   - libSQL's vector SQL (vector32, vector_extract, vector_distance_cos,
//     vector_top_k, ...) runs on the local file too, with the primary's
//     results (vector_top_k as an exact search);
//   - everything else runs on the primary: writes, DDL, scripts, the
//     libsql_* functions, a read the local SQLite cannot run, and every
//     statement of a transaction, from BeginTx or a BEGIN in SQL to its
//     end;
//   - a PRAGMA that would change the local file or a local connection is
//     refused with ErrPragma.
//
// WithEncryption keeps the local files enciphered at rest (Adiantum, under
// a key derived with Argon2id); a key that does not fit the replica fails
// NewConnector with ErrEncryptionKey.
//
// With WithOfflineWrites, writes and transactions run on the local file
// instead, at once and with the primary unreachable, each kept in a local
// queue in the same SQLite transaction; each sync pushes them to the
// primary exactly once, in order, as SQL in Hrana batches (so it works
// against the open-source sqld), reports those the primary refuses to
// WithConflictHandler, then pulls the primary's state.
//
// docs/EMBEDDED.md in the repository tells the consistency each read gets,
// what happens while the primary is unreachable, and how to move from
// go-libsql's NewEmbeddedReplicaConnector.
package embedded
