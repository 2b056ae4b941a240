package itest

// Fault injection between the driver and sqld: an in-process toxiproxy
// (github.com/Shopify/toxiproxy/v2) TCP proxy on 127.0.0.1, and a listener
// whose SYNs go unanswered.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

var proxySeq atomic.Int64

// faultProxy is a toxiproxy proxy from a free port on 127.0.0.1 to a server.
type faultProxy struct {
	p   *toxiproxy.Proxy
	url string // http://127.0.0.1:port, the URL to give the driver
}

// newFaultProxy starts a proxy to the server at upstreamURL; it is stopped
// when the test ends.
func newFaultProxy(t testing.TB, upstreamURL string) *faultProxy {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	require.NoError(t, err)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "sqld"+strconv.FormatInt(proxySeq.Add(1), 10), "127.0.0.1:0", u.Host)
	require.NoError(t, p.Start())
	t.Cleanup(p.Stop)
	return &faultProxy{p: p, url: "http://" + p.Listen}
}

// toxic adds a toxic. stream is "downstream" (server to driver) or
// "upstream"; toxicity is the probability that a new connection gets it
// (1: always).
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

func (fp *faultProxy) add(t testing.TB, tx toxic) {
	t.Helper()
	if tx.Stream == "" {
		tx.Stream = "downstream"
	}
	b, err := json.Marshal(tx)
	require.NoError(t, err)
	_, err = fp.p.Toxics.AddToxicJson(strings.NewReader(string(b)))
	require.NoError(t, err, "add toxic %s", b)
}

func (fp *faultProxy) remove(t testing.TB, name string) {
	t.Helper()
	require.NoError(t, fp.p.Toxics.RemoveToxic(context.Background(), name), "remove toxic %s", name)
}

// addLatency delays everything the server sends by d.
func (fp *faultProxy) addLatency(t testing.TB, name string, d time.Duration) {
	fp.add(t, toxic{Name: name, Type: "latency", Toxicity: 1,
		Attributes: map[string]any{"latency": d.Milliseconds()}})
}

// addCut closes every connection once the server has sent n bytes on it;
// with rst, the close is a TCP reset (SO_LINGER 0) instead of a FIN.
//
// toxiproxy sets SO_LINGER 0 on both sides of a connection whose toxic chain
// holds a reset_peer toxic when the connection starts; a reset_peer toxic
// with toxicity 0 never acts itself, so it only turns limit_data's close
// into a reset.
func (fp *faultProxy) addCut(t testing.TB, name string, n int64, rst bool) {
	fp.add(t, toxic{Name: name, Type: "limit_data", Toxicity: 1,
		Attributes: map[string]any{"bytes": n}})
	if rst {
		fp.add(t, toxic{Name: name + "_rst", Type: "reset_peer", Stream: "downstream", Toxicity: 0,
			Attributes: map[string]any{"timeout": 0}})
	}
}

// blackholeListener returns the address of a listening socket that never
// accepts and whose accept queue is full, so that further connection
// attempts get no SYN-ACK and hang (as with an unreachable host). ok is
// false if the kernel did not behave that way.
func blackholeListener(t testing.TB) (addr string, ok bool) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	// Backlog 0: Linux queues one connection, then drops SYNs.
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return addr, true // the queue is full
			}
			return addr, false
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	return addr, false
}
