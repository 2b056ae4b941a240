package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// conn is one HTTP/1.1 connection. It is used by one request at a time:
// the request's goroutine, then whoever reads the response body.
type conn struct {
	t    *Transport
	key  poolKey
	raw  net.Conn // the TCP connection
	c    net.Conn // raw, or the TLS connection over it
	br   *bufio.Reader
	wbuf []byte // the request being written; reused

	idleAt time.Time // when it last became idle
	reused bool      // it has served a request before

	// The current request's context watch: abort closes raw once the
	// context ends; stop (from context.AfterFunc) cancels the watch.
	stop    func() bool
	abortFn func() // pc.abort, made once
	aborted atomic.Bool

	peek peekState // the stale-connection check's state (platform specific)

	// The previous response's header keys and values, in order: a server
	// sends the same ones again and again, so their strings are reused.
	prevKeys, prevVals []string
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, readBufSize) }

// watch makes the context's end abort the connection.
func (pc *conn) watch(ctx context.Context) {
	pc.stop = nil
	if ctx.Done() != nil {
		pc.stop = context.AfterFunc(ctx, pc.abortFn)
	}
}

func (pc *conn) abort() {
	pc.aborted.Store(true)
	_ = pc.raw.Close()
}

// unwatch ends the context watch and reports whether the connection is
// intact (the context did not abort it).
func (pc *conn) unwatch() bool {
	if pc.stop != nil {
		stopped := pc.stop()
		pc.stop = nil
		if !stopped {
			return false
		}
	}
	return !pc.aborted.Load()
}

// shut closes the connection after a failure or an abandoned exchange. It
// closes the TCP connection under any TLS, so it never waits to send a TLS
// alert and is safe while another goroutine is blocked on the connection.
func (pc *conn) shut() {
	pc.unwatch()
	_ = pc.raw.Close()
}

// closeIdle closes an idle connection (with a TLS close_notify if TLS).
func (pc *conn) closeIdle() { _ = pc.c.Close() }

// release ends the exchange after the response body: back to the pool if
// reusable, intact and without stray bytes, closed otherwise.
func (pc *conn) release(reusable bool) {
	intact := pc.unwatch()
	if !reusable || !intact || pc.br.Buffered() > 0 {
		_ = pc.raw.Close()
		return
	}
	pc.t.putIdle(pc)
}

// defaultUserAgent is what net/http sends when the request sets none.
const defaultUserAgent = "Go-http-client/1.1"

var errUnknownLength = errors.New("h1: request bodies of unknown length are not supported")

