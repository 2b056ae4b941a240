module github.com/gohrana/libsql/examples/bun

go 1.24.0

replace github.com/gohrana/libsql => ../..

require (
	github.com/gohrana/libsql v0.0.0-00010101000000-000000000000
	github.com/uptrace/bun v1.3.0
	github.com/uptrace/bun/dialect/sqlitedialect v1.3.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/puzpuzpuz/xsync/v3 v3.5.1 // indirect
	github.com/tmthrgd/go-hex v0.0.0-20190904060850-447a3041c3bc // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
