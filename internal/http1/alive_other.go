//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package http1

// peekState is empty where the stale-connection check is not implemented.
type peekState struct{}

func (pc *conn) initAlive() {}

// alive cannot check without blocking here: a connection the server closed
// is found out by the next request on it (and a write that fails before
// sending anything is retried on a fresh connection).
func (pc *conn) alive() bool { return true }
