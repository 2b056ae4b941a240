module github.com/gohrana/libsql/bench/cmd/golibsql-perf

go 1.26.0

require github.com/tursodatabase/go-libsql v0.0.0-20251219133454-43644db490ff

require (
	github.com/antlr4-go/antlr/v4 v4.13.0 // indirect
	github.com/libsql/sqlite-antlr4-parser v0.0.0-20240327125255-dbf53b6cbf06 // indirect
	golang.org/x/exp v0.0.0-20240325151524-a685a6edb6d8 // indirect
)

require github.com/gohrana/libsql/bench v0.0.0

// The harness comes from this repository; the bench module's own replaces
// do not carry over to a module that requires it.
replace (
	github.com/gohrana/libsql => ../../..
	github.com/gohrana/libsql/bench => ../..
	github.com/gohrana/libsql/embedded => ../../../embedded
)
