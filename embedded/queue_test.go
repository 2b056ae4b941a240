package embedded

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestQueueRoundTrip(t *testing.T) {
	when := time.Date(2026, 12, 2, 16, 45, 1, 123456789, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name  string
		stmts []queuedStmt
	}{
		{"one", []queuedStmt{{SQL: "INSERT INTO t VALUES (1)", Changes: 1}}},
		{"ddl", []queuedStmt{{SQL: "CREATE TABLE t (x)", Changes: -1}}},
		{"every type", []queuedStmt{{SQL: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", Changes: 1, Args: []queuedArg{
			{Value: nil}, {Value: int64(math.MinInt64)}, {Value: math.Inf(-1)}, {Value: "tèxt"}, {Value: []byte{0, 1, 2}},
			{Value: true}, {Value: false}, {Value: when}, {Value: []byte{}},
		}}}},
		{"named", []queuedStmt{{SQL: "UPDATE t SET x = :x", Changes: 7, Args: []queuedArg{{Name: "x", Value: int64(3)}}}}},
		{"several", []queuedStmt{{SQL: "a", Changes: 0}, {SQL: "", Changes: -1}, {SQL: "c", Changes: 1 << 40}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeTxn(tc.stmts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeTxn(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				for j, a := range got[i].Args {
					if w, ok := a.Value.(time.Time); ok {
						if !w.Equal(when) {
							t.Fatalf("time %v, want %v", w, when)
						}
						got[i].Args[j].Value = when
					}
				}
			}
			if !reflect.DeepEqual(got, tc.stmts) {
				t.Fatalf("got %#v\nwant %#v", got, tc.stmts)
			}
			// Every cut is refused, not a panic.
			for n := range len(b) {
				if _, err := decodeTxn(b[:n]); !errors.Is(err, errQueueEntry) {
					t.Fatalf("cut at %d: %v", n, err)
				}
			}
		})
	}
}

func TestQueueRefusesOtherTypes(t *testing.T) {
	if _, err := encodeTxn([]queuedStmt{{SQL: "x", Args: []queuedArg{{Value: struct{}{}}}}}); err == nil {
		t.Fatal("a struct was queued")
	}
}

func FuzzDecodeTxn(f *testing.F) {
	b, _ := encodeTxn([]queuedStmt{{SQL: "INSERT INTO t VALUES (?, ?)", Changes: 1, Args: []queuedArg{{Value: int64(1)}, {Name: "n", Value: "x"}}}})
	f.Add(b)
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		stmts, err := decodeTxn(data)
		if err != nil {
			return
		}
		again, err := encodeTxn(stmts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeTxn(again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
	})
}

func TestChunkLen(t *testing.T) {
	many := make([]queued, 2500)
	for i := range many {
		many[i].size = 100
	}
	big := []queued{{size: maxPushBytes * 2}, {size: 10}}
	half := []queued{{size: maxPushBytes / 2}, {size: maxPushBytes / 2}, {size: 1}}
	for _, tc := range []struct {
		name string
		txns []queued
		want int
	}{
		{"none", nil, 0},
		{"by count", many, maxPushTxns},
		{"the rest", many[2000:], 500},
		{"one larger than the bound", big, 1},
		{"by bytes", half, 2},
	} {
		if got := chunkLen(tc.txns); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
