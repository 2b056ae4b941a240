package embedded_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// cutProxy forwards TCP connections to a server and, once armed, cuts
// the connection that carries the cut-th request containing marker as
// soon as the server begins to answer it: the server has run the request
// and the client never learns how.
type cutProxy struct {
	ln       net.Listener
	upstream string
	marker   []byte

	seen atomic.Int64 // requests with the marker forwarded
	cut  atomic.Int64 // the count to cut at; 0: none
	cuts atomic.Int64 // connections cut

	wg sync.WaitGroup
}

func newCutProxy(t testing.TB, upstream, marker string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, upstream: upstream, marker: []byte(marker)}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *cutProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) serve() {
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
		var doomed atomic.Bool
		p.wg.Add(2)
		go func() { // client to server, watching for the marker
			defer p.wg.Done()
			defer u.Close()
			buf := make([]byte, 64<<10)
			var tail []byte
			for {
				n, err := c.Read(buf)
				if n > 0 {
					window := append(tail, buf[:n]...)
					for i := bytes.Count(window, p.marker); i > 0; i-- {
						if cut := p.cut.Load(); p.seen.Add(1) == cut {
							doomed.Store(true)
						}
					}
					if k := len(p.marker) - 1; len(window) > k {
						tail = append([]byte(nil), window[len(window)-k:]...)
					}
					if _, err := u.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // server to client, cut once doomed
			defer p.wg.Done()
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := u.Read(buf)
				if n > 0 && doomed.Load() {
					p.cuts.Add(1)
					u.Close()
					return
				}
				if n > 0 {
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						return
					}
					return
				}
			}
		}()
	}
}
