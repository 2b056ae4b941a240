package http

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/transport"
)

// Protobuf bodies as sqld writes them, built by hand from the schema
// (shared/hrana.md §10) so that the test does not trust the codec's own
// encoder.

// pbMsg returns field num as a length-delimited field holding the parts.
func pbMsg(num byte, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append([]byte{num<<3 | 2, byte(len(body))}, body...)
}

// pbDelimited prefixes each message with its length, as in a cursor body.
func pbDelimited(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(append(out, byte(len(m))), m...)
	}
	return out
}

var (
	// PipelineRespBody{baton: "B1", results: [ok{close{}}]}
	pbOKCloseBaton = append(pbMsg(1, []byte("B1")), pbMsg(3, pbMsg(1, pbMsg(1)))...)
	// PipelineRespBody{results: [ok{close{}}]}
	pbOKClose = pbMsg(3, pbMsg(1, pbMsg(1)))
	// CursorRespBody{baton: "C1"}
	pbCursorHeader = pbMsg(1, []byte("C1"))
	// CursorEntry{step_begin{cols: [{name: "a"}]}}
	pbStepBegin = pbMsg(1, pbMsg(2, pbMsg(1, []byte("a"))))
	// CursorEntry{row{values: [{integer: 42}]}} (zigzag 84)
	pbRow = pbMsg(4, pbMsg(1, []byte{2 << 3, 84}))
	// CursorEntry{step_end{}}
	pbStepEnd = pbMsg(2)
	// CursorEntry{replication_index: {5}} (sqld's extension, field 6)
	pbIndex = pbMsg(6, []byte{1 << 3, 5})
)

// protobufServer answers POSTs under /v3-protobuf/ with 404 unless
// protobufOK, and the others with handler, checking their Content-Type. A
// GET fails the test (fakeServer's check): the transport never probes.
func protobufServer(t *testing.T, protobufOK bool, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	return fakeServer(t, http.StatusOK, func(w http.ResponseWriter, r *http.Request) {
		if !protobufOK && strings.HasPrefix(r.URL.Path, "/v3-protobuf/") {
			http.NotFound(w, r)
			return
		}
		want := "application/json"
		if strings.HasPrefix(r.URL.Path, "/v3-protobuf/") {
			want = "application/x-protobuf"
		}
		if got := r.Header.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", r.URL.Path, got, want)
		}
		handler(w, r)
	})
}

func TestProtobufPipeline(t *testing.T) {
	var calls atomic.Int32
	srv := protobufServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3-protobuf/pipeline" {
			t.Errorf("path %q", r.URL.Path)
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		if calls.Add(1) == 1 {
			// PipelineReqBody{requests: [{close{}}]}: no baton yet.
			if want := pbMsg(2, pbMsg(1)); !bytes.Equal(body, want) {
				t.Errorf("first request % x, want % x", body, want)
			}
			_, _ = w.Write(pbOKCloseBaton)
			return
		}
		if want := append(pbMsg(1, []byte("B1")), pbMsg(2, pbMsg(1))...); !bytes.Equal(body, want) {
			t.Errorf("second request % x, want % x", body, want)
		}
		_, _ = w.Write(pbOKClose)
	})
	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec})
	closeTwice(t, c.NewStream())
	if cd, err := c.codec(context.Background()); err != nil || cd != protobuf.Codec {
		t.Fatalf("Codec() = %v, %v", cd, err)
	}
}

// Without /v3-protobuf the Protobuf codec fails with a clear error after
// its one request, or with a fallback speaks JSON on /v3 from that request
// on.
func TestProtobufNotOffered(t *testing.T) {
	var posts atomic.Int32
	handler := func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if r.URL.Path != "/v3/pipeline" {
			t.Errorf("path %q", r.URL.Path)
		}
		_, _ = io.WriteString(w, okClose)
	}
	srv := protobufServer(t, false, handler)

	c := newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec})
	err := sendClose(context.Background(), c.NewStream())
	var e *transport.Error
	if !errors.As(err, &e) || !e.Safe || e.Resend || e.HTTPStatus != http.StatusNotFound || !strings.Contains(e.Message, "Protobuf") {
		t.Fatalf("got %#v", err)
	}
	if posts.Load() != 0 {
		t.Fatal("a JSON request was sent without the fallback")
	}

	c = newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec, JSON: direct.Codec, Fallback: true})
	for i := int32(1); i <= 2; i++ {
		if err := sendClose(context.Background(), c.NewStream()); err != nil {
			t.Fatal(err)
		}
		if posts.Load() != i {
			t.Fatalf("%d JSON requests after %d calls", posts.Load(), i)
		}
	}
	if cd, _ := c.codec(context.Background()); cd != direct.Codec {
		t.Fatalf("Codec() = %v, want the fallback", cd)
	}
	if v, _ := c.version(context.Background()); v != v3 {
		t.Fatalf("version %d", v)
	}
}

