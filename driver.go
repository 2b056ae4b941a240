// Package libsql is a pure-Go database/sql driver for libSQL: it talks to
// libsql-server (sqld, and Turso, which runs it) over the Hrana protocol on
// HTTP.
//
//	import _ "github.com/gohrana/libsql"
//
//	db, err := sql.Open("libsql", "libsql://mydb-org.turso.io?authToken="+token)
//	rows, err := db.QueryContext(ctx, "SELECT id, name FROM users WHERE id > ?", 10)
//
// To keep the token out of URLs, build a Config:
//
//	cfg := libsql.NewConfig()
//	cfg.URL = "https://mydb-org.turso.io"
//	cfg.AuthToken = token
//	c, err := libsql.NewConnector(cfg)
//	db := sql.OpenDB(c)
//
// Each autocommit statement costs one HTTP request and leaves nothing open
// on the server. A transaction holds one server stream from its first
// statement (which carries the BEGIN) to COMMIT or ROLLBACK (which carry the
// stream's close).
//
// Values: INTEGER scans as int64, REAL as float64, TEXT as string, BLOB as
// []byte, NULL as nil. TEXT in a column declared DATE, DATETIME or TIMESTAMP
// that parses as a time becomes a time.Time in UTC; time.Time arguments are
// stored as TimeFormat text.
//
// Errors from the server are *Error values carrying the Hrana code; use
// errors.Is with ErrConstraint, ErrBusy, ErrAuth and the other classes.
//
// The JSON codec is chosen with the DSN parameter codec=: "direct", the
// default, is always linked; "gojson", the baseline on goccy/go-json, is
// available once its package is imported, so that programs that do not ask
// for it do not link it:
//
//	import _ "github.com/gohrana/libsql/codec/gojson"
package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/gohrana/libsql/codec"
	_ "github.com/gohrana/libsql/codec/direct" // registers "direct", the default
)

// DriverName is the name the driver registers with database/sql.
const DriverName = "libsql"

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.DriverContext = (*Driver)(nil)
)

// Driver is the database/sql driver.
type Driver struct{}

func init() {
	sql.Register(DriverName, &Driver{})
}

// Open opens a connection from a DSN; database/sql prefers OpenConnector.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses the DSN once and returns a Connector for it.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return NewConnector(cfg)
}

// optionalCodecs are the codecs that register themselves only when their
// package is imported, with that package's path.
var optionalCodecs = map[string]string{
	"gojson": "github.com/gohrana/libsql/codec/gojson",
}

func lookupCodec(name string) (codec.Codec, error) {
	if name == "" {
		name = DefaultCodec
	}
	c, ok := codec.Lookup(name)
	if !ok {
		if imp, known := optionalCodecs[name]; known {
			return nil, &DSNError{Msg: "codec " + name + " is not linked into this program; add the import _ \"" + imp + "\""}
		}
		return nil, &DSNError{Msg: "unknown codec " + safeParamName(name) + "; known: " + joinNames(codec.Names())}
	}
	return c, nil
}
