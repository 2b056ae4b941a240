package replog

// The messages of sqld's wal_log.ReplicationLog service
// (libsql-replication/proto/replication_log.proto), by hand: the client
// encodes two tiny requests and decodes three responses, reading only the
// fields it needs and skipping the rest as proto3 requires.

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// The Protobuf wire types.
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

// handshakeVersion is HelloRequest.handshake_version: 1 asks for session
// tokens instead of sqld's legacy per-address sessions.
const handshakeVersion = 1

// EncodeHelloRequest returns HelloRequest{handshake_version: 1}.
func EncodeHelloRequest() []byte {
	return binary.AppendUvarint([]byte{1<<3 | wireVarint}, handshakeVersion)
}

// EncodeLogOffset returns LogOffset{next_offset: next}, with wal_flavor
// left out (SQLite frames, the default).
func EncodeLogOffset(next uint64) []byte {
	return binary.AppendUvarint([]byte{1<<3 | wireVarint}, next)
}

// Hello is the part of a HelloResponse a replica acts on.
type Hello struct {
	GenerationID    string // field 1
	GenerationStart uint64 // field 2
	LogID           string // field 3
	SessionToken    []byte // field 4, sent back in the x-session-token header
	// ReplicationIndex is field 5, the primary's last committed frame;
	// HasReplicationIndex says it was sent (an empty log has none).
	ReplicationIndex    uint64
	HasReplicationIndex bool
}

// A DecodeError is a message that is not valid Protobuf or not the
// message expected.
type DecodeError struct {
	Message string // the message's name
	Offset  int    // where in it
	Msg     string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("replog: malformed %s at byte %d: %s", e.Message, e.Offset, e.Msg)
}

// DecodeHello decodes a HelloResponse.
func DecodeHello(b []byte) (Hello, error) {
	var h Hello
	d := decoder{msg: "HelloResponse", b: b}
	for !d.done() {
		num, wt, err := d.tag()
		if err != nil {
			return Hello{}, err
		}
		switch {
		case num == 1 && wt == wireLen:
			h.GenerationID, err = d.str()
		case num == 2 && wt == wireVarint:
			h.GenerationStart, err = d.varint()
		case num == 3 && wt == wireLen:
			h.LogID, err = d.str()
		case num == 4 && wt == wireLen:
			var v []byte
			v, err = d.bytes()
			h.SessionToken = append([]byte(nil), v...)
		case num == 5 && wt == wireVarint:
			h.ReplicationIndex, err = d.varint()
			h.HasReplicationIndex = true
		case num <= 5:
			err = d.fail(fmt.Sprintf("field %d has wire type %d", num, wt))
		default:
			err = d.skip(wt)
		}
		if err != nil {
			return Hello{}, err
		}
	}
	if h.LogID == "" {
		return Hello{}, &DecodeError{Message: d.msg, Offset: len(b), Msg: "no log_id"}
	}
	if len(h.SessionToken) == 0 {
		return Hello{}, &DecodeError{Message: d.msg, Offset: len(b), Msg: "no session_token"}
	}
	return h, nil
}

// FramesEach calls f with the data of each Frame of a Frames message
// (repeated Frame frames = 1), in order, without copying: data aliases b.
// It stops at the first error, f's or the decoder's.
func FramesEach(b []byte, f func(data []byte) error) error {
	d := decoder{msg: "Frames", b: b}
	for !d.done() {
		num, wt, err := d.tag()
		if err != nil {
			return err
		}
		switch {
		case num == 1 && wt == wireLen:
			at := d.off
			msg, err := d.bytes()
			if err != nil {
				return err
			}
			data, err := decodeFrameMsg(msg, at)
			if err != nil {
				return err
			}
			if err := f(data); err != nil {
				return err
			}
		case num == 1:
			return d.fail(fmt.Sprintf("field 1 has wire type %d", wt))
		default:
			if err := d.skip(wt); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeFrameMsg returns the data of one Frame message (bytes data = 1),
// as Snapshot streams them; data aliases b.
func DecodeFrameMsg(b []byte) ([]byte, error) { return decodeFrameMsg(b, 0) }

func decodeFrameMsg(b []byte, base int) ([]byte, error) {
	d := decoder{msg: "Frame", b: b, base: base}
	var data []byte
	seen := false
	for !d.done() {
		num, wt, err := d.tag()
		if err != nil {
			return nil, err
		}
		switch {
		case num == 1 && wt == wireLen:
			data, err = d.bytes()
			seen = true
		case num == 1:
			err = d.fail(fmt.Sprintf("field 1 has wire type %d", wt))
		default:
			err = d.skip(wt)
		}
		if err != nil {
			return nil, err
		}
	}
	if !seen {
		return nil, &DecodeError{Message: d.msg, Offset: base + len(b), Msg: "no data"}
	}
	return data, nil
}

// decoder reads Protobuf fields from b; base is b's offset in the outer
// message, for errors.
type decoder struct {
	msg  string
	b    []byte
	off  int
	base int
}

func (d *decoder) done() bool { return d.off >= len(d.b) }

func (d *decoder) fail(msg string) error {
	return &DecodeError{Message: d.msg, Offset: d.base + d.off, Msg: msg}
}

func (d *decoder) varint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, d.fail("truncated or overlong varint")
	}
	d.off += n
	return v, nil
}

func (d *decoder) tag() (num uint64, wt int, err error) {
	v, err := d.varint()
	if err != nil {
		return 0, 0, err
	}
	num, wt = v>>3, int(v&7)
	if num == 0 || num > math.MaxInt32 {
		return 0, 0, d.fail(fmt.Sprintf("field number %d", num))
	}
	return num, wt, nil
}

func (d *decoder) bytes() ([]byte, error) {
	n, err := d.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.off) {
		return nil, d.fail(fmt.Sprintf("length %d past the end of the message", n))
	}
	v := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return v, nil
}

func (d *decoder) str() (string, error) {
	at := d.off
	v, err := d.bytes()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(v) {
		d.off = at
		return "", d.fail("string is not UTF-8")
	}
	return string(v), nil
}

// skip passes over a field of an unknown number. Groups (wire types 3 and
// 4), long deprecated, are refused.
func (d *decoder) skip(wt int) error {
	switch wt {
	case wireVarint:
		_, err := d.varint()
		return err
	case wireI64, wireI32:
		n := 8
		if wt == wireI32 {
			n = 4
		}
		if len(d.b)-d.off < n {
			return d.fail("truncated fixed-size field")
		}
		d.off += n
		return nil
	case wireLen:
		_, err := d.bytes()
		return err
	default:
		return d.fail(fmt.Sprintf("wire type %d", wt))
	}
}
