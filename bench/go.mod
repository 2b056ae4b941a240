module github.com/gohrana/libsql/bench

go 1.26.0

require (
	github.com/goccy/go-json v0.12.0
	github.com/gohrana/libsql v0.1.0
	github.com/tursodatabase/libsql-client-go v0.0.0-20260528064733-9d5d30a29a60
)

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/exp v0.0.0-20240325151524-a685a6edb6d8 // indirect
	golang.org/x/sys v0.49.0 // indirect
	lukechampine.com/adiantum v1.1.1 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

require (
	github.com/coder/websocket v1.8.15
	github.com/gohrana/libsql/embedded v0.0.0
)

replace github.com/gohrana/libsql => ../

replace github.com/gohrana/libsql/embedded => ../embedded
