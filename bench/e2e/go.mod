module github.com/gohrana/libsql/bench/e2e

go 1.26

replace github.com/gohrana/libsql => ../../

require (
	github.com/coder/websocket v1.8.15
	github.com/gohrana/libsql v0.0.0
	github.com/tursodatabase/libsql-client-go v0.0.0-20260528064733-9d5d30a29a60
)

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	golang.org/x/exp v0.0.0-20240325151524-a685a6edb6d8 // indirect
)
