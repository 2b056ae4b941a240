module github.com/gohrana/libsql

go 1.24

require (
	github.com/coder/websocket v1.8.15
	github.com/goccy/go-json v0.12.0
)
