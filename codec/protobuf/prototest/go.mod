module github.com/gohrana/libsql/codec/protobuf/prototest

go 1.24

require (
	github.com/gohrana/libsql v0.0.0
	google.golang.org/protobuf v1.36.12
)

replace github.com/gohrana/libsql => ../../..
