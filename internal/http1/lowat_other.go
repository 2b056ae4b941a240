//go:build !linux

package http1

import "net"

// lowater is a no-op where SO_RCVLOWAT is not known to wake Go's poller:
// batch mode then reads as normal mode does.
type lowater struct{}

func newLowater(net.Conn) lowater { return lowater{} }

func (*lowater) set(int) bool { return false }
