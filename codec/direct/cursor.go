package direct

// This file: cursor responses, the header line and the entries after it.

import (
	"math"

	"github.com/gohrana/libsql/codec"
)

// DecodeCursorHeader decodes the first line of a cursor response.
func (jsonCodec) DecodeCursorHeader(line []byte, h *codec.CursorHeader) error {
	if h == nil {
		return nilDest()
	}
	old := *h
	*h = codec.CursorHeader{}
	d := newDecoder(line)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "baton":
			h.Baton, err = d.readGoString("baton", old.Baton, false)
		case "base_url":
			h.BaseURL, err = d.readGoString("base_url", old.BaseURL, true)
		default:
			_, err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	return d.finish()
}

// ---- cursor entries ----

// The members of a cursor entry, as bit positions.
const (
	fStep = iota
	fCols
	fRow
	fAffected
	fLastID
	fError
	fRepl
	numEntryFields
)

// entryFields[t] has bit f set when member f belongs to entries of type t.
var entryFields = [...]uint8{
	codec.EntryUnknown:          0,
	codec.EntryStepBegin:        1<<fStep | 1<<fCols,
	codec.EntryStepEnd:          1<<fAffected | 1<<fLastID,
	codec.EntryStepError:        1<<fStep | 1<<fError,
	codec.EntryRow:              1 << fRow,
	codec.EntryError:            1 << fError,
	codec.EntryReplicationIndex: 1 << fRepl,
}

func entryField(key []byte) int {
	switch string(key) {
	case "step":
		return fStep
	case "cols":
		return fCols
	case "row":
		return fRow
	case "affected_row_count":
		return fAffected
	case "last_insert_rowid":
		return fLastID
	case "error":
		return fError
	case "replication_index":
		return fRepl
	}
	return -1
}

// DecodeCursorEntry decodes one line of a cursor response after the header.
// Entries of an unknown type, or without a type, decode as EntryUnknown.
func (jsonCodec) DecodeCursorEntry(line []byte, e *codec.CursorEntry) error {
	if e == nil {
		return nilDest()
	}
	oldErr := e.Error
	e.Reset()
	d := newDecoder(line)
	defer d.release()
	if err := d.begin(); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	typ := codec.EntryUnknown
	var spans [numEntryFields]span
	var done [numEntryFields]bool
	for n := 0; ; {
		key, ok, err := d.nextKey(&n)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if string(key) == "type" {
			b, _, err := d.readString("type")
			if err != nil {
				return err
			}
			typ = codec.ParseEntryType(b)
			continue
		}
		f := entryField(key)
		switch {
		case f < 0:
			_, err = d.skipValue()
		case entryFields[typ]&(1<<f) != 0:
			spans[f] = span{start: d.pos, depth: d.depth, kind: kindObject}
			done[f] = true
			err = d.entryMember(e, f, oldErr)
		default:
			done[f] = false
			spans[f], err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	mask := entryFields[typ]
	for f := 0; f < numEntryFields; f++ {
		switch {
		case mask&(1<<f) != 0:
			if !done[f] && spans[f].kind != kindNone {
				p, dp := d.seek(spans[f])
				err := d.entryMember(e, f, oldErr)
				d.restore(p, dp)
				if err != nil {
					return err
				}
			}
		case done[f]:
			clearEntryMember(e, f)
		}
	}
	e.Type = typ
	return d.finish()
}

// entryMember decodes member f of a cursor entry at d.pos.
func (d *decoder) entryMember(e *codec.CursorEntry, f int, oldErr codec.Error) error {
	var err error
	switch f {
	case fStep:
		var v uint64
		v, _, err = d.readUint("step", math.MaxUint32)
		e.Step = uint32(v)
	case fCols:
		err = d.cols(&e.Cols, "cols")
	case fRow:
		err = d.row(&e.Row, "row")
	case fAffected:
		e.AffectedRowCount, _, err = d.readUint("affected_row_count", math.MaxUint64)
	case fLastID:
		e.LastInsertRowID, e.HasLastInsertRowID, err = d.readInt("last_insert_rowid")
	case fError:
		e.Error = codec.Error{}
		if d.data[d.pos] == 'n' {
			err = d.literal("null")
		} else {
			err = d.errorObj(&e.Error, oldErr, "error")
		}
	case fRepl:
		e.ReplicationIndex, e.HasReplicationIndex, err = d.readUint("replication_index", math.MaxUint64)
	}
	return err
}

func clearEntryMember(e *codec.CursorEntry, f int) {
	switch f {
	case fStep:
		e.Step = 0
	case fCols:
		e.Cols = e.Cols[:0]
	case fRow:
		e.Row = e.Row[:0]
	case fAffected:
		e.AffectedRowCount = 0
	case fLastID:
		e.LastInsertRowID, e.HasLastInsertRowID = 0, false
	case fError:
		e.Error = codec.Error{}
	case fRepl:
		e.ReplicationIndex, e.HasReplicationIndex = 0, false
	}
}
