package protobuf_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/fixture"
)

// msg builds Protobuf messages field by field for the tests, in any order
// and with any mistakes a test wants.
type msg []byte

func (m msg) raw(b ...byte) msg { return append(m, b...) }

func (m msg) varint(v uint64) msg {
	for v >= 0x80 {
		m = append(m, byte(v)|0x80)
		v >>= 7
	}
	return append(m, byte(v))
}

func (m msg) key(num, wt int) msg { return m.varint(uint64(num)<<3 | uint64(wt)) }

func (m msg) uint(num int, v uint64) msg { return m.key(num, 0).varint(v) }

func (m msg) sint(num int, v int64) msg { return m.uint(num, uint64(v<<1)^uint64(v>>63)) }

func (m msg) double(num int, f float64) msg {
	u := math.Float64bits(f)
	m = m.key(num, 1)
	for i := 0; i < 8; i++ {
		m = append(m, byte(u>>(8*i)))
	}
	return m
}

func (m msg) bytes(num int, b []byte) msg {
	return append(m.key(num, 2).varint(uint64(len(b))), b...)
}

func (m msg) str(num int, s string) msg { return m.bytes(num, []byte(s)) }

func (m msg) sub(num int, parts ...msg) msg {
	var b msg
	for _, p := range parts {
		b = append(b, p...)
	}
	return m.bytes(num, b)
}

func f() msg { return nil }

// Values.
func vNull() msg           { return f().sub(1) }
func vInt(v int64) msg     { return f().sint(2, v) }
func vFloat(x float64) msg { return f().double(3, x) }
func vText(s string) msg   { return f().str(4, s) }
func vBlob(b []byte) msg   { return f().bytes(5, b) }

// row is a Row message of the given values.
func row(vals ...msg) msg {
	var m msg
	for _, v := range vals {
		m = m.sub(1, v)
	}
	return m
}

func col(name, decl string) msg {
	m := f().str(1, name)
	if decl != "" {
		m = m.str(2, decl)
	}
	return m
}

// pipeline wraps StreamResult messages in a PipelineRespBody.
func pipeline(results ...msg) msg {
	var m msg
	for _, r := range results {
		m = m.sub(3, r)
	}
	return m
}

// okMember is a StreamResult ok with the response member num holding body.
func okMember(num int, body msg) msg { return f().sub(1, f().sub(num, body)) }

// execResult is a StreamResult holding an execute result.
func execResult(result msg) msg { return okMember(2, f().sub(1, result)) }

// benchResponse is the Protobuf form of fixture.Response(n): the execute
// result of fixture.Query over rows 1..n and a close result, laid out as
// sqld 0.24.32's prost encoder writes it (fields in number order, zero
// values and absent options left out).
func benchResponse(n int) []byte {
	res := make(msg, 0, 128+n*90)
	for _, c := range [][2]string{{"a", "INTEGER"}, {"b", "TEXT"}, {"c", "REAL"}, {"d", "BLOB"}, {"e", "TEXT"}, {"f", "INTEGER"}} {
		res = res.sub(1, col(c[0], c[1]))
	}
	for i := 1; i <= n; i++ {
		r := fixture.MakeRow(i)
		e := vNull()
		if r.E != nil {
			e = vText(*r.E)
		}
		res = res.sub(2, row(vInt(r.A), vText(r.B), vFloat(r.C), vBlob(r.D), e, vInt(r.F)))
	}
	res = res.uint(5, uint64(n)+2).uint(6, uint64(n)).double(8, 12.345)
	return pipeline(execResult(res), okMember(1, nil))
}

// checkEncodeFailed fails t unless err is an EncodeError of this codec,
// wrapping errIs if that is not nil, and out, what the encoder returned
// for the destination "keep", is that destination unchanged.
func checkEncodeFailed(t *testing.T, out []byte, err, errIs error) {
	t.Helper()
	var ee *codec.EncodeError
	if !errors.As(err, &ee) || ee.Codec != protobuf.Name {
		t.Fatalf("error %#v, want a *codec.EncodeError", err)
	}
	if errIs != nil && !errors.Is(err, errIs) {
		t.Fatalf("%v does not wrap %v", err, errIs)
	}
	if string(out) != "keep" {
		t.Fatalf("dst became %q", out)
	}
}

// checkAppends calls appendTo with a destination holding "prefix" and fails
// t unless it returns no error and the prefix followed by want.
func checkAppends(t *testing.T, want msg, appendTo func(dst []byte) ([]byte, error)) {
	t.Helper()
	prefix := []byte("prefix")
	got, err := appendTo(bytes.Clone(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatal("dst's bytes were not kept")
	}
	if !bytes.Equal(got[len(prefix):], want) {
		t.Fatalf("got  %x\nwant %x", trimHex(got[len(prefix):]), trimHex(want))
	}
}
