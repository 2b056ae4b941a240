package http1

// This file: a connection and its lifecycle (the context watch, abort,
// shut, release to the pool, closing when idle).

import (
	"bufio"
	"context"
	"net"
	"sync/atomic"
	"time"
)

// conn is one HTTP/1.1 connection. It is used by one request at a time:
// the request's goroutine, then whoever reads the response body.
type conn struct {
	t    *Transport
	key  poolKey
	raw  net.Conn      // the TCP connection
	c    net.Conn      // raw, or the TLS connection over it
	br   *bufio.Reader // over c
	wbuf []byte        // the request being written; reused

	idleAt time.Time // when it last became idle
	reused bool      // it has served a request before

	// The current request's context watch: abort closes raw once the
	// context ends; stop (from context.AfterFunc) cancels the watch.
	stop    func() bool
	abortFn func() // pc.abort, made once
	aborted atomic.Bool

	peek peekState // the stale-connection check's state (platform specific)

	// The previous response's header keys and values, in order: a server
	// sends the same ones again and again, so their strings are reused.
	prevKeys, prevVals []string
}

// initReader makes the connection's reader: buffered, over c (which is
// raw or TLS over it).
func (pc *conn) initReader() {
	pc.br = bufio.NewReaderSize(pc.c, readBufSize)
}

// watch makes the context's end abort the connection.
func (pc *conn) watch(ctx context.Context) {
	pc.stop = nil
	if ctx.Done() != nil {
		pc.stop = context.AfterFunc(ctx, pc.abortFn)
	}
}

func (pc *conn) abort() {
	pc.aborted.Store(true)
	_ = pc.raw.Close()
}

// unwatch ends the context watch and reports whether the connection is
// intact (the context did not abort it).
func (pc *conn) unwatch() bool {
	if pc.stop != nil {
		stopped := pc.stop()
		pc.stop = nil
		if !stopped {
			return false
		}
	}
	return !pc.aborted.Load()
}

// shut closes the connection after a failure or an abandoned exchange. It
// closes the TCP connection under any TLS, so it never waits to send a TLS
// alert and is safe while another goroutine is blocked on the connection.
func (pc *conn) shut() {
	pc.unwatch()
	_ = pc.raw.Close()
}

// closeIdle closes an idle connection (with a TLS close_notify if TLS).
func (pc *conn) closeIdle() { _ = pc.c.Close() }

// release ends the exchange after the response body: back to the pool if
// reusable, intact and without stray bytes, closed otherwise.
func (pc *conn) release(reusable bool) {
	intact := pc.unwatch()
	if !reusable || !intact || pc.br.Buffered() > 0 {
		_ = pc.raw.Close()
		return
	}
	pc.t.putIdle(pc)
}
