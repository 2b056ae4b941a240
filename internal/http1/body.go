package http1

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"sync"
)

// How a body's end is found.
const (
	kindFixed      = iota + 1 // Content-Length
	kindChunked               // Transfer-Encoding: chunked
	kindUntilClose            // the server closes the connection
)

// States of a body.
const (
	stActive = iota
	stEOF    // read to the end; the connection went back to the pool or was closed
	stClosed // closed by the caller before the end; the connection was closed
	stFailed // a read failed; the connection was closed
)

// States of a chunked body.
const (
	chunkHeader = iota // next: a chunk-size line
	chunkData          // in a chunk's data (remain bytes left)
	chunkCRLF          // next: the CRLF after a chunk's data
	chunkDone
)

// body is a response body read straight from its connection's reader.
// Read is for one goroutine at a time; Close may come from any goroutine,
// also while a Read is blocked (it closes the connection under it).
type body struct {
	pc       *conn
	ctx      context.Context
	kind     int
	remain   int64 // kindFixed: bytes left; kindChunked: bytes left in the chunk
	chunk    int   // kindChunked: chunk* state
	reusable bool  // the connection may be pooled after the end

	mu    sync.Mutex
	state int
	err   error // stFailed: the error
}

// Read reads the body. It returns io.EOF (possibly with the last bytes) at
// the body's end, which hands the connection back to the pool.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	state, err := b.state, b.err
	b.mu.Unlock()
	switch state {
	case stEOF:
		return 0, io.EOF
	case stClosed:
		return 0, ErrBodyClosed
	case stFailed:
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	switch b.kind {
	case kindFixed:
		n, err = b.readFixed(p)
	case kindChunked:
		n, err = b.readChunked(p)
	default:
		n, err = b.pc.br.Read(p)
	}
	if err == nil {
		return n, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == stClosed {
		return n, ErrBodyClosed
	}
	if b.state != stActive { // cannot happen: only Read leaves stActive but for Close
		return n, b.err
	}
	if err == io.EOF {
		b.state = stEOF
		b.pc.release(b.reusable && b.kind != kindUntilClose)
		return n, io.EOF
	}
	b.state, b.err = stFailed, ctxErr(b.ctx, err)
	b.pc.shut()
	return n, b.err
}

func (b *body) readFixed(p []byte) (int, error) {
	if int64(len(p)) > b.remain {
		p = p[:b.remain]
	}
	n, err := b.pc.br.Read(p)
	b.remain -= int64(n)
	if b.remain == 0 {
		return n, io.EOF
	}
	return n, eofUnexpected(err)
}

// readChunked reads chunked data. At the end of a chunk it also consumes
// the final "0" chunk when that is already buffered, so that the last data
// comes with io.EOF and the connection is pooled even if the caller stops
// reading there.
func (b *body) readChunked(p []byte) (int, error) {
	br := b.pc.br
	for {
		switch b.chunk {
		case chunkHeader:
			size, err := b.readChunkSize()
			if err != nil {
				return 0, err
			}
			if size == 0 {
				if err := b.readTrailers(); err != nil {
					return 0, err
				}
				b.chunk = chunkDone
				return 0, io.EOF
			}
			b.remain, b.chunk = size, chunkData
		case chunkData:
			if int64(len(p)) > b.remain {
				p = p[:b.remain]
			}
			n, err := br.Read(p)
			b.remain -= int64(n)
			if b.remain == 0 {
				b.chunk = chunkCRLF
				if br.Buffered() >= len(lastChunk) {
					if peek, _ := br.Peek(len(lastChunk)); string(peek) == lastChunk {
						_, _ = br.Discard(len(lastChunk))
						b.chunk = chunkDone
						return n, io.EOF
					}
				}
			}
			if n > 0 {
				return n, nil
			}
			if err != nil {
				return 0, eofUnexpected(err)
			}
		case chunkCRLF:
			crlf, err := br.Peek(2)
			if err != nil {
				return 0, eofUnexpected(err)
			}
			if string(crlf) != "\r\n" {
				return 0, malformed("no CRLF after chunk data")
			}
			_, _ = br.Discard(2)
			b.chunk = chunkHeader
		default:
			return 0, io.EOF
		}
	}
}

// lastChunk is the end of a chunk's data followed by the last chunk and no
// trailers.
const lastChunk = "\r\n0\r\n\r\n"

// maxChunkLine bounds a chunk-size line, extensions included (as in
// net/http).
const maxChunkLine = 4096

// readChunkLine reads a line of the chunked framing, which must end in
// CRLF (RFC 9112 errata 7633: no bare LF here, unlike in headers) and hold
// no other CR. The line is valid until the next read.
func (b *body) readChunkLine() ([]byte, error) {
	line, err := b.pc.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, malformed("chunked framing line too long")
		}
		return nil, eofUnexpected(err)
	}
	if len(line) > maxChunkLine {
		return nil, malformed("chunked framing line too long")
	}
	if len(line) < 2 || bytes.IndexByte(line, '\r') != len(line)-2 {
		return nil, malformed("chunked framing line without CRLF")
	}
	return line[:len(line)-2], nil
}

// readChunkSize reads a chunk-size line (extensions ignored).
func (b *body) readChunkSize() (int64, error) {
	line, err := b.readChunkLine()
	if err != nil {
		return 0, err
	}
	for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
		line = line[:len(line)-1]
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 || len(line) > 16 {
		return 0, malformed("chunk size " + quoteLine(line))
	}
	var n int64
	for _, c := range line {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, malformed("chunk size " + quoteLine(line))
		}
		if n > math.MaxInt64>>4 {
			return 0, malformed("chunk size " + quoteLine(line))
		}
		n = n<<4 | int64(c)
	}
	return n, nil
}

// readTrailers reads and drops the trailer section, bounded like a header
// section; its lines must end in CRLF too.
func (b *body) readTrailers() error {
	size := 0
	for n := 0; ; n++ {
		line, err := b.readChunkLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if size += len(line) + 2; size > MaxHeaderBytes || n == MaxHeaders {
			return &ProtocolError{Err: ErrHeaderTooLarge, Detail: "trailer section"}
		}
		if _, _, err := splitField(line); err != nil {
			return err
		}
	}
}

// Close ends the body. Before the end it closes the connection (an unread
// rest is not drained); after the end it does nothing.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != stActive {
		return nil
	}
	b.state = stClosed
	b.pc.shut()
	return nil
}

// gzipBody decompresses a body the transport asked gzip for. The gzip
// reader is made on the first Read, so that an empty body reads as empty.
type gzipBody struct {
	b   *body
	zr  *gzip.Reader
	err error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.b)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.b.Close() }
