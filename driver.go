// Package libsql is a pure-Go database/sql driver for libSQL: it talks to
// libsql-server (sqld, and Turso, which runs it) over the Hrana protocol on
// HTTP, or on WebSocket with a ws:// or wss:// DSN (or transport=ws).
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
// Over HTTP each autocommit statement costs one request and leaves nothing
// open on the server, and a transaction holds one server stream from its
// first statement (which carries the BEGIN) to COMMIT or ROLLBACK (which
// carry the stream's close). Over WebSocket each connection holds one
// server stream for its whole life, so that its connection state
// (PRAGMAs, last_insert_rowid(), changes()) lasts between statements.
//
// Values: INTEGER scans as int64, REAL as float64, TEXT as string, BLOB as
// []byte, NULL as nil. TEXT in a column declared DATE, DATETIME or TIMESTAMP
// that parses as a time becomes a time.Time in UTC; time.Time arguments are
// stored as TimeFormat text. libSQL's vectors (F32_BLOB(n) columns,
// vector32(), vector_top_k) are Vector32 and Vector64 values, arguments and
// scan targets both.
//
// Errors from the server are *Error values carrying the Hrana code; use
// errors.Is with ErrConstraint, ErrBusy, ErrAuth and the other classes.
//
// The codec is chosen with the DSN parameter codec=: "direct" (JSON, the
// default) and "protobuf" (Hrana 3 over Protobuf, on /v3-protobuf) are
// always linked; "gojson", the baseline on goccy/go-json, is available once
// its package is imported, so that programs that do not ask for it do not
// link it:
//
//	import _ "github.com/gohrana/libsql/codec/gojson"
//
// Who imports it: applications, by its driver name (sql.Open("libsql", dsn)) or
// for its Connector, Config and errors; the embedded and otel modules build on it.
package libsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"slices"
	"strings"

	"github.com/gohrana/libsql/codec"
	_ "github.com/gohrana/libsql/codec/direct"   // registers "direct", the default
	_ "github.com/gohrana/libsql/codec/protobuf" // registers "protobuf"
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

// OpenConnector parses the DSN once and returns a Connector for it. A
// file: DSN is handed to a local SQLite driver, as libsql-client-go does,
// so that the same code runs on a local file in development and tests: the
// first of "sqlite3" (mattn/go-sqlite3) and "sqlite" (modernc.org/sqlite)
// that the program registered.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	if strings.HasPrefix(dsn, "file:") {
		return openFile(dsn, sql.Drivers())
	}
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return NewConnector(cfg)
}

// fileDrivers are the database/sql drivers a file: DSN may go to, in order
// of preference, with the import that registers each.
var fileDrivers = []struct{ name, pkg string }{
	{"sqlite3", "github.com/mattn/go-sqlite3"},
	{"sqlite", "modernc.org/sqlite"},
}

// openFile returns a connector of the first file driver among registered.
func openFile(dsn string, registered []string) (driver.Connector, error) {
	for _, fd := range fileDrivers {
		if !slices.Contains(registered, fd.name) {
			continue
		}
		db, err := sql.Open(fd.name, dsn)
		if err != nil {
			return nil, err
		}
		drv := db.Driver()
		_ = db.Close() // it never connected; only its driver is wanted
		if dc, ok := drv.(driver.DriverContext); ok {
			return dc.OpenConnector(dsn)
		}
		return dsnConnector{drv: drv, dsn: dsn}, nil
	}
	return nil, &DSNError{Msg: `file: URLs are opened by a local SQLite driver, and none is registered; import one: _ "github.com/mattn/go-sqlite3" (driver "sqlite3") or _ "modernc.org/sqlite" (driver "sqlite")`}
}

// dsnConnector opens connections of a driver without OpenConnector.
type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// optionalCodecs are the codecs that register themselves only when their
// package is imported, with that package's path.
var optionalCodecs = map[string]string{
	"gojson": "github.com/gohrana/libsql/codec/gojson",
}

// CodecAuto is the codec name (codec=auto) that means Protobuf where the
// server offers it (it does not answer /v3-protobuf/pipeline 404, or it
// accepts the hrana3-protobuf subprotocol), else direct. Arguments are then checked as
// for JSON (no ±Inf), since either may be spoken.
const CodecAuto = "auto"

// lookupCodec returns the codec a Config names, and whether it is
// CodecAuto's Protobuf, which falls back to JSON on a server that does not
// offer Protobuf.
func lookupCodec(name string) (cd codec.Codec, auto bool, err error) {
	if name == "" {
		name = DefaultCodec
	}
	if name == CodecAuto {
		pb, _ := codec.Lookup("protobuf")
		return pb, true, nil
	}
	c, ok := codec.Lookup(name)
	if !ok {
		if imp, known := optionalCodecs[name]; known {
			return nil, false, &DSNError{Msg: "codec " + name + " is not linked into this program; add the import _ \"" + imp + "\""}
		}
		return nil, false, &DSNError{Msg: "unknown codec " + safeParamName(name) + "; known: " + joinNames(append(codec.Names(), CodecAuto))}
	}
	return c, false, nil
}
