package http1

import (
	"net"
	"syscall"
)

// lowater sets SO_RCVLOWAT on a TCP connection. On Linux a socket whose
// low-water mark is n is readable (for epoll too, so for Go's poller) once
// n bytes are queued, or at end of stream, or when its receive buffer is
// under pressure.
type lowater struct {
	rc  syscall.RawConn // nil: not a TCP connection
	cur int             // the mark in force (0 means the default, 1)
}

func newLowater(c net.Conn) lowater {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			return lowater{rc: rc, cur: 1}
		}
	}
	return lowater{}
}

// set sets the mark to n and reports whether it is in force.
func (l *lowater) set(n int) bool {
	if l.rc == nil {
		return false
	}
	if n == l.cur {
		return true
	}
	var serr error
	if err := l.rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	}); err != nil || serr != nil {
		return false
	}
	l.cur = n
	return true
}
