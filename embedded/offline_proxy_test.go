package embedded_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gohrana/libsql/internal/tcpproxy"
)

// cutProxy forwards TCP connections to a server and, once armed, cuts
// the connection that carries the cut-th request containing marker as
// soon as the server begins to answer it: the server has run the request
// and the client never learns how.
//
// It speaks HTTP/1.1 and, after an upgrade, WebSocket. Over HTTP it looks
// for marker in the raw bytes and cuts at the server's next bytes. Over
// WebSocket the client's frames are masked (RFC 6455 §5.3), so it parses
// them, unmasks a copy of each message's payload to look for marker, and
// cuts at the server's next data frame; control frames (ping, pong,
// close) pass either way. Every byte it forwards is forwarded unchanged.
type cutProxy struct {
	*tcpproxy.Proxy
	marker []byte

	conns     atomic.Int64 // connections accepted
	replConns atomic.Int64 // of them, those whose first request is a replication call
	calls     atomic.Int64 // replication calls forwarded
	seen      atomic.Int64 // requests with the marker forwarded
	cut       atomic.Int64 // the count to cut at; 0: none
	cuts      atomic.Int64 // connections cut
	wsCuts    atomic.Int64 // of them, WebSocket connections
}

// newCutProxy starts a cutProxy to upstream (host:port), closed with its
// connections when the test ends.
func newCutProxy(t testing.TB, upstream, marker string) *cutProxy {
	t.Helper()
	p := &cutProxy{marker: []byte(marker)}
	tp, err := tcpproxy.Start(upstream, p.forward)
	if err != nil {
		t.Fatal(err)
	}
	p.Proxy = tp
	t.Cleanup(func() { tp.Close() })
	return p
}

// URL and WS are the proxy's URLs for each transport (sqld serves both
// on one port).
func (p *cutProxy) URL() string { return "http://" + p.Addr() }
func (p *cutProxy) WS() string  { return "ws://" + p.Addr() }

// forward copies the client's bytes up and the server's down, each
// direction closing its destination when it ends (which ends the other).
func (p *cutProxy) forward(c, u net.Conn) {
	var doomed atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer u.Close()
		p.upward(c, u, &doomed)
	})
	wg.Go(func() {
		defer c.Close()
		p.downward(u, c, &doomed)
	})
	wg.Wait()
}

// replCalls returns how many replication calls the proxy forwarded.
func (p *cutProxy) replCalls() int64 { return p.calls.Load() }

// count counts the requests with the marker in b and dooms the
// connection if one of them is the cut-th.
func (p *cutProxy) count(b []byte, doomed *atomic.Bool) {
	p.calls.Add(int64(bytes.Count(b, []byte(" /wal_log.ReplicationLog/"))))
	for i := bytes.Count(b, p.marker); i > 0; i-- {
		if cut := p.cut.Load(); p.seen.Add(1) == cut {
			doomed.Store(true)
		}
	}
}

// upward copies the client's bytes to the server, counting the markers
// in them; the connection is doomed before the marked request's last
// byte is forwarded, so that no byte of its answer gets through.
func (p *cutProxy) upward(c, u net.Conn, doomed *atomic.Bool) {
	p.conns.Add(1)
	r := bufio.NewReaderSize(c, 64<<10)
	head, err := readHead(r)
	if err != nil {
		return
	}
	if bytes.Contains(head, []byte(" /wal_log.ReplicationLog/")) {
		p.replConns.Add(1)
	}
	if !bytes.Contains(bytes.ToLower(head), []byte("\r\nupgrade: websocket")) {
		p.copyHTTP(u, r, head, doomed)
		return
	}
	if _, err := u.Write(head); err != nil {
		return
	}
	var msg []byte // the unmasked payload of the data message so far
	for {
		f, err := readFrame(r, true)
		if err != nil {
			return
		}
		if f.data() {
			if f.op != opContinuation {
				msg = msg[:0]
			}
			msg = append(msg, f.payload...)
			if f.fin {
				p.count(msg, doomed)
			}
		}
		if _, err := u.Write(f.raw); err != nil {
			return
		}
	}
}

