//go:build !linux

package loopback

import (
	"context"
	"net"
	"net/http"
)

// Elsewhere than on Linux there is no /proc to tell which process holds a
// port, so the tools that start servers there get the weaker form: a port
// the kernel picked (which another server may take before the one it is
// for binds it) and a health check that cannot prove who answered. The
// integration tests run on Linux only.

// Port returns a port on 127.0.0.1 that was free a moment ago.
func Port() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitHealthy waits until GET http://127.0.0.1:<port>/health answers 200,
// returning early with alive's error if alive, called before each try,
// reports one. pid and others are not checked here.
func WaitHealthy(ctx context.Context, pid int, alive func(context.Context) error, port int, others ...int) error {
	return waitFor(ctx, alive, port, func(baseURL string) string { return baseURL },
		func(client *http.Client, baseURL string) error { return GetHealth(ctx, client, baseURL) })
}
