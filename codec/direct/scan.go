package direct

import (
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gohrana/libsql/codec"
)

// This file holds the JSON scanner: whitespace, strings, numbers, literals,
// object and array iteration, and a validating skip of any value. Message
// decoding is in pipeline.go, cursor.go, values.go and scalars.go.

// kind is the JSON type of a scanned value.
type kind uint8

const (
	kindNone kind = iota // field absent
	kindNull
	kindBool
	kindString
	kindNumber
	kindObject
	kindArray
)

// span records where a value sits in the input, so that it can be
// interpreted (or decoded again) after the enclosing object has been read.
type span struct {
	start, end int // the value's bytes, quotes included for strings
	depth      int // nesting depth of the enclosing container
	kind       kind
	esc        bool // kindString: holds escape sequences
	isInt      bool // kindNumber: no fraction and no exponent
}

// state is the per-decode scratch memory. It comes from statePool, so a
// state is used by one decode at a time.
type state struct {
	// chunk is the current arena chunk: unescaped text values and decoded
	// blobs are carved out of it. len(chunk) is the part already handed
	// out; that part is never written again, and a full chunk is dropped,
	// never moved.
	chunk []byte
	// keyBuf and scratch hold unescaped keys and short-lived strings.
	keyBuf, scratch []byte
	// hint is the capacity of a large chunk dropped by release, used to
	// size the next chunk.
	hint int
	// flags marks, per batch step, which of step_results (1) and
	// step_errors (2) held an object.
	flags []uint8
	// intern maps short strings (column names, decltypes, codes) to a
	// shared copy.
	intern map[string]string
}

const (
	minChunk      = 4 << 10
	maxKeptChunk  = 1 << 20 // larger chunks are not kept in the pool
	maxInternLen  = 64
	maxInternSize = 1024
)

var statePool = sync.Pool{New: func() any {
	return &state{intern: make(map[string]string)}
}}

// str returns b as a string. It returns old when b equals it (the string
// that was in the same place of the reused destination), then tries the
// intern cache when intern is set, and only then allocates.
func (st *state) str(b []byte, old string, intern bool) string {
	if string(b) == old {
		return old
	}
	if len(b) == 0 {
		return ""
	}
	if !intern || len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := st.intern[string(b)]; ok {
		return s
	}
	if len(st.intern) >= maxInternSize {
		clear(st.intern)
	}
	s := string(b)
	st.intern[s] = s
	return s
}

// decoder scans one input. It lives on the caller's stack.
type decoder struct {
	data  []byte
	pos   int
	depth int
	st    *state
}

func newDecoder(data []byte) decoder {
	return decoder{data: data, st: statePool.Get().(*state)}
}

func (d *decoder) release() {
	st := d.st
	d.st = nil
	// Do not keep large transient buffers alive in the pool.
	if cap(st.scratch) > 64<<10 {
		st.scratch = nil
	}
	if cap(st.keyBuf) > 64<<10 {
		st.keyBuf = nil
	}
	if cap(st.flags) > 64<<10 {
		st.flags = nil
	}
	if cap(st.chunk) > maxKeptChunk {
		st.hint = cap(st.chunk)
		st.chunk = nil
	}
	statePool.Put(st)
}

// alloc returns an empty slice with capacity n from the arena. from is the
// offset of the input value the bytes are produced from: everything decoded
// from data[from:] fits in len(data)-from bytes, which bounds new chunks.
// Chunk sizes otherwise double, so a decode allocates O(log n) chunks at
// most, and usually one or none. The caller fills the slice within its
// capacity and calls commit.
func (d *decoder) alloc(n, from int) []byte {
	st := d.st
	l := len(st.chunk)
	if cap(st.chunk)-l < n {
		size := max(2*cap(st.chunk), st.hint, minChunk)
		size = min(size, len(d.data)-from)
		size = max(size, n)
		st.chunk = make([]byte, 0, size)
		st.hint = 0
		l = 0
	}
	return st.chunk[l:l:(l + n)]
}

// commit marks the first n bytes after the used part of the chunk as
// handed out and returns them with their capacity clipped.
func (d *decoder) commit(n int) []byte {
	st := d.st
	l := len(st.chunk)
	st.chunk = st.chunk[:l+n]
	return st.chunk[l : l+n : l+n]
}

// ---- errors ----

func errAt(off int, msg string) error {
	return &codec.DecodeError{Codec: Name, Offset: off, Msg: msg}
}

