// Command e2e-ours runs one bench/e2e workload through
// github.com/gohrana/libsql (codec and compression are chosen in the DSN,
// e.g. ?codec=direct, ?codec=protobuf or ?codec=gojson&compression=gzip)
// and prints its result as one JSON line; a ws:// DSN (or transport=ws)
// goes over WebSocket. It also runs the net/http ceilings and the floors,
// which use no driver. e2e-run starts it; by hand:
//
//	e2e-ours -dsn 'http://127.0.0.1:8080?codec=direct' -workload scan20k -n 20000
//	e2e-ours -dsn 'ws://127.0.0.1:8080?codec=protobuf' -workload point -n 5000
//	e2e-ours -dsn http://127.0.0.1:8080 -workload ceiling -n 20000
//	e2e-ours -dsn http://127.0.0.1:8080 -workload ceiling-protobuf -n 20000
//	e2e-ours -dsn ws://127.0.0.1:8080 -workload point-floor-ws -n 5000
package main

import (
	"github.com/gohrana/libsql"
	"github.com/gohrana/libsql/bench/e2e/internal/ceiling"
	"github.com/gohrana/libsql/bench/e2e/internal/worker"
	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	_ "github.com/gohrana/libsql/codec/gojson" // registers codec=gojson (direct and protobuf come with the driver)
)

func main() {
	worker.Main(worker.Program{
		Name:   "e2e-ours",
		Driver: libsql.DriverName,
		Extra: map[string]worker.Func{
			"ceiling":          ceiling.Run,
			"ceiling-protobuf": ceiling.RunProtobuf,
			"ceiling-gzip":     ceiling.RunGzip,
			"insert-floor":     ceiling.InsertFloor,
			// The WebSocket floors take the server's ws:// URL.
			"point-floor-ws":           ceiling.PointFloorWS,
			"point-floor-ws-pipelined": ceiling.PointFloorWSPipelined,
			"insert-floor-ws":          ceiling.InsertFloorWS,
			"concurrent-floor-ws":      ceiling.ConcurrentFloorWS,
			"concurrent-floor-ws-sql":  ceiling.ConcurrentFloorWSSQL,
			// The kept-stream HTTP floor (what tursogo-serverless does)
			// takes the server's http:// URL.
			"point-floor-http-kept":      ceiling.PointFloorHTTPKept,
			"concurrent-floor-http-kept": ceiling.ConcurrentFloorHTTPKept,
			// The driver over net/http's Transport (WithRoundTripper).
			"scan20k-nethttp":    ceiling.NetHTTP("scan20k-nethttp", workload.ScanFixture),
			"point-nethttp":      ceiling.NetHTTP("point-nethttp", workload.Point),
			"insert-nethttp":     ceiling.NetHTTP("insert-nethttp", workload.InsertTx),
			"concurrent-nethttp": ceiling.NetHTTP("concurrent-nethttp", workload.Concurrent),
		},
	})
}
