package localdb

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Position is how far the local file has applied its primary's log.
type Position struct {
	// Next is the frame_no to ask for next: the last applied frame's,
	// plus one; 0 for a file that has applied nothing.
	Next uint64
	// Log identifies the log the frames came from: the first 12 bytes of
	// its log_id, a UUID (a primary whose log restarted has a new one).
	Log LogID
}

// LogID is the part of a log_id a Position keeps.
type LogID [12]byte

// ParseLogID returns the LogID of a log_id as Hello reports it.
func ParseLogID(s string) (LogID, error) {
	var id LogID
	raw, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("localdb: log_id %q is not a UUID", s)
	}
	copy(id[:], raw)
	return id, nil
}

func (id LogID) String() string { return hex.EncodeToString(id[:]) }

// The Position lives in page 1, bytes 72 to 91 of the database header,
// which SQLite reserves for expansion and neither reads nor checks: so it
// is written in the same local transaction as the pages it describes, and
// no crash can leave the two out of step. SQLite creates files with zeros
// there, and the primary's page 1 has zeros too; every page 1 written to
// the local file is stamped first.
const (
	stampOff = 72
	stampLen = 20
)

// errNoStamp is a page 1 whose reserved bytes are all zero: a file that
// this package did not write.
var errNoStamp = errors.New("localdb: the file has no replication position (it was not written by a replica)")

func stamp(page1 []byte, p Position) {
	b := page1[stampOff : stampOff+stampLen]
	binary.BigEndian.PutUint64(b[:8], p.Next)
	copy(b[8:], p.Log[:])
}

func readStamp(page1 []byte) (Position, error) {
	b := page1[stampOff : stampOff+stampLen]
	var p Position
	p.Next = binary.BigEndian.Uint64(b[:8])
	copy(p.Log[:], b[8:])
	if p.Next == 0 {
		return Position{}, errNoStamp
	}
	return p, nil
}
