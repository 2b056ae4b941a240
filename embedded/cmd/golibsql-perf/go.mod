module github.com/gohrana/libsql/embedded/cmd/golibsql-perf

go 1.26.0

require github.com/tursodatabase/go-libsql v0.0.0-20251219133454-43644db490ff

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/libsql/sqlite-antlr4-parser v0.0.0-20240327125255-dbf53b6cbf06 // indirect
	golang.org/x/exp v0.0.0-20230515195305-f3d0a9c9a5cc // indirect
)
