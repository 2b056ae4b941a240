module github.com/gohrana/libsql/examples/goose

go 1.26.0

replace github.com/gohrana/libsql => ../..

require (
	github.com/gohrana/libsql v0.0.0-00010101000000-000000000000
	github.com/pressly/goose/v3 v3.30.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/mfridman/interpolate v0.0.2 // indirect
	github.com/sethvargo/go-retry v0.5.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
