// Package latency is a TCP proxy that adds a fixed delay to each direction
// of every connection, to measure a client against a local server as if
// the server were farther away: a request and its answer each arrive the
// delay late, so a round trip costs twice the delay more.
//
// Bytes are delayed from the moment the proxy read them, not one chunk
// after another, so the delay does not add up over a long transfer; a
// half-close (FIN) is passed on as late as the bytes before it.
package latency

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards the connections it accepts to a target address.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a port of 127.0.0.1 that the kernel picks and forwards
// every connection to target (host:port), delay late in each direction.
func Start(target string, delay time.Duration) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, closes every connection and waits until the
// proxy's goroutines have returned.
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

// serve connects client to the target and pipes both ways until both
// directions have ended.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	// An error in either direction ends both: the connection is broken.
	abort := func() { client.Close(); server.Close() }
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(server, client, abort) })
	wg.Go(func() { p.pipe(client, server, abort) })
	wg.Wait()
}

// chunk is what one read got, due for writing at due; err ends the stream.
type chunk struct {
	b   []byte
	err error
	due time.Time
}

// pipe copies src to dst, each read's bytes written delay after they were
// read. At the end of src it half-closes dst, delay late as well.
func (p *Proxy) pipe(dst, src net.Conn, abort func()) {
	// Bounded: a writer that falls behind stops the reader, and TCP's flow
	// control the sender.
	chunks := make(chan chunk, 64)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			c := chunk{err: err, due: time.Now().Add(p.delay)}
			if n > 0 {
				c.b = bytes.Clone(buf[:n])
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
