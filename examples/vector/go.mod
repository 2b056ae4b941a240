module github.com/gohrana/libsql/examples/vector

go 1.24

replace github.com/gohrana/libsql => ../..

require github.com/gohrana/libsql v0.0.0-00010101000000-000000000000

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
)