// The error bodies of the Protobuf routes: the Protobuf Error message
// (STREAM_EXPIRED), sqld's JSON {"error"} and text, told apart by their
// Content-Type.
func TestProtobufErrorShapes(t *testing.T) {
	tests := []struct {
		name, contentType string
		body              []byte
		wantCode, wantMsg string
	}{
		{"protobuf", "application/x-protobuf",
			append(pbMsg(1, []byte("The stream has expired")), pbMsg(2, []byte("STREAM_EXPIRED"))...),
			"STREAM_EXPIRED", "The stream has expired"},
		{"json", "application/json", []byte(`{"error":"Unauthorized: The JWT is invalid"}`), "", "Unauthorized: The JWT is invalid"},
		{"text", "text/plain; charset=utf-8", []byte("Could not decode Protobuf request body\n"), "", "Could not decode Protobuf request body"},
		{"garbage protobuf", "application/x-protobuf", []byte{0xff, 0xff}, "", "Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := protobufServer(t, true, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(tt.body)
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec})
			err := sendClose(context.Background(), c.NewStream())
			var e *transport.Error
			if !errors.As(err, &e) || e.HTTPStatus != http.StatusBadRequest || e.Code != tt.wantCode || e.Message != tt.wantMsg || e.Safe != (tt.wantCode == "STREAM_EXPIRED") {
				t.Fatalf("got %#v", err)
			}
		})
	}
}

// A Protobuf cursor body: varint-length-delimited messages, the header
// first; zero-length entries (sqld's missing replication index) are
// skipped; a body cut between messages is a truncated cursor, one cut
// inside a message an unexpected EOF.
func TestProtobufCursor(t *testing.T) {
	full := pbDelimited(pbCursorHeader, pbStepBegin, pbRow, nil, pbRow, pbStepEnd, nil, pbIndex)
	tests := []struct {
		name    string
		body    []byte
		want    []string
		wantErr error
	}{
		{"whole", full, []string{"begin", "row", "row", "end", "index"}, nil},
		{"cut between messages", pbDelimited(pbCursorHeader, pbStepBegin, pbRow), []string{"begin", "row"}, transport.ErrCursorTruncated},
		{"cut inside a message", full[:len(full)-2], []string{"begin", "row", "row", "end"}, io.ErrUnexpectedEOF},
		{"cut inside a length", append(pbDelimited(pbCursorHeader), 0x80), nil, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := protobufServer(t, true, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v3-protobuf/cursor" {
					w.Header().Set("Content-Type", "application/x-protobuf")
					_, _ = w.Write(pbOKClose)
					return
				}
				w.Header().Set("Content-Type", "application/octet-stream")
				_, _ = w.Write(tt.body)
			})
			c := newTestClient(t, transport.Options{URL: srv.URL, Codec: protobuf.Codec})
			batch := codec.Batch{Steps: []codec.BatchStep{{Stmt: codec.Stmt{SQL: "SELECT 42", WantRows: true}}}}
			cur, err := c.NewStream().OpenCursor(context.Background(), &batch, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close()
			var got []string
			var e codec.CursorEntry
			for {
				err = cur.Next(&e)
				if err != nil {
					break
				}
				got = append(got, map[codec.EntryType]string{codec.EntryStepBegin: "begin", codec.EntryRow: "row",
					codec.EntryStepEnd: "end", codec.EntryReplicationIndex: "index"}[e.Type])
				if e.Type == codec.EntryRow && (len(e.Row) != 1 || e.Row[0].Int != 42) {
					t.Errorf("row %+v", e.Row)
				}
				if e.Type == codec.EntryReplicationIndex && e.ReplicationIndex != 5 {
					t.Errorf("replication index %d", e.ReplicationIndex)
				}
			}
			if tt.wantErr == nil && !errors.Is(err, io.EOF) || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("after %v: %v, want %v", got, err, tt.wantErr)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("entries %v, want %v", got, tt.want)
			}
		})
	}
}
