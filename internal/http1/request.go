package http1

// This file: writing a request (the request line, header validation, the
// body).

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// defaultUserAgent is what net/http sends when the request sets none.
const defaultUserAgent = "Go-http-client/1.1"

var errUnknownLength = errors.New("http1: request bodies of unknown length are not supported")

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
		return false, false, fmt.Errorf("http1: ContentLength=%d with no body", req.ContentLength)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return false, false, fmt.Errorf("http1: invalid method %q", method)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !validHost(host) {
		return false, false, errors.New("http1: invalid Host")
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
			return false, false, fmt.Errorf("http1: invalid header field name %q", k)
		}
		isConn := len(k) == len("Connection") && strings.EqualFold(k, "Connection")
		for _, v := range vs {
			if !validValue(v) {
				// The value may be a secret (Authorization): never show it.
				return false, false, fmt.Errorf("http1: invalid value for header field %q", k)
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
			return false, false, fmt.Errorf("http1: reading the request body: %w", err)
		}
		var one [1]byte
		if m, _ := req.Body.Read(one[:]); m > 0 {
			pc.wbuf = b[:0]
			return false, false, fmt.Errorf("http1: request body longer than its ContentLength %d", n)
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
			return b, errors.New("http1: invalid character in the request target")
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

// tchar reports the characters allowed in a token (RFC 9110 5.6.2). Both
// directions use it: request methods and field names here, response field
// names in splitField.
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

// validToken reports whether s is a non-empty token.
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

// validHost reports whether h may be sent as the Host field: non-empty, and
// nothing that would end the authority or the line.
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
