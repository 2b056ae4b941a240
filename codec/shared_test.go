package codec

import (
	"math"
	"strconv"
	"testing"
)

func TestEntryMembers(t *testing.T) {
	for m := range NumEntryMembers {
		got, ok := ParseEntryMember(m.String())
		if !ok || got != m {
			t.Errorf("ParseEntryMember(%q) = %d, %v; want %d", m.String(), got, ok, m)
		}
		if got, ok := ParseEntryMember([]byte(m.String())); !ok || got != m {
			t.Errorf("ParseEntryMember([]byte(%q)) = %d, %v", m.String(), got, ok)
		}
	}
	for _, name := range []string{"type", "", "Step", "rows"} {
		if m, ok := ParseEntryMember(name); ok {
			t.Errorf("ParseEntryMember(%q) = %d, true; want false", name, m)
		}
	}
	if NumEntryMembers.String() != "" || EntryType(200).Members() != 0 {
		t.Error("out-of-range member or entry type is not empty")
	}
	// Every member belongs to some known entry type, and only step and
	// error are shared.
	var all EntryMembers
	for typ := EntryStepBegin; typ <= EntryReplicationIndex; typ++ {
		all |= typ.Members()
	}
	if all != 1<<NumEntryMembers-1 || EntryUnknown.Members() != 0 {
		t.Errorf("members of the entry types: %b", all)
	}
	if !EntryStepError.Members().Has(MemberError) || EntryStepEnd.Members().Has(MemberStep) {
		t.Error("wrong members for step_error or step_end")
	}
}

func TestHasResult(t *testing.T) {
	for typ := RequestUnknown; typ <= RequestGetAutocommit+1; typ++ {
		want := typ == RequestExecute || typ == RequestBatch || typ == RequestDescribe
		if typ.HasResult() != want {
			t.Errorf("%q.HasResult() = %v", typ, !want)
		}
	}
	for typ := SocketUnknown; typ <= SocketGetAutocommit+1; typ++ {
		want := typ == SocketExecute || typ == SocketBatch || typ == SocketDescribe
		if typ.HasResult() != want {
			t.Errorf("%q.HasResult() = %v", typ, !want)
		}
	}
}

func TestSocketType(t *testing.T) {
	for typ := RequestUnknown; typ <= RequestGetAutocommit+1; typ++ {
		want := ParseSocketRequestType(typ.String())
		if typ == RequestClose {
			want = SocketCloseStream
		}
		if got := typ.SocketType(); got != want {
			t.Errorf("%d.SocketType() = %q, want %q", typ, got, want)
		}
	}
}

func TestTrimBase64(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"qw", "qw", true},
		{"qw==", "qw", true},
		{"+/8=", "+/8", true},
		{"AAEC", "AAEC", true},
		{"qw=", "", false},
		{"qw===", "", false},
		{"q===", "", false},
		{"====", "", false},
		{"=", "", false},
		{"==", "", false},
		{"qw\n", "", false},
		{"q\r\nw", "", false},
		{"q\n==", "", false},
	} {
		got, err := TrimBase64([]byte(c.in))
		if (err == nil) != c.ok || string(got) != c.want {
			t.Errorf("TrimBase64(%q) = %q, %v", c.in, got, err)
		}
	}
	// Strict: "qx" has non-zero trailing bits.
	if _, err := Base64.DecodeString("qx"); err == nil {
		t.Error(`Base64 accepts "qx"`)
	}
	if got := string(Base64.AppendEncode(nil, []byte{0xab})); got != "qw" {
		t.Errorf("Base64 encodes 0xab as %q; want unpadded qw", got)
	}
}

func TestAppendFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{1e21, "1e+21"},
		{1e20, "1e+20"},
		{123456, "123456.0"},
		{1234567, "1.234567e+06"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
	} {
		got, ok := AppendFloat([]byte("x"), c.f)
		if !ok || string(got) != "x"+c.want {
			t.Errorf("AppendFloat(%v) = %q, %v; want %q", c.f, got, ok, "x"+c.want)
			continue
		}
		if back, err := strconv.ParseFloat(string(got[1:]), 64); err != nil || math.Float64bits(back) != math.Float64bits(c.f) {
			t.Errorf("%q does not parse back to %v", got[1:], c.f)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if EncodableFloat(f) {
			t.Errorf("EncodableFloat(%v) = true", f)
		}
		if got, ok := AppendFloat([]byte("x"), f); ok || string(got) != "x" {
			t.Errorf("AppendFloat(%v) = %q, %v; want x, false", f, got, ok)
		}
	}
}

// TestStreamTypeInvertsSocketType: every request type with a socket
// counterpart maps there and back; the socket-only ones have none.
func TestStreamTypeInvertsSocketType(t *testing.T) {
	for rt := RequestUnknown + 1; rt.String() != ""; rt++ {
		st := rt.SocketType()
		if st == SocketUnknown {
			t.Errorf("%v has no socket type", rt)
			continue
		}
		if back := st.StreamType(); back != rt {
			t.Errorf("%v -> %v -> %v", rt, st, back)
		}
	}
	for _, st := range []SocketRequestType{SocketOpenStream, SocketOpenCursor, SocketFetchCursor, SocketCloseCursor, SocketUnknown} {
		if rt := st.StreamType(); rt != RequestUnknown {
			t.Errorf("%v -> %v, want none", st, rt)
		}
	}
}
