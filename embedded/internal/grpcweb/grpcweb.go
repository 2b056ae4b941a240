// Package grpcweb speaks the gRPC-Web wire format over HTTP/1.1, as sqld
// serves its replication service on the ordinary HTTP port: each message in
// a body is a 5-byte prefix (a flag byte, then the message's length, 4
// bytes big-endian) and the message; a prefix with the trailers flag
// carries the trailers as HTTP/1 header lines instead.
//
// It knows nothing of Protobuf: messages are byte slices.
package grpcweb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// ContentType is the content type of gRPC-Web requests and responses with
// binary Protobuf messages.
const ContentType = "application/grpc-web+proto"

const (
	prefixLen    = 5
	flagData     = 0x00
	flagTrailers = 0x80
)

// MaxMessage bounds the length of one message read: a larger prefix is an
// error rather than an allocation. sqld's largest answer, a batch of 1024
// frames of 4 KiB pages and their headers, is about 4.3 MB.
const MaxMessage = 64 << 20

// Frame returns msg framed as one gRPC-Web data message.
func Frame(msg []byte) []byte {
	b := make([]byte, prefixLen+len(msg))
	b[0] = flagData
	binary.BigEndian.PutUint32(b[1:prefixLen], uint32(len(msg)))
	copy(b[prefixLen:], msg)
	return b
}

// ErrTrailers is returned by Reader.Next at the trailers: the last part
// of a response, after its messages. Reader.Status then has their status.
var ErrTrailers = errors.New("grpcweb: end of messages")

// A FormatError is a body that does not follow the gRPC-Web framing.
type FormatError struct {
	Offset int64 // where in the body
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("grpcweb: malformed response body at byte %d: %s", e.Offset, e.Msg)
}

// Reader reads the messages of a response body one at a time, so that a
// long stream is never held in memory whole.
type Reader struct {
	r      io.Reader
	off    int64
	max    int
	status *Status
}

// NewReader returns a Reader of body that refuses messages longer than max
// bytes (0: MaxMessage).
func NewReader(body io.Reader, max int) *Reader {
	if max <= 0 {
		max = MaxMessage
	}
	return &Reader{r: body, max: max}
}

// Next reads the next message into buf (grown as needed) and returns it.
// It returns ErrTrailers at the trailers, io.EOF at the end of a body that
// had none, and a *FormatError for a malformed body; a body that ends
// inside a prefix or a message is io.ErrUnexpectedEOF.
func (r *Reader) Next(buf []byte) ([]byte, error) {
	var p [prefixLen]byte
	n, err := io.ReadFull(r.r, p[:])
	if err != nil {
		if err == io.EOF && n == 0 {
			return nil, io.EOF
		}
		return nil, io.ErrUnexpectedEOF
	}
	at := r.off
	r.off += prefixLen
	size := binary.BigEndian.Uint32(p[1:])
	if uint64(size) > uint64(r.max) {
		return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("message of %d bytes, over the limit of %d", size, r.max)}
	}
	switch p[0] {
	case flagData:
	case flagTrailers:
	default:
		return nil, &FormatError{Offset: at, Msg: fmt.Sprintf("flag byte 0x%02x (compressed or unknown)", p[0])}
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r.r, buf); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	r.off += int64(size)
	if p[0] == flagTrailers {
		st, err := parseTrailers(buf)
		if err != nil {
			return nil, &FormatError{Offset: at + prefixLen, Msg: err.Error()}
		}
		r.status = st
		return nil, ErrTrailers
	}
	return buf, nil
}

// Status returns the status of the trailers once Next returned
// ErrTrailers, else nil.
func (r *Reader) Status() *Status { return r.status }

// parseTrailers reads trailers: HTTP/1 header lines, each ending in CRLF.
func parseTrailers(b []byte) (*Status, error) {
	h := http.Header{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("trailer line without a colon")
		}
		h.Add(textproto.TrimString(k), textproto.TrimString(v))
	}
	st, ok, err := StatusFromHeader(h)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("trailers without grpc-status")
	}
	return st, nil
}

// Status is a gRPC status: Code 0 is OK.
type Status struct {
	Code    Code
	Message string
}

// Err returns nil for OK and the status as a *StatusError otherwise.
func (s *Status) Err() error {
	if s == nil || s.Code == OK {
		return nil
	}
	return &StatusError{Code: s.Code, Message: s.Message}
}

// StatusFromHeader reads grpc-status and grpc-message from h (a
// trailers-only answer has them among the response headers). ok is false
// when h has no grpc-status.
func StatusFromHeader(h http.Header) (st *Status, ok bool, err error) {
	v := h.Get("grpc-status")
	if v == "" {
		return nil, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil || n > uint64(maxCode) {
		return nil, false, fmt.Errorf("grpc-status %q is not a status code", v)
	}
	return &Status{Code: Code(n), Message: decodeMessage(h.Get("grpc-message"))}, true, nil
}

// decodeMessage undoes grpc-message's percent-encoding; a malformed
// escape is kept as it is.
func decodeMessage(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
