package direct_test

import (
	"fmt"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
)

// Example encodes a pipeline request and decodes a response into a
// destination that can be reused for the next response.
func Example() {
	req := codec.PipelineRequest{Requests: []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: "select ?", Args: []codec.Value{codec.FloatValue(1)}, WantRows: true}},
		{Type: codec.RequestClose},
	}}
	var buf []byte // reuse across requests: encoding then allocates nothing
	buf, err := direct.Codec.AppendPipelineRequest(buf[:0], &req)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(buf))

	body := []byte(`{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[{"name":"?","decltype":null}],"rows":[[{"type":"float","value":1.0}]],"affected_row_count":0,"last_insert_rowid":null}}},{"type":"ok","response":{"type":"close"}}]}`)
	var resp codec.PipelineResponse // reuse across responses
	if err := direct.Codec.DecodePipelineResponse(body, &resp); err != nil {
		panic(err)
	}
	res := &resp.Results[0].Response.Result
	for i := 0; i < res.NumRows; i++ {
		fmt.Println(res.Cols[0].Name, res.Row(i)[0])
	}
	// Output:
	// {"baton":null,"requests":[{"type":"execute","stmt":{"sql":"select ?","args":[{"type":"float","value":1.0}],"want_rows":true}},{"type":"close"}]}
	// ? 1
}
