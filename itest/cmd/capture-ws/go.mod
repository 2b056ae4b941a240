module github.com/gohrana/libsql/itest/cmd/capture-ws

go 1.24

require (
	github.com/coder/websocket v1.8.15
	github.com/gohrana/libsql v0.0.0
)

replace github.com/gohrana/libsql => ../../..
