module github.com/gohrana/libsql/bench

go 1.26

require (
	github.com/goccy/go-json v0.12.0
	github.com/gohrana/libsql v0.0.0
)

require github.com/coder/websocket v1.8.15 // indirect

replace github.com/gohrana/libsql => ../
