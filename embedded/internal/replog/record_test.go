package replog

// TestRecord writes testdata/ from a real sqld. It runs only when asked:
//
//	sqld -d /tmp/rec --http-listen-addr 127.0.0.1:18931 --no-welcome --max-log-size 1 &
//	go test ./internal/replog -run TestRecord -record http://127.0.0.1:18931
//
// The server must be new (an empty database): the fixtures' tests expect
// the frames of exactly the statements below.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/gohrana/libsql"
	"github.com/gohrana/libsql/embedded/internal/grpcweb"
)

var record = flag.String("record", "", "base URL of a new sqld to record testdata/ from")

func TestRecord(t *testing.T) {
	if *record == "" {
		t.Skip("records fixtures only with -record URL")
	}
	ctx := context.Background()
	db, err := sql.Open("libsql", *record)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	hello := post(t, "Hello", EncodeHelloRequest(), nil, true)
	save(t, "hello.body", hello.body)
	msg, err := grpcweb.NewReader(bytes.NewReader(hello.body), 0).Next(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeHello(msg)
	if err != nil {
		t.Fatal(err)
	}
	token := string(h.SessionToken)

	save(t, "no_hello.headers", post(t, "BatchLogEntries", EncodeLogOffset(0), nil, true).headers)

	exec("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT)")
	exec("INSERT INTO kv VALUES (1, 'one'), (2, 'two')")
	exec("UPDATE kv SET v = 'uno' WHERE k = 1")
	save(t, "batch.body", post(t, "BatchLogEntries", EncodeLogOffset(0), map[string]string{"X-Session-Token": token}, false).body)
	save(t, "batch_empty.body", post(t, "BatchLogEntries", EncodeLogOffset(1<<20), map[string]string{"X-Session-Token": token}, false).body)

	// About 1.6 MB of frames on two pages: the log (--max-log-size 1) is
	// compacted into a snapshot of a few pages.
	exec("CREATE TABLE blob (id INTEGER PRIMARY KEY, b BLOB)")
	big := bytes.Repeat([]byte{0xab}, 3000)
	for i := range 400 {
		exec("INSERT OR REPLACE INTO blob VALUES (1, ?)", append(big, byte(i)))
	}
	save(t, "need_snapshot.headers", post(t, "BatchLogEntries", EncodeLogOffset(0), map[string]string{"X-Session-Token": token}, true).headers)
	save(t, "snapshot.body", post(t, "Snapshot", EncodeLogOffset(0), map[string]string{"X-Session-Token": token}, true).body)
}

type recorded struct {
	headers []byte
	body    []byte
}

// post sends a gRPC-Web call and records the answer: its headers, and its
// body to the end (whole) or its first message only.
func post(t *testing.T, method string, msg []byte, hdr map[string]string, whole bool) recorded {
	t.Helper()
	req, _ := http.NewRequest("POST", *record+service+method, bytes.NewReader(grpcweb.Frame(msg)))
	req.Header.Set("Content-Type", grpcweb.ContentType)
	req.Header.Set("X-Grpc-Web", "1")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hb strings.Builder
	fmt.Fprintf(&hb, "HTTP %d\n", resp.StatusCode)
	for _, k := range []string{"Content-Type", "Grpc-Status", "Grpc-Message"} {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(&hb, "%s: %s\n", k, v)
		}
	}
	var body []byte
	if whole {
		body, err = io.ReadAll(resp.Body)
	} else {
		prefix := make([]byte, 5)
		if _, err = io.ReadFull(resp.Body, prefix); err == nil {
			rest := make([]byte, binary.BigEndian.Uint32(prefix[1:]))
			_, err = io.ReadFull(resp.Body, rest)
			body = append(prefix, rest...)
		}
	}
	if err != nil {
		t.Fatalf("%s: read body: %v", method, err)
	}
	return recorded{headers: []byte(hb.String()), body: body}
}

func save(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("testdata/%s: %d bytes", name, len(b))
}