// encodeRequest writes the request into pc.wbuf and closes its body. gz
// reports that it asked for gzip on the caller's behalf, closeAfter that
// the request asked to close the connection.
func (pc *conn) encodeRequest(req *http.Request, compress bool) (gz, closeAfter bool, err error) {
	defer closeReqBody(req)
	var n int64
	if req.Body != nil && req.Body != http.NoBody {
		if req.ContentLength <= 0 {
			return false, false, errUnknownLength
		}
		n = req.ContentLength
	} else if req.ContentLength > 0 {
		return false, false, fmt.Errorf("h1: ContentLength=%d with no body", req.ContentLength)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return false, false, fmt.Errorf("h1: invalid method %q", method)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !validHost(host) {
		return false, false, errors.New("h1: invalid Host")
	}
	b := append(pc.wbuf[:0], method...)
	b = append(b, ' ')
	if b, err = appendRequestURI(b, req.URL); err != nil {
		return false, false, err
	}
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if n > 0 || (method != http.MethodGet && method != http.MethodHead) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, "\r\n"...)
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		b = append(b, "User-Agent: "+defaultUserAgent+"\r\n"...)
	}
	if compress && method != http.MethodHead && headerGet(req.Header, "Accept-Encoding") == "" && headerGet(req.Header, "Range") == "" {
		gz = true
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	if req.Close {
		closeAfter = true
		b = append(b, "Connection: close\r\n"...)
	}
	for k, vs := range req.Header {
		if skipRequestHeader(k) {
			continue
		}
		if !validToken(k) {
			return false, false, fmt.Errorf("h1: invalid header field name %q", k)
		}
		isConn := len(k) == len("Connection") && strings.EqualFold(k, "Connection")
		for _, v := range vs {
			if !validValue(v) {
				// The value may be a secret (Authorization): never show it.
				return false, false, fmt.Errorf("h1: invalid value for header field %q", k)
			}
			if isConn && hasToken(v, "close") {
				closeAfter = true
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "\r\n"...)
	if n > 0 {
		head := len(b)
		b = append(b, make([]byte, n)...)
		if _, err := io.ReadFull(req.Body, b[head:]); err != nil {
			pc.wbuf = b[:0]
			return false, false, fmt.Errorf("h1: reading the request body: %w", err)
		}
		var one [1]byte
		if m, _ := req.Body.Read(one[:]); m > 0 {
			pc.wbuf = b[:0]
			return false, false, fmt.Errorf("h1: request body longer than its ContentLength %d", n)
		}
	}
	pc.wbuf = b
	return gz, closeAfter, nil
}

// headerGet is h.Get for a canonical key, without canonicalizing.
func headerGet(h http.Header, key string) string {
	if vs := h[key]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// skipRequestHeader reports the headers the transport writes itself.
func skipRequestHeader(k string) bool {
	switch len(k) {
	case len("Host"):
		return strings.EqualFold(k, "Host")
	case len("Trailer"):
		return strings.EqualFold(k, "Trailer")
	case len("Content-Length"):
		return strings.EqualFold(k, "Content-Length")
	case len("Transfer-Encoding"):
		return strings.EqualFold(k, "Transfer-Encoding")
	}
	return false
}

// appendRequestURI appends the request target: the URL's path (and
// query) as is when it needs no escaping, u.RequestURI() otherwise.
func appendRequestURI(b []byte, u *url.URL) ([]byte, error) {
	start := len(b)
	if u.Opaque == "" && u.RawPath == "" && (u.Path == "" || u.Path[0] == '/') && plainPath(u.Path) {
		if u.Path == "" {
			b = append(b, '/')
		} else {
			b = append(b, u.Path...)
		}
		if u.ForceQuery || u.RawQuery != "" {
			b = append(b, '?')
			b = append(b, u.RawQuery...)
		}
	} else {
		b = append(b, u.RequestURI()...)
	}
	for _, c := range b[start:] {
		if c <= ' ' || c == 0x7f {
			return b, errors.New("h1: invalid character in the request target")
		}
	}
	return b, nil
}

// plainPath reports whether p is made only of characters that stand for
// themselves in a URL path.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~/!$&'()*+,;=:@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// tchar reports the characters allowed in a token (RFC 9110 5.6.2).
var tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-32] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tchar[s[i]] {
			return false
		}
	}
	return true
}

// validValue reports whether v may be sent as a field value: no control
// characters other than horizontal tab.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func validHost(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c == 0x7f || c == '/' || c == '?' || c == '#' || c == '\\' {
			return false
		}
	}
	return true
}

// errNoResponse is the server closing the connection before sending a
// single byte of a response.
var errNoResponse = fmt.Errorf("h1: server closed the connection without a response: %w", io.EOF)

// head is a parsed response status line and header section.
type head struct {
	minor   int // HTTP/1.minor
	code    int
	status  string
	header  http.Header
	length  int64 // Content-Length, -1 if none
	chunked bool
	close   bool // Connection: close
	gzip    bool // Content-Encoding: gzip
}

