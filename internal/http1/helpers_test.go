package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testTimeout bounds every request of the tests: a hang fails fast.
const testTimeout = 5 * time.Second

func newTestTransport(t testing.TB, o Options) *Transport {
	t.Helper()
	tr := New(o)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// countConns makes srv count the connections it accepts.
func countConns(srv *httptest.Server) *atomic.Int32 {
	var n atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// newServer starts an httptest server (TLS if tls) that counts connections.
func newServer(t testing.TB, tls bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS failures are expected
	n := countConns(srv)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, n
}

// newReq makes a request bounded by testTimeout.
func newReq(t testing.TB, method, url, body string) *http.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// do runs one request and reads its whole body.
func do(t testing.TB, tr http.RoundTripper, req *http.Request) (*http.Response, string, error) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(b), err
}

// mustDo runs one request that must succeed and returns its body.
func mustDo(t testing.TB, tr http.RoundTripper, req *http.Request) string {
	t.Helper()
	_, body, err := do(t, tr, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return body
}

// rawServer is a TCP server on 127.0.0.1 whose connections are handled by
// hand-written code, for responses no well-behaved server sends.
type rawServer struct {
	ln    net.Listener
	url   string
	addr  string
	conns atomic.Int32 // accepted connections
	reqs  atomic.Int32 // complete requests read

	mu   sync.Mutex
	open []net.Conn
	wg   sync.WaitGroup
}

// newRawServer starts a raw server calling serve for each connection (in a
// goroutine of its own). The connection is closed when serve returns.
func newRawServer(t testing.TB, serve func(s *rawServer, c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, addr: ln.Addr().String(), url: "http://" + ln.Addr().String()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				serve(s, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for _, c := range s.open {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readRequest reads one request with its body and counts it.
func (s *rawServer) readRequest(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, nil, err
	}
	s.reqs.Add(1)
	return req, body, nil
}

// scripted returns a serve function that answers every request on a
// connection with resp, then closes the connection if closeAfter, or
// otherwise keeps reading requests (after the last one it waits for the
// client to go away).
func scripted(resp string, closeAfter bool) func(*rawServer, net.Conn, *bufio.Reader) {
	return func(s *rawServer, c net.Conn, br *bufio.Reader) {
		for {
			if _, _, err := s.readRequest(br); err != nil {
				return
			}
			if _, err := io.WriteString(c, resp); err != nil || closeAfter {
				return
			}
		}
	}
}

// hang returns a serve function that reads a request, writes prefix and
// then waits until the client closes the connection.
func hang(prefix string) func(*rawServer, net.Conn, *bufio.Reader) {
	return func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if _, _, err := s.readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, prefix)
		_, _ = io.Copy(io.Discard, br)
	}
}

// faultConn wraps a client connection to fail writes on demand.
type faultConn struct {
	net.Conn
	// failWrite, when set, makes the next Write write this many bytes
	// (negative: none) and then fail.
	failWrite atomic.Int32
	armed     atomic.Bool
}

var errInjected = &net.OpError{Op: "write", Net: "tcp", Err: io.ErrClosedPipe}

func (c *faultConn) Write(p []byte) (int, error) {
	if c.armed.Swap(false) {
		n := int(c.failWrite.Load())
		if n <= 0 {
			return 0, errInjected
		}
		n, _ = c.Conn.Write(p[:min(n, len(p))])
		return n, errInjected
	}
	return c.Conn.Write(p)
}

// testServerTLS returns a server TLS configuration with a self-signed
// certificate for 127.0.0.1 and localhost.
func testServerTLS(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}
}

var testCert = sync.OnceValues(func() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "http1 test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
})

// fakeConn is a net.Conn that reads from a byte slice and discards writes.
type fakeConn struct {
	r      *bytes.Reader
	closed atomic.Bool
}

func (c *fakeConn) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	return c.r.Read(p)
}
func (c *fakeConn) Write(p []byte) (int, error)        { return len(p), nil }
func (c *fakeConn) Close() error                       { c.closed.Store(true); return nil }
func (c *fakeConn) LocalAddr() net.Addr                { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (c *fakeConn) RemoteAddr() net.Addr               { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (c *fakeConn) SetDeadline(t time.Time) error      { return nil }
func (c *fakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

// endingContext returns a context that ends after d, by cancellation
// (how == "cancel") or by its deadline, and the error that ending gives.
func endingContext(how string, d time.Duration) (context.Context, context.CancelFunc, error) {
	if how == "cancel" {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(d, cancel)
		return ctx, cancel, context.Canceled
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	return ctx, cancel, context.DeadlineExceeded
}

// idleCount returns the number of idle connections, for the tests.
func (t *Transport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, list := range t.idle {
		n += len(list)
	}
	return n
}
