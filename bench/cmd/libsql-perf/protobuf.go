package main

import (
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/internal/fixture"
)

// protobufContentType is the Content-Type of sqld's /v3-protobuf bodies.
const protobufContentType = "application/x-protobuf"

// fixtureCols are the columns of fixture.Query, with sqld's decltypes.
var fixtureCols = []codec.Col{
	{Name: "a", Decltype: "INTEGER"}, {Name: "b", Decltype: "TEXT"}, {Name: "c", Decltype: "REAL"},
	{Name: "d", Decltype: "BLOB"}, {Name: "e", Decltype: "TEXT"}, {Name: "f", Decltype: "INTEGER"},
}

// fixtureValues returns row i of the fixture as codec values.
func fixtureValues(i int) []codec.Value {
	r := fixture.MakeRow(i)
	e := codec.NullValue()
	if r.E != nil {
		e = codec.StringValue(*r.E)
	}
	return []codec.Value{codec.IntValue(r.A), codec.StringValue(r.B), codec.FloatValue(r.C), codec.BlobValue(r.D), e, codec.IntValue(r.F)}
}

// fixturePipeline returns what fixture.Response(n) decodes to: the execute
// result of fixture.Query over rows 1..n, with the same metrics (replication
// index n+2, rows_read n, query_duration_ms 12.345), then a close result.
func fixturePipeline(n int) codec.PipelineResponse {
	res := codec.StmtResult{
		Cols:                fixtureCols,
		Values:              make([]codec.Value, 0, len(fixtureCols)*n),
		NumRows:             n,
		ReplicationIndex:    uint64(n) + 2,
		HasReplicationIndex: true,
		RowsRead:            uint64(n),
		QueryDurationMS:     12.345,
	}
	for i := 1; i <= n; i++ {
		res.Values = append(res.Values, fixtureValues(i)...)
	}
	return codec.PipelineResponse{Results: []codec.StreamResult{
		{OK: true, Response: codec.StreamResponse{Type: codec.RequestExecute, Result: res}},
		{OK: true, Response: codec.StreamResponse{Type: codec.RequestClose}},
	}}
}

// protobufBody encodes a pipeline response as sqld's /v3-protobuf/pipeline
// writes it (prost: fields in number order, zero values left out), with
// codectest's independent builder rather than the codec under test.
func protobufBody(p codec.PipelineResponse) []byte {
	return codectest.ProtobufInput(&codectest.Result{Kind: codectest.KindPipeline, Pipeline: p})
}

// protobufResponse is the Protobuf form of fixture.Response(n): the same
// rows and metrics. TestProtobufMatchesCapture checks it against sqld.
func protobufResponse(n int) []byte { return protobufBody(fixturePipeline(n)) }
