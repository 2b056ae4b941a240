// Package delayproxy is a TCP proxy for benchmarks that adds a round-trip
// time, to measure a client against a local server as if the server were
// farther away, and counts connections, HTTP requests and bytes.
//
// Bytes are delayed from the moment the proxy read them, not one chunk
// after another, so the delay does not add up over a long transfer; a
// half-close (FIN) is passed on as late as the bytes before it.
package delayproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gohrana/libsql/internal/tcpproxy"
)

// Proxy forwards TCP connections to a server, delivering each chunk of
// bytes, in either direction, half a round trip after it was read: a
// network with rtt of round-trip time. It counts connections, HTTP
// requests (request lines it sees go up) and bytes. Its Close closes the
// connections still open.
type Proxy struct {
	*tcpproxy.Proxy
	half time.Duration

	conns    atomic.Int64
	requests atomic.Int64
	up, down atomic.Int64 // bytes to the server, and back
}

// New starts a proxy on a port of 127.0.0.1 that the kernel picks, to
// upstream (host:port), that adds rtt: each direction delivers its bytes
// rtt/2 after it read them.
func New(upstream string, rtt time.Duration) (*Proxy, error) {
	p := &Proxy{half: rtt / 2}
	tp, err := tcpproxy.Start(upstream, p.forward)
	if err != nil {
		return nil, err
	}
	p.Proxy = tp
	return p, nil
}

// URL is the proxy's base URL over HTTP.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Counts are a proxy's counters at one moment.
type Counts struct{ Conns, Requests, Bytes int64 }

// Counts returns the counters now.
func (p *Proxy) Counts() Counts {
	return Counts{p.conns.Load(), p.requests.Load(), p.up.Load() + p.down.Load()}
}

// Minus returns c less d.
func (c Counts) Minus(d Counts) Counts {
	return Counts{c.Conns - d.Conns, c.Requests - d.Requests, c.Bytes - d.Bytes}
}

// forward pipes client and server both ways until both directions have
// ended.
func (p *Proxy) forward(client, server net.Conn) {
	p.conns.Add(1)
	// An error in either direction ends both: the connection is broken.
	abort := func() { client.Close(); server.Close() }
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(server, client, &p.up, true, abort) })
	wg.Go(func() { p.pipe(client, server, &p.down, false, abort) })
	wg.Wait()
}

// chunk is what one read got, due for writing at due; err ends the stream.
type chunk struct {
	b   []byte
	err error
	due time.Time
}

// pipe copies src to dst, each read's bytes written half a round trip
// after they were read, and counts them in n (and, upward, the requests
// that begin in them). At the end of src it half-closes dst, as late.
func (p *Proxy) pipe(dst, src net.Conn, n *atomic.Int64, upward bool, abort func()) {
	// Bounded: a writer that falls behind stops the reader, and TCP's flow
	// control the sender. The bound is part of what the benchmarks measure:
	// 64 reads of at most 32 KiB in flight cap a transfer at 2 MiB per half
	// round trip, as a TCP window would (e2e-run's 20,000-row scan at 20 ms
	// meets the cap: 1,024 reads of 64 KiB made it 30% faster).
	chunks := make(chan chunk, 64)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			k, err := src.Read(buf)
			c := chunk{err: err, due: time.Now().Add(p.half)}
			if k > 0 {
				n.Add(int64(k))
				if upward {
					p.requests.Add(int64(countRequests(buf[:k])))
				}
				c.b = bytes.Clone(buf[:k])
			}
			chunks <- c
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range chunks {
		if failed {
			continue // drained, so that the reader is not left blocked
		}
		time.Sleep(time.Until(c.due))
		if len(c.b) > 0 {
			if _, err := dst.Write(c.b); err != nil {
				failed = true
				abort()
				continue
			}
		}
		switch {
		case c.err == nil:
		case errors.Is(c.err, io.EOF):
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
		default:
			failed = true
			abort()
		}
	}
}

// countRequests counts HTTP/1.1 request lines that start in b: a method
// and a path, the way every request of the driver and of the replication
// calls begins.
func countRequests(b []byte) int {
	n := 0
	for _, m := range [][]byte{[]byte("POST /"), []byte("GET /")} {
		for i := 0; ; {
			j := bytes.Index(b[i:], m)
			if j < 0 {
				break
			}
			if at := i + j; at == 0 || b[at-1] == '\n' {
				n++
			}
			i += j + len(m)
		}
	}
	return n
}