func (d *decoder) eof() error {
	return errAt(len(d.data), "unexpected end of input")
}

func fieldErr(off int, field, msg string) error {
	return errAt(off, "field \""+field+"\": "+msg)
}

// jsonKind names the JSON value starting with c, for error messages.
func jsonKind(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "invalid JSON"
}

func (d *decoder) typeErr(field, want string) error {
	got := "end of input"
	if d.pos < len(d.data) {
		got = jsonKind(d.data[d.pos])
	}
	return fieldErr(d.pos, field, "expected "+want+", got "+got)
}

// ---- input checks ----

// begin checks that the whole input is valid UTF-8 and that it starts with
// an object.
func (d *decoder) begin() error {
	if !utf8.Valid(d.data) {
		off := 0
		for off < len(d.data) {
			r, size := utf8.DecodeRune(d.data[off:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			off += size
		}
		return &codec.DecodeError{Codec: Name, Offset: off, Msg: "input is not valid UTF-8", Err: codec.ErrInvalidUTF8}
	}
	d.skipWS()
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != '{' {
		return errAt(d.pos, "expected a JSON object, got "+jsonKind(d.data[d.pos]))
	}
	return nil
}

// finish checks that only whitespace follows the top-level value.
func (d *decoder) finish() error {
	d.skipWS()
	if d.pos != len(d.data) {
		return errAt(d.pos, "unexpected data after the top-level value")
	}
	return nil
}

// ---- tokens ----

func (d *decoder) skipWS() {
	data, i := d.data, d.pos
	for i < len(data) {
		if c := data[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		i++
	}
	d.pos = i
}

// strPlain[c] is true for bytes that stand for themselves inside a string.
// Input is known to be valid UTF-8, so bytes >= 0x80 need no check here.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = false, false
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scanString scans the string starting at d.pos (a '"') and leaves d.pos
// after its closing quote. It validates escapes and rejects raw control
// bytes; esc reports whether the string holds escape sequences.
func (d *decoder) scanString() (esc bool, err error) {
	data := d.data
	i := d.pos + 1
	for {
		for i < len(data) && strPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			return esc, d.eof()
		}
		switch c := data[i]; c {
		case '"':
			d.pos = i + 1
			return esc, nil
		case '\\':
			esc = true
			if i+1 >= len(data) {
				return esc, d.eof()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return esc, d.eof()
				}
				if !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return esc, errAt(i, "invalid \\u escape in string")
				}
				i += 6
			default:
				return esc, errAt(i, "invalid escape sequence in string")
			}
		default:
			return esc, errAt(i, "control character in string")
		}
	}
}

func hexVal(c byte) rune {
	switch {
	case c <= '9':
		return rune(c - '0')
	case c >= 'a':
		return rune(c-'a') + 10
	}
	return rune(c-'A') + 10
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// unescape appends the unescaped form of s, the inside of a string that
// scanString accepted, to dst. The result is never longer than s. Surrogate
// pairs are combined; a lone surrogate becomes U+FFFD, as in encoding/json.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) { // cannot happen after scanString
			return dst
		}
		c := s[i+1]
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+6 > len(s) { // cannot happen after scanString
				return dst
			}
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r1 := utf8.RuneError
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r1 = utf16.DecodeRune(r, hex4(s[i+2:i+6]))
				}
				if r1 != utf8.RuneError {
					i += 6
				}
				r = r1
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
		i += 2
	}
	return dst
}

// scanNumber scans a JSON number (RFC 8259 grammar) at d.pos and leaves
// d.pos after it. isInt reports that it has no fraction and no exponent.
func (d *decoder) scanNumber() (isInt bool, err error) {
	data := d.data
	start, i := d.pos, d.pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return false, d.eof()
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return false, errAt(start, "invalid number")
	}
	isInt = true
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return false, errAt(start, "invalid number: no digit after the decimal point")
		}
		i = skipDigits(data, i)
		isInt = false
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return false, errAt(start, "invalid number: no digit in the exponent")
		}
		i = skipDigits(data, i)
		isInt = false
	}
	d.pos = i
	return isInt, nil
}

// skipDigits returns the index of the first byte of data at or after i
// that is not an ASCII digit.
func skipDigits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// literal consumes the literal lit ("true", "false" or "null") at d.pos.
func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return nil
	}
	return errAt(d.pos, "invalid literal")
}

// ---- containers ----

// open enters the object or array whose opening byte is at d.pos.
func (d *decoder) open() error {
	if d.depth >= codec.MaxDepth {
		return errAt(d.pos, "JSON nested too deeply")
	}
	d.depth++
	d.pos++
	return nil
}

