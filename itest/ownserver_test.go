package itest

// The harness's servers are the tests' own: a server that finds its port
// taken starts again on another, and a test never goes on against a
// server it did not start (which once failed CI:
// TestFaultsSlicedSegments/ws_direct got "table sliced already exists"
// from another test's sqld that held the port its own had failed to bind).

import (
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/internal/loopback"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/internal/testmatrix"
)

// takenFirst returns a port source whose draw number n (from 1) is taken,
// and the others from loopback.Port.
func takenFirst(n, taken int) func() (int, error) {
	drawn := 0
	return func() (int, error) {
		drawn++
		if drawn == n {
			return taken, nil
		}
		return loopback.Port()
	}
}

// sliced creates the table of the CI failure on the server at url: it
// fails with "table sliced already exists" if the server is not fresh.
func sliced(t *testing.T, url string) {
	t.Helper()
	privateTable(t, openDB(t, url, testmatrix.Named("direct")), "sliced", "(x)")
}

// A process sqld given a port that another test's sqld holds (its HTTP
// port, or its gRPC port, which sqld binds after the HTTP one) starts on
// fresh ports, and the test reaches its own server.
func TestStartSqldPortTaken(t *testing.T) {
	t.Parallel()
	other := sqlds.Start(t)
	sliced(t, other.URL())
	for _, tc := range []struct {
		name   string
		listen []string
		taken  int // the draw that hands out other's port
	}{
		{"http", nil, 1},
		{"grpc", []string{sqldproc.GRPCFlag}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			own := sqlds.StartWith(t, sqldproc.Config{Listen: tc.listen, Port: takenFirst(tc.taken, other.Port())})
			require.Equal(t, 2, own.Starts(), "one start that found the port taken, one that worked")
			require.Contains(t, own.Log(), sqldproc.AddrInUse)
			require.NotContains(t, own.Ports(), other.Port())
			require.NoError(t, loopback.HeldBy(own.Pid(), own.Ports()...))
			sliced(t, own.URL())
		})
	}
}

// The same for a container with host networking: its sqld is a process
// of this host, which must hold the port.
func TestServerPortTaken(t *testing.T) {
	if !hostNetwork() {
		t.Skip("with published ports Docker picks the host port: nothing to take")
	}
	t.Parallel()
	other := sqlds.Start(t)
	sliced(t, other.URL())
	srv := startServerWith(t, serverConfig{port: takenFirst(1, other.Port())})
	u, err := url.Parse(srv.url)
	require.NoError(t, err)
	_, p, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	require.NotEqual(t, other.Port(), port)
	state, err := srv.ctr.State(t.Context())
	require.NoError(t, err)
	require.NoError(t, loopback.HeldBy(state.Pid, port))
	sliced(t, srv.url)
}
