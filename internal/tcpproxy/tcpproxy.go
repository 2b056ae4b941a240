// Package tcpproxy is the frame of the TCP proxies that tests and
// benchmarks put between a client and a server (bench's delayproxy,
// embedded's cutProxy): it accepts connections on 127.0.0.1, dials the
// server for each and hands the pair to a handler that forwards the bytes
// its own way; Close ends every connection, so that no test or benchmark
// waits on a client that did not hang up.
package tcpproxy

import (
	"net"
	"sync"
)

// Proxy accepts connections and forwards each through its handler.
type Proxy struct {
	ln       net.Listener
	upstream string
	handle   func(client, server net.Conn)

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // open, for Close
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a port of 127.0.0.1 that the kernel picks. For every
// connection it accepts it dials upstream (host:port) and runs
// handle(client, server) in a goroutine of its own; both connections are
// closed when handle returns. A client whose server cannot be dialled is
// closed.
func Start(upstream string, handle func(client, server net.Conn)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, handle: handle, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address to connect to instead of upstream.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, closes every connection and waits until the
// handlers have returned.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track remembers c for Close; after Close it closes c and returns false.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// serve dials upstream for client and runs the handler on the pair.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	p.handle(client, server)
}
