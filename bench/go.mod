module github.com/gohrana/libsql/bench

go 1.26

require (
	github.com/goccy/go-json v0.12.0
	github.com/gohrana/libsql v0.0.0
)

replace github.com/gohrana/libsql => ../
