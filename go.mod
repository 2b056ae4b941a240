module github.com/gohrana/libsql

go 1.26

require github.com/goccy/go-json v0.12.0
