// Package arena boxes values into interfaces and strings without one heap
// allocation per value. It is the driver's only use of package unsafe.
//
// Lifetime argument. A Boxer appends each value to a chunk (a slice it
// allocates with room for chunkSize values) and returns an interface whose
// data word points at that element. A chunk is written only by appending:
// no element is ever changed after it has been handed out, and a full chunk
// is abandoned, never cleared or reused. The garbage collector keeps a chunk
// alive while any interface points into it (interior pointers keep their
// whole allocation alive). So every interface a Boxer returns stays valid and
// unchanged for as long as the caller holds it, after any later call and
// after the Boxer itself is gone. The tests check exactly that.
//
// String builds a string that shares memory with a byte slice. That is safe
// only while the bytes are never written again; the caller promises this
// (the driver passes response bodies it never reuses).
package arena

import "unsafe"

// Chunks start small, so that a one-row result allocates little, and
// double up to maxChunk values, which makes the allocations per value
// negligible for large results.
const (
	firstChunk = 8
	maxChunk   = 512
)

// nextCap returns the capacity of the chunk after one of capacity c.
func nextCap(c int) int { return min(max(2*c, firstChunk), maxChunk) }

// eface is the runtime layout of an empty interface.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeOf(x any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&x)).typ }

var (
	int64Type   = typeOf(int64(0))
	float64Type = typeOf(float64(0))
	stringType  = typeOf("")
	bytesType   = typeOf([]byte(nil))
)

// Boxer hands out interfaces backed by append-only chunks. The zero value
// is ready to use. A Boxer is not safe for concurrent use.
type Boxer struct {
	ints   []int64
	floats []float64
	strs   []string
	blobs  [][]byte
}

func box(typ unsafe.Pointer, p unsafe.Pointer) any {
	return *(*any)(unsafe.Pointer(&eface{typ: typ, data: p}))
}

// Int64 returns v as an interface holding an int64.
func (b *Boxer) Int64(v int64) any {
	if len(b.ints) == cap(b.ints) {
		b.ints = make([]int64, 0, nextCap(cap(b.ints)))
	}
	b.ints = append(b.ints, v)
	return box(int64Type, unsafe.Pointer(&b.ints[len(b.ints)-1]))
}

// Float64 returns v as an interface holding a float64.
func (b *Boxer) Float64(v float64) any {
	if len(b.floats) == cap(b.floats) {
		b.floats = make([]float64, 0, nextCap(cap(b.floats)))
	}
	b.floats = append(b.floats, v)
	return box(float64Type, unsafe.Pointer(&b.floats[len(b.floats)-1]))
}

// String returns s as an interface holding a string.
func (b *Boxer) String(s string) any {
	if len(b.strs) == cap(b.strs) {
		b.strs = make([]string, 0, nextCap(cap(b.strs)))
	}
	b.strs = append(b.strs, s)
	return box(stringType, unsafe.Pointer(&b.strs[len(b.strs)-1]))
}

// Bytes returns p as an interface holding a []byte (the slice header is
// boxed; the bytes are shared, not copied).
func (b *Boxer) Bytes(p []byte) any {
	if len(b.blobs) == cap(b.blobs) {
		b.blobs = make([][]byte, 0, nextCap(cap(b.blobs)))
	}
	b.blobs = append(b.blobs, p)
	return box(bytesType, unsafe.Pointer(&b.blobs[len(b.blobs)-1]))
}

// String returns a string sharing p's memory. The caller must never write
// to p's bytes again.
func String(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	return unsafe.String(&p[0], len(p))
}