// copyHTTP copies an HTTP/1.1 stream, head first, looking for the marker
// across reads.
func (p *cutProxy) copyHTTP(u net.Conn, r io.Reader, head []byte, doomed *atomic.Bool) {
	buf := make([]byte, 64<<10)
	chunk := head
	var tail []byte
	for {
		if len(chunk) > 0 {
			window := append(tail, chunk...)
			p.count(window, doomed)
			if k := len(p.marker) - 1; len(window) > k {
				tail = append([]byte(nil), window[len(window)-k:]...)
			}
			if _, err := u.Write(chunk); err != nil {
				return
			}
		}
		n, err := r.Read(buf)
		if n == 0 && err != nil {
			return
		}
		chunk = buf[:n]
	}
}

// downward copies the server's bytes to the client until the connection
// is doomed and the server begins an answer: then it cuts both ways.
func (p *cutProxy) downward(u, c net.Conn, doomed *atomic.Bool) {
	cut := func() { p.cuts.Add(1); u.Close() }
	r := bufio.NewReaderSize(u, 64<<10)
	head, err := readHead(r)
	// A 101 answers the upgrade, not a message the client may have sent
	// right after it.
	upgraded := bytes.HasPrefix(head, []byte("HTTP/1.1 101 "))
	if len(head) > 0 && !upgraded && doomed.Load() {
		cut()
		return
	}
	if _, werr := c.Write(head); werr != nil || err != nil {
		return
	}
	if !upgraded {
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 && doomed.Load() {
				cut()
				return
			}
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	for {
		f, err := readFrame(r, false)
		if err != nil {
			return
		}
		if f.data() && doomed.Load() {
			p.wsCuts.Add(1)
			cut()
			return
		}
		if _, err := c.Write(f.raw); err != nil {
			return
		}
	}
}

// readHead reads an HTTP/1.1 head, through its empty line.
func readHead(r *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := r.ReadSlice('\n')
		head = append(head, line...)
		if err != nil {
			return head, err
		}
		if len(line) == 2 && line[0] == '\r' || len(line) == 1 {
			return head, nil
		}
	}
}

// WebSocket opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
)

// maxFramePayload bounds a frame the proxy holds whole: the pushes of the
// tests are at most a few MiB.
const maxFramePayload = 64 << 20

// wsFrame is one WebSocket frame as it came (raw, header included) with
// its payload unmasked.
type wsFrame struct {
	raw     []byte
	fin     bool
	op      byte
	payload []byte
}

// data reports whether f carries a message's data rather than control.
func (f *wsFrame) data() bool {
	return f.op == opContinuation || f.op == opText || f.op == opBinary
}

// readFrame reads one frame. A client's frames must be masked and a
// server's must not (RFC 6455 §5.1).
func readFrame(r *bufio.Reader, fromClient bool) (*wsFrame, error) {
	var h [14]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		return nil, err
	}
	n := 2
	f := &wsFrame{fin: h[0]&0x80 != 0, op: h[0] & 0x0f}
	if masked := h[1]&0x80 != 0; masked != fromClient {
		return nil, fmt.Errorf("websocket frame: masked %v", masked)
	}
	size := uint64(h[1] & 0x7f)
	switch size {
	case 126:
		if _, err := io.ReadFull(r, h[n:n+2]); err != nil {
			return nil, err
		}
		size = uint64(binary.BigEndian.Uint16(h[n:]))
		n += 2
	case 127:
		if _, err := io.ReadFull(r, h[n:n+8]); err != nil {
			return nil, err
		}
		size = binary.BigEndian.Uint64(h[n:])
		n += 8
	}
	if size > maxFramePayload {
		return nil, errors.New("websocket frame: payload too large")
	}
	var key []byte
	if fromClient {
		if _, err := io.ReadFull(r, h[n:n+4]); err != nil {
			return nil, err
		}
		key = h[n : n+4]
		n += 4
	}
	f.raw = make([]byte, n+int(size))
	copy(f.raw, h[:n])
	if _, err := io.ReadFull(r, f.raw[n:]); err != nil {
		return nil, err
	}
	f.payload = f.raw[n:]
	if key != nil {
		f.payload = make([]byte, size)
		for i, b := range f.raw[n:] {
			f.payload[i] = b ^ key[i&3]
		}
	}
	return f, nil
}

