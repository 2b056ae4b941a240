package http1

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lowat returns the SO_RCVLOWAT of pc's TCP connection.
func lowat(t *testing.T, pc *conn) int {
	t.Helper()
	rc, err := pc.raw.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return v
}

// TestReadInBatches: a chunked body that arrives in small bursts, read in
// batch mode, comes whole and in few reads: each read waits for min bytes
// (more than the body here) or wait. The last burst comes after a pause
// longer than wait and does not hang. The body's end restores the
// connection's low-water mark, and the pooled connection serves a
// normal request next.
func TestReadInBatches(t *testing.T) {
	const bursts, rowsPerBurst, pause = 12, 20, 3 * time.Millisecond
	var want strings.Builder
	srv := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if _, _, err := s.readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		for b := range bursts {
			for r := range rowsPerBurst {
				row := fmt.Sprintf("{\"row\":[%d,%d]}\n", b, r)
				_, _ = fmt.Fprintf(c, "%x\r\n%s\r\n", len(row), row)
			}
			time.Sleep(pause)
		}
		time.Sleep(60 * time.Millisecond) // longer than wait
		_, _ = io.WriteString(c, "5\r\nlast\n\r\n0\r\n\r\n")
		scripted("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false)(s, c, br)
	})
	for b := range bursts {
		for r := range rowsPerBurst {
			fmt.Fprintf(&want, "{\"row\":[%d,%d]}\n", b, r)
		}
	}
	want.WriteString("last\n")

	tr := newTestTransport(t, Options{})
	resp, err := tr.RoundTrip(newReq(t, "POST", srv.url, "x"))
	if err != nil {
		t.Fatal(err)
	}
	const wait = 25 * time.Millisecond
	resp.Body.(BatchReader).ReadInBatches(1<<20, wait)
	pc := resp.Body.(*body).pc
	start, reads0 := time.Now(), pc.cr.reads
	got, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Fatalf("body differs: got %d bytes, want %d", len(got), want.Len())
	}
	// Every read but those that follow a timed-out wait lasts wait.
	if reads, most := pc.cr.reads-reads0, 2*int(took/wait)+2; reads > most {
		t.Fatalf("%d reads in %v, want at most %d: the reads did not wait", reads, took, most)
	}
	if v := lowat(t, pc); v != 1 {
		t.Fatalf("SO_RCVLOWAT %d after the body, want 1", v)
	}
	if body := mustDo(t, tr, newReq(t, "POST", srv.url, "x")); body != "ok" {
		t.Fatalf("next request on the pooled connection: %q", body)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections, want the pooled one", n)
	}
}