// readResponse reads the response's head and sets up its body.
func (pc *conn) readResponse(req *http.Request, gz, closeAfter bool) (*http.Response, error) {
	var h head
	if err := pc.readHead(&h); err != nil {
		return nil, err
	}
	resp := &http.Response{
		Status:        h.status,
		StatusCode:    h.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h.header,
		ContentLength: h.length,
		Request:       req,
	}
	if h.minor == 0 {
		resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
	}
	reusable := !closeAfter && !h.close && h.minor == 1
	b := &body{pc: pc, ctx: req.Context()}
	switch {
	case req.Method == http.MethodHead || h.code == http.StatusNoContent || h.code == http.StatusNotModified:
		if req.Method != http.MethodHead {
			resp.ContentLength = 0
		}
		b = nil
	case h.chunked:
		b.kind = kindChunked
		resp.ContentLength = -1
		resp.TransferEncoding = []string{"chunked"}
		h.header.Del("Content-Length")
	case h.length == 0:
		b = nil
	case h.length > 0:
		b.kind, b.remain = kindFixed, h.length
	default:
		b.kind = kindUntilClose
		reusable = false
	}
	resp.Close = !reusable
	if b == nil {
		resp.Body = http.NoBody
		pc.release(reusable)
		return resp, nil
	}
	b.reusable = reusable
	resp.Body = b
	if gz && h.gzip {
		resp.Body = &gzipBody{b: b}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	return resp, nil
}

// readHead reads a status line and header section, skipping informational
// (1xx) responses.
func (pc *conn) readHead(h *head) error {
	for skipped := 0; ; skipped++ {
		size := 0
		line, err := pc.readLine(&size)
		if err != nil {
			if err == io.EOF && skipped == 0 {
				return errNoResponse
			}
			return eofUnexpected(err)
		}
		if err := parseStatusLine(line, h); err != nil {
			return err
		}
		if h.code >= 200 {
			return pc.readHeader(h, size)
		}
		if h.code == http.StatusSwitchingProtocols {
			return &ProtocolError{Err: ErrUnsupported, Detail: "101 Switching Protocols"}
		}
		if skipped == maxInformational {
			return malformed("too many informational (1xx) responses")
		}
		if err := pc.skipFields(size); err != nil {
			return err
		}
	}
}

// readLine reads one line of the head without its CRLF (or LF), adding its
// size to *size.
func (pc *conn) readLine(size *int) ([]byte, error) {
	line, err := pc.br.ReadSlice('\n')
	*size += len(line)
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, &ProtocolError{Err: ErrHeaderTooLarge, Detail: "a line over " + strconv.Itoa(readBufSize) + " bytes"}
		}
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *size > MaxHeaderBytes {
		return nil, &ProtocolError{Err: ErrHeaderTooLarge, Detail: "over " + strconv.Itoa(MaxHeaderBytes) + " bytes"}
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseStatusLine parses "HTTP/1.1 200 OK" into h.
func parseStatusLine(line []byte, h *head) error {
	if len(line) < len("HTTP/1.1 200") || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return malformed("status line " + quoteLine(line))
	}
	switch line[7] {
	case '1':
		h.minor = 1
	case '0':
		h.minor = 0
	default:
		return &ProtocolError{Err: ErrUnsupported, Detail: "version " + quoteLine(line[:8])}
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return malformed("status line " + quoteLine(line))
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return malformed("status line " + quoteLine(line))
	}
	for _, c := range line[12:] {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return malformed("control character in the status line")
		}
	}
	h.code = code
	h.status = statusString(line[9:])
	return nil
}

// statusString returns the status ("200 OK") without allocating for the
// usual ones.
func statusString(s []byte) string {
	switch string(s) {
	case "200 OK":
		return "200 OK"
	case "400 Bad Request":
		return "400 Bad Request"
	case "404 Not Found":
		return "404 Not Found"
	}
	return string(s)
}

// quoteLine quotes the start of a line of the server's for an error.
func quoteLine(line []byte) string {
	const max = 48
	if len(line) > max {
		return strconv.Quote(string(line[:max])) + "..."
	}
	return strconv.Quote(string(line))
}

// field is one header line.
type field struct{ key, value string }

