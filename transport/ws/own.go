package ws

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gohrana/libsql/transport"
)

// Sockets of their own. sqld closes a whole socket on some failures of a
// single request (a result that is not valid UTF-8, a write refused to a
// read-only token, a namespace that does not exist), which ends every
// server stream on it. A stream outside a transaction loses nothing there
// that the session cannot replay, so such streams share the client's
// slots; but a transaction must not end because another connection ran a
// bad statement. So a stream opened by a request sent without end (one
// that keeps a transaction open on it) gets a socket no other stream uses,
// and gives it back, closing its server stream, with the Send that ends
// the unit of work, or on Reset. Sockets given back wait for the next
// transaction and are closed after ownIdle.

// ownIdle is how long a socket given back is kept for another transaction.
const ownIdle = 30 * time.Second

// ownSockets are the client's sockets of their own.
type ownSockets struct {
	mu   sync.Mutex
	all  map[*socket]struct{} // every live one, in use or idle
	idle []idleSocket         // the most recently given back last
	reap *time.Timer          // closes the idle ones kept too long; nil if none
}

type idleSocket struct {
	sk    *socket
	since time.Time
}

// acquireOwn returns a socket no other stream uses: an idle one, or one
// dialed now, within ctx (see acquire).
func (c *client) acquireOwn(ctx context.Context) (*socket, error) {
	if c.closed.Load() {
		return nil, errClosed
	}
	if sk := c.own.take(); sk != nil {
		return sk, nil
	}
	sl := &slot{c: c, own: true}
	done := sl.dial(true)
	select {
	case <-done:
	case <-ctx.Done():
		// The socket dialed meanwhile serves the next transaction.
		go func() {
			<-done
			if sk := sl.live(); sk != nil {
				c.putOwn(sk)
			}
		}()
		return nil, &transport.Error{Message: "cannot connect to the server", Safe: true, Err: ctx.Err()}
	}
	sk, err := sl.result()
	if err != nil {
		return nil, err
	}
	if !c.addOwn(sk) {
		go sk.close(false)
		return nil, errClosed
	}
	return sk, nil
}

// addOwn records sk, dialed for a stream, unless the client is closed.
func (c *client) addOwn(sk *socket) bool {
	o := &c.own
	o.mu.Lock()
	defer o.mu.Unlock()
	// Close sets closed before it takes o.mu: either it sees sk, or this
	// sees closed.
	if c.closed.Load() {
		return false
	}
	o.all = addSocket(o.all, sk)
	return true
}

// putOwn gives back sk, a socket of its own that carries no stream any
// more.
func (c *client) putOwn(sk *socket) {
	o := &c.own
	o.mu.Lock()
	if _, ok := o.all[sk]; !ok {
		o.all = addSocket(o.all, sk)
	}
	if c.closed.Load() || !sk.alive() {
		o.mu.Unlock()
		go sk.close(false)
		return
	}
	o.idle = append(o.idle, idleSocket{sk: sk, since: time.Now()})
	if o.reap == nil {
		o.reap = time.AfterFunc(ownIdle, o.reapIdle)
	}
	o.mu.Unlock()
}

func addSocket(m map[*socket]struct{}, sk *socket) map[*socket]struct{} {
	if m == nil {
		m = make(map[*socket]struct{})
	}
	m[sk] = struct{}{}
	return m
}

// take returns the idle socket given back last that still lives, or nil.
// A lockstep socket is probed first: nothing read it while it was idle.
func (o *ownSockets) take() *socket {
	for {
		o.mu.Lock()
		n := len(o.idle)
		if n == 0 {
			o.mu.Unlock()
			return nil
		}
		sk := o.idle[n-1].sk
		o.idle[n-1] = idleSocket{}
		o.idle = o.idle[:n-1]
		o.mu.Unlock()
		// Without o.mu: a socket found dead tells died, which takes it.
		if sk.check(); sk.alive() {
			return sk
		}
	}
}

// died forgets sk, which has died.
func (o *ownSockets) died(sk *socket) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.all, sk)
	o.idle = slices.DeleteFunc(o.idle, func(i idleSocket) bool { return i.sk == sk })
}

// reapIdle closes the sockets idle for ownIdle, and runs again while any
// are idle.
func (o *ownSockets) reapIdle() {
	o.mu.Lock()
	if o.reap == nil { // stopped by Close
		o.mu.Unlock()
		return
	}
	cut := time.Now().Add(-ownIdle)
	var old []*socket
	o.idle = slices.DeleteFunc(o.idle, func(i idleSocket) bool {
		if i.since.After(cut) {
			return false
		}
		old = append(old, i.sk)
		return true
	})
	if len(o.idle) > 0 {
		o.reap.Reset(time.Until(o.idle[0].since.Add(ownIdle)))
	} else {
		o.reap = nil
	}
	o.mu.Unlock()
	// They carry no stream: closed even with an answer awaited (the
	// close of the stream given back), which nobody waits for.
	for _, sk := range old {
		sk.close(false)
	}
}

// closeIdle closes the idle sockets.
func (o *ownSockets) closeIdle() {
	o.mu.Lock()
	idle := o.idle
	o.idle = nil
	o.mu.Unlock()
	for _, i := range idle {
		go i.sk.close(false)
	}
}

// sockets returns every live socket of its own, in use or idle, and
// forgets the idle ones: for Close.
func (o *ownSockets) sockets() []*socket {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.idle = nil
	if o.reap != nil {
		o.reap.Stop()
		o.reap = nil
	}
	all := make([]*socket, 0, len(o.all))
	for sk := range o.all {
		all = append(all, sk)
	}
	return all
}
