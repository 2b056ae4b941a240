module github.com/gohrana/libsql/scripts/fetchcheck

go 1.26.0

replace github.com/gohrana/libsql => ../..

require (
	github.com/gohrana/libsql v0.0.0-00010101000000-000000000000
	golang.org/x/mod v0.43.0
)