// readHeader reads the header section after the status line (size bytes
// so far) into h.
func (pc *conn) readHeader(h *head, size int) error {
	var stack [24]field
	fields := stack[:0]
	h.length = -1
	var te, ce string
	teSeen := false
	for {
		line, err := pc.readLine(&size)
		if err != nil {
			return eofUnexpected(err)
		}
		if len(line) == 0 {
			break
		}
		if len(fields) == MaxHeaders {
			return &ProtocolError{Err: ErrHeaderTooLarge, Detail: "over " + strconv.Itoa(MaxHeaders) + " fields"}
		}
		name, value, err := splitField(line)
		if err != nil {
			return err
		}
		i := len(fields)
		key := pc.fieldKey(i, name)
		var v string
		if i < len(pc.prevVals) && string(value) == pc.prevVals[i] {
			v = pc.prevVals[i]
		} else {
			v = string(value)
		}
		fields = append(fields, field{key, v})
		switch key {
		case "Content-Length":
			n, ok := parseLength(v)
			if !ok || (h.length >= 0 && n != h.length) {
				return malformed("bad Content-Length")
			}
			h.length = n
		case "Transfer-Encoding":
			teSeen = true
			if te != "" {
				te += ","
			}
			te += v
		case "Connection":
			if hasToken(v, "close") {
				h.close = true
			}
		case "Content-Encoding":
			if ce != "" {
				ce += ","
			}
			ce += v
		}
	}
	if teSeen {
		if h.minor == 0 {
			// RFC 9112 6.1: faulty framing.
			return malformed("Transfer-Encoding in an HTTP/1.0 response")
		}
		if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
			return &ProtocolError{Err: ErrUnsupported, Detail: "transfer encoding " + strconv.Quote(te)}
		}
		h.chunked = true
	}
	h.gzip = ce != "" && strings.EqualFold(strings.TrimSpace(ce), "gzip")

	hdr := make(http.Header, len(fields))
	vals := make([]string, len(fields))
	pc.prevKeys, pc.prevVals = pc.prevKeys[:0], pc.prevVals[:0]
	for i, f := range fields {
		vals[i] = f.value
		if old, ok := hdr[f.key]; ok {
			hdr[f.key] = append(old, f.value)
		} else {
			hdr[f.key] = vals[i : i+1 : i+1]
		}
		pc.prevKeys = append(pc.prevKeys, f.key)
		pc.prevVals = append(pc.prevVals, f.value)
	}
	h.header = hdr
	return nil
}

// skipFields reads and drops a header (or trailer) section.
func (pc *conn) skipFields(size int) error {
	for n := 0; ; n++ {
		line, err := pc.readLine(&size)
		if err != nil {
			return eofUnexpected(err)
		}
		if len(line) == 0 {
			return nil
		}
		if n == MaxHeaders {
			return &ProtocolError{Err: ErrHeaderTooLarge, Detail: "over " + strconv.Itoa(MaxHeaders) + " fields"}
		}
		if _, _, err := splitField(line); err != nil {
			return err
		}
	}
}

// splitField splits "Name: value" and checks both parts. The error never
// quotes the line, which might carry a secret.
func splitField(line []byte) (name, value []byte, err error) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return nil, nil, malformed("header line without a field name")
	}
	name = line[:i]
	for _, c := range name {
		if !tchar[c] {
			return nil, nil, malformed("invalid header field name")
		}
	}
	value = line[i+1:]
	for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
		value = value[1:]
	}
	for len(value) > 0 && (value[len(value)-1] == ' ' || value[len(value)-1] == '\t') {
		value = value[:len(value)-1]
	}
	for _, c := range value {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return nil, nil, malformed("control character in a header field value")
		}
	}
	return name, value, nil
}

// fieldKey returns the canonical form of the i-th field's name, reusing
// known strings.
func (pc *conn) fieldKey(i int, name []byte) string {
	var buf [64]byte
	if len(name) > len(buf) {
		return textproto.CanonicalMIMEHeaderKey(string(name))
	}
	k := buf[:len(name)]
	upper := true
	for j, c := range name {
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		k[j] = c
		upper = c == '-'
	}
	switch string(k) {
	case "Content-Type":
		return "Content-Type"
	case "Content-Length":
		return "Content-Length"
	case "Date":
		return "Date"
	case "Transfer-Encoding":
		return "Transfer-Encoding"
	case "Connection":
		return "Connection"
	case "Content-Encoding":
		return "Content-Encoding"
	case "Server":
		return "Server"
	case "Vary":
		return "Vary"
	}
	if i < len(pc.prevKeys) && string(k) == pc.prevKeys[i] {
		return pc.prevKeys[i]
	}
	return string(k)
}

// parseLength parses a Content-Length value.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
