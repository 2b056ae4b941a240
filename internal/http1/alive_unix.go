//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package http1

import "syscall"

// peekState is what the stale-connection check needs of a connection,
// made once per connection so that the check does not allocate.
type peekState struct {
	rc    syscall.RawConn // of the TCP connection; nil if it has none
	fn    func(fd uintptr) bool
	alive bool
	buf   [1]byte
}

// initAlive prepares the check for pc's TCP connection (under any TLS).
func (pc *conn) initAlive() {
	sc, ok := pc.raw.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	ps := &pc.peek
	ps.rc = rc
	ps.fn = func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), ps.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if err == syscall.EINTR {
				continue
			}
			// Nothing to read is the only healthy answer for an idle
			// connection: a byte is a response nobody asked for, 0 is
			// the server's FIN, and an error a reset.
			ps.alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
			return true
		}
	}
}

// alive reports, without blocking, whether an idle connection can still be
// used: the server has neither closed it nor sent anything on it.
func (pc *conn) alive() bool {
	ps := &pc.peek
	if ps.rc == nil {
		return true
	}
	ps.alive = false
	if err := ps.rc.Read(ps.fn); err != nil {
		return false
	}
	return ps.alive
}
