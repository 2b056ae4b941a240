package loopback

import "net"

// RefusedAddr returns an address on 127.0.0.1 ("127.0.0.1:port") where
// nothing listened a moment ago: the port the kernel picked for a listener
// that RefusedAddr closed at once. A dial to it is refused unless another
// socket took the port since, for the tests of a refused connection.
func RefusedAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}