// nextKey moves to the next member of the object being read and returns
// its key, leaving d.pos at the member's value. It returns ok == false
// after the closing brace. n counts the members read so far. The key may
// point into scratch memory that the next key overwrites.
func (d *decoder) nextKey(n *int) (key []byte, ok bool, err error) {
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, false, d.eof()
	}
	c := d.data[d.pos]
	if c == '}' {
		d.pos++
		d.depth--
		return nil, false, nil
	}
	if *n > 0 {
		if c != ',' {
			return nil, false, errAt(d.pos, "expected ',' or '}' after object member")
		}
		d.pos++
		d.skipWS()
		if d.pos >= len(d.data) {
			return nil, false, d.eof()
		}
		c = d.data[d.pos]
	}
	if c != '"' {
		return nil, false, errAt(d.pos, "expected a string key")
	}
	*n++
	start := d.pos
	esc, err := d.scanString()
	if err != nil {
		return nil, false, err
	}
	key = d.data[start+1 : d.pos-1]
	if esc {
		d.st.keyBuf = unescape(d.st.keyBuf[:0], key)
		key = d.st.keyBuf
	}
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, false, d.eof()
	}
	if d.data[d.pos] != ':' {
		return nil, false, errAt(d.pos, "expected ':' after object key")
	}
	d.pos++
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, false, d.eof()
	}
	return key, true, nil
}

// nextElem moves to the next element of the array being read, leaving
// d.pos at it. It returns false after the closing bracket. n counts the
// elements read so far.
func (d *decoder) nextElem(n *int) (bool, error) {
	d.skipWS()
	if d.pos >= len(d.data) {
		return false, d.eof()
	}
	c := d.data[d.pos]
	if c == ']' {
		d.pos++
		d.depth--
		return false, nil
	}
	if *n > 0 {
		if c != ',' {
			return false, errAt(d.pos, "expected ',' or ']' after array element")
		}
		d.pos++
		d.skipWS()
		if d.pos >= len(d.data) {
			return false, d.eof()
		}
	}
	*n++
	return true, nil
}

// skipValue validates and skips the value at d.pos and returns its span.
func (d *decoder) skipValue() (span, error) {
	d.skipWS()
	sp := span{start: d.pos, depth: d.depth}
	if d.pos >= len(d.data) {
		return sp, d.eof()
	}
	var err error
	switch c := d.data[d.pos]; c {
	case '"':
		sp.kind = kindString
		sp.esc, err = d.scanString()
	case '{':
		sp.kind = kindObject
		err = d.skipObject()
	case '[':
		sp.kind = kindArray
		err = d.skipArray()
	case 't':
		sp.kind = kindBool
		err = d.literal("true")
	case 'f':
		sp.kind = kindBool
		err = d.literal("false")
	case 'n':
		sp.kind = kindNull
		err = d.literal("null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return sp, errAt(d.pos, "unexpected character, expected a JSON value")
		}
		sp.kind = kindNumber
		sp.isInt, err = d.scanNumber()
	}
	sp.end = d.pos
	return sp, err
}

func (d *decoder) skipObject() error {
	if err := d.open(); err != nil {
		return err
	}
	n := 0
	for {
		_, ok, err := d.nextKey(&n)
		if err != nil || !ok {
			return err
		}
		if _, err := d.skipValue(); err != nil {
			return err
		}
	}
}

func (d *decoder) skipArray() error {
	if err := d.open(); err != nil {
		return err
	}
	n := 0
	for {
		ok, err := d.nextElem(&n)
		if err != nil || !ok {
			return err
		}
		if _, err := d.skipValue(); err != nil {
			return err
		}
	}
}

// seek moves the decoder to a recorded span and returns what restore needs
// to come back.
func (d *decoder) seek(sp span) (pos, depth int) {
	pos, depth = d.pos, d.depth
	d.pos, d.depth = sp.start, sp.depth
	return pos, depth
}

func (d *decoder) restore(pos, depth int) {
	d.pos, d.depth = pos, depth
}

// rawString returns the inside of the string span sp, unescaped into
// scratch memory (valid until the next use of scratch) if needed.
func (d *decoder) rawString(sp span) []byte {
	b := d.data[sp.start+1 : sp.end-1]
	if sp.esc {
		d.st.scratch = unescape(d.st.scratch[:0], b)
		return d.st.scratch
	}
	return b
}
