module github.com/gohrana/libsql/embedded

go 1.26.0

replace github.com/gohrana/libsql => ../

require github.com/gohrana/libsql v0.0.0-00010101000000-000000000000

require github.com/coder/websocket v1.8.15 // indirect
