package ws

import (
	"context"
	"net"
	"time"

	"github.com/gohrana/libsql/transport"
)

// Lockstep sockets. A socket of its own (own.go) carries one stream, whose
// requests are sent one Send at a time, so its goroutine is almost always
// the only one waiting on the socket. Handing each answer from a reader
// goroutine to that goroutine costs a thread wake-up per answer (a futex
// call each way), which was most of the client's CPU per request in
// lockstep work. So such a socket has no reader goroutine of its own: the
// goroutine that waits for an answer reads the socket itself, holding the
// socket's read role, until its answers are in.
//
// The socket is still read whenever something can arrive. A waiter that
// finds the role held (a cursor's fetches, or a drain under way) waits for
// its answers as on a shared socket. A holder that has its answers while
// others are still awaited (fetches asked for ahead, closes no one waits
// for) hands the role to a drain goroutine, which reads until nothing is
// awaited and then ends. While nothing is awaited nothing reads: sqld sends
// nothing unasked, and before a burst goes out on such a socket one
// non-blocking read (probe) tells whether the server closed it meanwhile,
// so that a request on a socket that died while idle fails Safe as it does
// when a reader saw it die. A reader cannot stop in the middle of a read
// without closing the connection, so a holder whose context ends (or whose
// client timeout passes) closes the socket: the stream is lost with it, as
// an HTTP stream is with an abandoned request.
//
// A lockstep socket is not pinged (a pong needs a reader): TCP keepalive
// (lockstepKeepAlive) finds a peer gone silent while a holder waits, and the
// probe one gone while idle.

// lead takes the read role of a lockstep socket if no one holds it, and
// reports whether it did. On taking it, it probes the connection (see
// corkConn.probe): a socket the server closed while idle dies now, so that
// a burst not yet written fails Safe.
func (sk *socket) lead() bool {
	if !sk.lockstep {
		return false
	}
	sk.mu.Lock()
	if sk.reading || sk.err != nil {
		sk.mu.Unlock()
		return false
	}
	sk.reading = true
	idle := len(sk.pending) == 0
	sk.mu.Unlock()
	if idle {
		if err := sk.w.probe(); err != nil {
			sk.fail(sk.readFailed(err), false)
		}
	}
	return true
}

// check finds out whether a lockstep socket that no one reads has died
// (see lead).
func (sk *socket) check() {
	if sk.lockstep && sk.lead() {
		sk.yieldRead()
	}
}

// yieldRead gives up the read role: to a drain goroutine while answers
// are still awaited, or else to no one.
func (sk *socket) yieldRead() {
	sk.mu.Lock()
	if len(sk.pending) > 0 && sk.err == nil {
		sk.mu.Unlock()
		go sk.drain()
		return
	}
	sk.reading = false
	sk.mu.Unlock()
}

// drain holds the read role of a lockstep socket until nothing is
// awaited, reading and delivering what arrives.
func (sk *socket) drain() {
	for sk.readOne() {
		sk.mu.Lock()
		if len(sk.pending) == 0 {
			sk.reading = false
			sk.mu.Unlock()
			return
		}
		sk.mu.Unlock()
	}
	sk.mu.Lock()
	sk.reading = false
	sk.mu.Unlock()
}

// readUntil reads the socket, holding its read role (lead), until ex has
// every answer; then it gives the role up. When ctx ends or timeout (if
// positive) passes first, the socket is closed, failing what it awaited,
// and readUntil returns the cause; an exchange that had every answer by
// then is not failed.
func (sk *socket) readUntil(ctx context.Context, ex *exchange, timeout time.Duration) error {
	var cause error
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { sk.abandon(ctx.Err()) })
	}
	var t *time.Timer
	if timeout > 0 {
		t = time.AfterFunc(timeout, func() { sk.abandon(errTimeout) })
	}
	for {
		select {
		case <-ex.done:
		default:
			if sk.readOne() {
				continue
			}
			// The socket died: its failure completed every waiter.
			<-ex.done
		}
		break
	}
	if stop != nil && !stop() {
		cause = ctx.Err()
	}
	if t != nil && !t.Stop() && cause == nil {
		cause = errTimeout
	}
	sk.yieldRead()
	if ex.err == nil {
		return nil
	}
	return cause
}

// abandon closes the socket for a holder of its read role whose wait
// ended (cause).
func (sk *socket) abandon(cause error) {
	sk.abandoned.Store(true)
	sk.fail(&transport.Error{Message: "connection closed: the request was abandoned while its answer was read", Err: cause}, false)
}

// lockstepKeepAlive is the TCP keepalive of every socket: a lockstep socket
// is not pinged, so its kernel finds a peer gone silent, within about
// 30 s as the pings would.
var lockstepKeepAlive = keepAliveConfig(15*time.Second, 5*time.Second, 3)

func keepAliveConfig(idle, interval time.Duration, count int) net.KeepAliveConfig {
	return net.KeepAliveConfig{Enable: true, Idle: idle, Interval: interval, Count: count}
}
