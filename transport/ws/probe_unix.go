//go:build unix

package ws

import (
	"errors"
	"io"
	"syscall"
)

// peekRead reads what the socket fd has without waiting: n > 0 bytes, or
// io.EOF if the peer closed it, or the socket's error; 0 and nil if
// nothing has arrived.
func peekRead(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, nil
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
