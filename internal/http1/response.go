package http1

// This file: reading a response head (the status line, header fields,
// framing lengths) and setting up its body.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// errNoResponse is the server closing the connection before sending a
// single byte of a response.
var errNoResponse = fmt.Errorf("the server closed the connection without a response: %w", io.EOF)

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
