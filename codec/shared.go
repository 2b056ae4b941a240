package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math"
	"strconv"
)

// This file holds the protocol knowledge that every codec applies the same
// way: which members each cursor entry type carries, and the wire's base64
// and float rules. (Which members each response type carries is with the
// request types: RequestType.SocketType, SocketRequestType.HasResult.)
// Codecs share these tables and rules but each keeps its own JSON scanning
// and number parsing, so that one codec stays an independent check on
// another.

// EntryMember is a member of a cursor entry other than "type".
type EntryMember uint8

// The cursor entry members.
const (
	MemberStep             EntryMember = iota // "step"
	MemberCols                                // "cols"
	MemberRow                                 // "row"
	MemberAffectedRowCount                    // "affected_row_count"
	MemberLastInsertRowID                     // "last_insert_rowid"
	MemberError                               // "error"
	MemberReplicationIndex                    // "replication_index"

	// NumEntryMembers is the number of entry members, for arrays indexed
	// by EntryMember.
	NumEntryMembers
)

var entryMemberNames = [NumEntryMembers]string{
	MemberStep:             "step",
	MemberCols:             "cols",
	MemberRow:              "row",
	MemberAffectedRowCount: "affected_row_count",
	MemberLastInsertRowID:  "last_insert_rowid",
	MemberError:            "error",
	MemberReplicationIndex: "replication_index",
}

// String returns the wire name of the member.
func (m EntryMember) String() string {
	if m < NumEntryMembers {
		return entryMemberNames[m]
	}
	return ""
}

// ParseEntryMember maps a member name of a cursor entry to its EntryMember.
// ok is false for "type" and for names that are no entry member.
func ParseEntryMember[S ~string | ~[]byte](name S) (m EntryMember, ok bool) {
	// A switch rather than a loop over entryMemberNames: this runs for
	// every member of every entry.
	switch string(name) {
	case "step":
		return MemberStep, true
	case "cols":
		return MemberCols, true
	case "row":
		return MemberRow, true
	case "affected_row_count":
		return MemberAffectedRowCount, true
	case "last_insert_rowid":
		return MemberLastInsertRowID, true
	case "error":
		return MemberError, true
	case "replication_index":
		return MemberReplicationIndex, true
	}
	return 0, false
}

// EntryMembers is a set of EntryMembers.
type EntryMembers uint8

// Has reports whether m is in the set.
func (s EntryMembers) Has(m EntryMember) bool { return s&(1<<m) != 0 }

// entryMembers[t] is the set of members that entries of type t carry.
var entryMembers = [...]EntryMembers{
	EntryUnknown:          0,
	EntryStepBegin:        1<<MemberStep | 1<<MemberCols,
	EntryStepEnd:          1<<MemberAffectedRowCount | 1<<MemberLastInsertRowID,
	EntryStepError:        1<<MemberStep | 1<<MemberError,
	EntryRow:              1 << MemberRow,
	EntryError:            1 << MemberError,
	EntryReplicationIndex: 1 << MemberReplicationIndex,
}

// Members returns the members that entries of type t carry. Decoders
// ignore the other members, whatever their JSON type, like unknown fields.
func (t EntryType) Members() EntryMembers {
	if int(t) < len(entryMembers) {
		return entryMembers[t]
	}
	return 0
}

// Base64 is the encoding of blob payloads: the standard alphabet, written
// without padding. Decoding is strict (non-zero trailing bits are an
// error); give it the payload TrimBase64 returns, since the wire may pad.
// Codecs must not modify it.
var Base64 = base64.RawStdEncoding.Strict()

var (
	errBase64Padding   = errors.New("invalid base64 padding")
	errBase64LineBreak = errors.New("line break in base64")
)

// TrimBase64 checks the rules of a blob's base64 string s that Base64
// does not enforce and returns s without its padding. Padding is optional,
// but if s ends in "=" it must be exact: s is a multiple of 4 long and ends
// in at most two "=". Line breaks, which encoding/base64 would skip, are an
// error.
func TrimBase64(s []byte) ([]byte, error) {
	if n := len(s); n > 0 && s[n-1] == '=' {
		pad := 1
		if n >= 2 && s[n-2] == '=' {
			pad = 2
		}
		if n%4 != 0 || n > pad && s[n-pad-1] == '=' {
			return nil, errBase64Padding
		}
		s = s[:n-pad]
	}
	// Two IndexByte calls (vectorized) beat one loop over both bytes.
	if bytes.IndexByte(s, '\n') >= 0 || bytes.IndexByte(s, '\r') >= 0 {
		return nil, errBase64LineBreak
	}
	return s, nil
}

// EncodableFloat reports whether f can be sent: JSON has no NaN or
// infinities.
func EncodableFloat(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// AppendFloat appends f as a JSON number in the shortest form that parses
// back to f, adding ".0" when that form has neither fraction nor exponent:
// the server reads an integer literal as an integer, which would lose the
// sign of -0. For f that is not EncodableFloat it returns dst unchanged and
// false.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if !EncodableFloat(f) {
		return dst, false
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	for _, c := range dst[n:] {
		if c == '.' || c == 'e' {
			return dst, true
		}
	}
	return append(dst, ".0"...), true
}
