// Package delayproxy is a TCP proxy for benchmarks that adds a round-trip
// time and counts connections, HTTP requests and bytes.
package delayproxy

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections to a server, delivering each chunk of
// bytes, in either direction, half a round trip after it was read: a
// network with rtt of round-trip time and no bandwidth limit. It counts
// connections, HTTP requests (request lines it sees go up) and bytes.
type Proxy struct {
	ln       net.Listener
	upstream string
	half     time.Duration

	conns    atomic.Int64
	requests atomic.Int64
	up, down atomic.Int64 // bytes to the server, and back
	wg       sync.WaitGroup
}

// New starts a proxy on 127.0.0.1 to upstream (host:port) that adds rtt.
func New(upstream string, rtt time.Duration) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, half: rtt / 2}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// URL is the proxy's base URL over HTTP.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

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

// Close stops the proxy and waits for its connections to end.
func (p *Proxy) Close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.conns.Add(1)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			var both sync.WaitGroup
			both.Add(2)
			go func() { defer both.Done(); p.pipe(u, c, &p.up, true) }()
			go func() { defer both.Done(); p.pipe(c, u, &p.down, false) }()
			both.Wait()
			c.Close()
			u.Close()
		}()
	}
}

// chunk is bytes read at a time.
type chunk struct {
	at   time.Time
	data []byte
}

// pipe copies from src to dst, each chunk half a round trip late; at the
// end of src it half-closes dst, and on a failed write it closes both.
func (p *Proxy) pipe(dst, src net.Conn, n *atomic.Int64, upward bool) {
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			if d := time.Until(c.at.Add(p.half)); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.data); err != nil {
				src.Close()
				dst.Close()
				for range queue {
				}
				return
			}
		}
		if tcp, ok := dst.(*net.TCPConn); ok {
			tcp.CloseWrite()
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			n.Add(int64(k))
			if upward {
				p.requests.Add(int64(countRequests(buf[:k])))
			}
			queue <- chunk{at: time.Now(), data: bytes.Clone(buf[:k])}
		}
		if err != nil {
			break
		}
	}
	close(queue)
	<-done
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
