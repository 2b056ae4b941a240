package itest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gohrana/libsql/codec/codectest"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// The wire as each codec speaks it, for the tests that look at requests or
// answer in sqld's place (proxies, counting transports): the same test then
// runs with every codec.

// isProtobuf reports whether the variant's codec speaks Hrana 3 over
// Protobuf.
func isProtobuf(variant testmatrix.Variant) bool { return variant.Codec == "protobuf" }

// pipelinePath is the path the codec's pipeline requests go to.
func pipelinePath(variant testmatrix.Variant) string {
	if isProtobuf(variant) {
		return "/v3-protobuf/pipeline"
	}
	return "/v3/pipeline"
}

// cursorPath is the path the codec's cursor requests go to.
func cursorPath(variant testmatrix.Variant) string {
	if isProtobuf(variant) {
		return "/v3-protobuf/cursor"
	}
	return "/v3/cursor"
}

// wireAnswer returns a pipeline response body, given as sqld's JSON, in
// the codec's encoding, with its Content-Type.
func wireAnswer(t testing.TB, variant testmatrix.Variant, jsonBody string) (contentType string, body []byte) {
	contentType, body, err := wireEncode(variant, jsonBody)
	if err != nil {
		// A proxy handler may run on another goroutine: no FailNow.
		t.Errorf("wireAnswer: %v", err)
	}
	return contentType, body
}

// wireEncode is wireAnswer for callers without a testing.TB.
func wireEncode(variant testmatrix.Variant, jsonBody string) (contentType string, body []byte, err error) {
	if !isProtobuf(variant) {
		return "application/json", []byte(jsonBody), nil
	}
	r := codectest.Decode(direct.Codec, codectest.KindPipeline, []byte(jsonBody))
	if r.Err != nil {
		return "", nil, r.Err
	}
	return "application/x-protobuf", codectest.ProtobufInput(&r), nil
}

// pipelineBaton returns the baton of a pipeline request body ("" if none).
func pipelineBaton(variant testmatrix.Variant, body []byte) string {
	baton, _ := rewriteBaton(variant, body, nil)
	return baton
}

// rewriteBaton returns the baton of a pipeline request body and, if fn is
// set, the body with fn's baton in its place (the body unchanged when it
// has no baton or does not parse).
func rewriteBaton(variant testmatrix.Variant, body []byte, fn func(string) string) (string, []byte) {
	if !isProtobuf(variant) {
		return garbageRewriteJSONBaton(body, fn)
	}
	// PipelineReqBody { optional string baton = 1; repeated StreamRequest requests = 2; }
	var baton string
	var out []byte
	for rest := body; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return "", body
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return "", body
		}
		field := rest[:n+m]
		if num == 1 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(rest[n:])
			baton = string(v)
			if fn != nil {
				field = protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), fn(baton))
			}
		}
		out = append(out, field...)
		rest = rest[n+m:]
	}
	return baton, out
}

// TestWireHelpers checks the helpers on bodies the driver sends.
func TestWireHelpers(t *testing.T) {
	for _, c := range variants {
		t.Run(c.Name, func(t *testing.T) {
			var body []byte
			if isProtobuf(c) {
				body = protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "B1")
				body = protowire.AppendBytes(protowire.AppendTag(body, 2, protowire.BytesType), []byte{0x0a, 0x00})
			} else {
				body = []byte(`{"baton":"B1","requests":[{"type":"close"}]}`)
			}
			require.Equal(t, "B1", pipelineBaton(c, body))
			baton, out := rewriteBaton(c, body, func(b string) string { return b + "x" })
			require.Equal(t, "B1", baton)
			require.Equal(t, "B1x", pipelineBaton(c, out))
			ct, answer := wireAnswer(t, c, `{"baton":null,"base_url":null,"results":[{"type":"ok","response":{"type":"close"}}]}`)
			require.NotEmpty(t, ct)
			require.NotEmpty(t, answer, fmt.Sprintf("%s answer", c))
		})
	}
}

// TestAutoCodec: codec=auto speaks Protobuf to a sqld, which offers it, on
// both transports.
func TestAutoCodec(t *testing.T) {
	db, ct := countingDB(t, serverURL, testmatrix.Named("auto"))
	var n int
	require.NoError(t, db.QueryRow("SELECT 41 + 1").Scan(&n))
	require.Equal(t, 42, n)
	_, ok := ct.paths.Load("/v3-protobuf/pipeline")
	require.True(t, ok, "codec=auto used /v3-protobuf")
	_, ok = ct.paths.Load("/v3/pipeline")
	require.False(t, ok, "and not the JSON route")

	ws := openDB(t, serverURL, testmatrix.New(testmatrix.WebSocket, "auto"))
	require.NoError(t, ws.QueryRow("SELECT 41 + 1").Scan(&n))
	require.Equal(t, 42, n)
}