// clientFrame encodes a masked client frame (RFC 6455 §5.2), with the
// shortest length encoding that fits.
func clientFrame(fin bool, op byte, payload []byte, key [4]byte) []byte {
	b := []byte{op, 0x80}
	if fin {
		b[0] |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b[1] |= byte(n)
	case n <= 0xffff:
		b[1] |= 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] |= 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i&3])
	}
	return b
}

// TestCutProxyWebSocket drives the proxy with hand-made client frames
// (each length encoding, a message in fragments with a ping between them)
// against a server of the test's own that checks it gets every byte
// unchanged and then answers: the answer to a marked message is cut, any
// other gets through.
func TestCutProxyWebSocket(t *testing.T) {
	const marker = "INSERT INTO libsql_offline_writes"
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	pad := func(n int) []byte { return bytes.Repeat([]byte{'x'}, n-len(marker)) }
	whole := func(p []byte) []byte { return clientFrame(true, opText, p, key) }
	ping := clientFrame(true, 0x9, []byte("p"), key)
	tests := []struct {
		name   string
		frames []byte
		marked bool
	}{
		{"7-bit", whole(append(pad(125), marker...)), true},
		{"16-bit", whole(append(pad(126), marker...)), true},
		{"16-bit max", whole(append(pad(0xffff), marker...)), true},
		{"64-bit", whole(append(pad(0x10000), marker...)), true},
		{"binary", clientFrame(true, opBinary, []byte(marker), key), true},
		{"fragments", slices.Concat(
			clientFrame(false, opText, []byte("x"+marker[:10]), key),
			ping,
			clientFrame(false, opContinuation, []byte(marker[10:20]), key),
			clientFrame(true, opContinuation, []byte(marker[20:]), key),
		), true},
		{"no marker", whole(pad(0x10000)), false},
		{"marker in a ping", clientFrame(true, 0x9, []byte(marker), key), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := []byte{0x81, 2, 'o', 'k'}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan []byte, 1)
			go func() { // the server: upgrade, read the frames, answer
				defer close(got)
				s, err := ln.Accept()
				if err != nil {
					return
				}
				defer s.Close()
				r := bufio.NewReader(s)
				if _, err := readHead(r); err != nil {
					return
				}
				if _, err := io.WriteString(s, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"); err != nil {
					return
				}
				b := make([]byte, len(tt.frames))
				n, _ := io.ReadFull(r, b)
				got <- b[:n]
				s.Write(answer)
			}()
			p := newCutProxy(t, ln.Addr().String(), marker)
			p.cut.Store(1)
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(tt.frames); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			if head, err := readHead(r); err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 101 ")) {
				t.Fatalf("head %q: %v", head, err)
			}
			if b := <-got; !bytes.Equal(b, tt.frames) {
				t.Fatalf("the server got %d bytes, not the %d sent unchanged", len(b), len(tt.frames))
			}
			rest, _ := io.ReadAll(r)
			want := answer
			if tt.marked {
				want = nil
			}
			if !bytes.Equal(rest, want) {
				t.Fatalf("the client got %q after the upgrade, want %q", rest, want)
			}
			if marked := p.cuts.Load() == 1 && p.wsCuts.Load() == 1; marked != tt.marked {
				t.Fatalf("cut %v (seen %d)", marked, p.seen.Load())
			}
		})
	}
}
