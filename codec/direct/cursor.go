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

// DecodeCursorEntry decodes one line of a cursor response after the header.
// Entries of an unknown type, or without a type, decode as EntryUnknown.
func (jsonCodec) DecodeCursorEntry(line []byte, e *codec.CursorEntry) error {
	if e == nil {
		return nilDest()
	}
	d := newDecoder(line)
	defer d.release()
	if err := d.begin(); err != nil {
		e.Reset()
		return err
	}
	if err := d.cursorEntry(e); err != nil {
		return err
	}
	return d.finish()
}

// cursorEntry decodes the cursor entry object at d.pos into e, which it
// resets first (keeping the strings of its error to reuse).
func (d *decoder) cursorEntry(e *codec.CursorEntry) error {
	oldErr := e.Error
	e.Reset()
	if d.data[d.pos] != '{' {
		return d.typeErr("entries", "cursor entry objects")
	}
	if err := d.open(); err != nil {
		return err
	}
	typ := codec.EntryUnknown
	var spans [codec.NumEntryMembers]span
	var done [codec.NumEntryMembers]bool
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
		m, known := codec.ParseEntryMember(key)
		switch {
		case !known:
			_, err = d.skipValue()
		case typ.Members().Has(m):
			spans[m] = span{start: d.pos, depth: d.depth, kind: kindObject}
			done[m] = true
			err = d.entryMember(e, m, oldErr)
		default:
			done[m] = false
			spans[m], err = d.skipValue()
		}
		if err != nil {
			return err
		}
	}
	members := typ.Members()
	for m := range codec.NumEntryMembers {
		switch {
		case members.Has(m):
			if !done[m] && spans[m].kind != kindNone {
				p, dp := d.seek(spans[m])
				err := d.entryMember(e, m, oldErr)
				d.restore(p, dp)
				if err != nil {
					return err
				}
			}
		case done[m]:
			clearEntryMember(e, m)
		}
	}
	e.Type = typ
	return nil
}

// entryMember decodes member m of a cursor entry at d.pos.
func (d *decoder) entryMember(e *codec.CursorEntry, m codec.EntryMember, oldErr codec.Error) error {
	var err error
	switch m {
	case codec.MemberStep:
		var v uint64
		v, _, err = d.readUint("step", math.MaxUint32)
		e.Step = uint32(v)
	case codec.MemberCols:
		err = d.cols(&e.Cols, "cols")
	case codec.MemberRow:
		err = d.row(&e.Row, "row")
	case codec.MemberAffectedRowCount:
		e.AffectedRowCount, _, err = d.readUint("affected_row_count", math.MaxUint64)
	case codec.MemberLastInsertRowID:
		e.LastInsertRowID, e.HasLastInsertRowID, err = d.readInt("last_insert_rowid")
	case codec.MemberError:
		e.Error = codec.Error{}
		if d.data[d.pos] == 'n' {
			err = d.literal("null")
		} else {
			err = d.errorObj(&e.Error, oldErr, "error")
		}
	case codec.MemberReplicationIndex:
		e.ReplicationIndex, e.HasReplicationIndex, err = d.readUint("replication_index", math.MaxUint64)
	}
	return err
}

// clearEntryMember zeroes member m of e, decoded in place under an earlier
// "type" that the final one overrode.
func clearEntryMember(e *codec.CursorEntry, m codec.EntryMember) {
	switch m {
	case codec.MemberStep:
		e.Step = 0
	case codec.MemberCols:
		e.Cols = e.Cols[:0]
	case codec.MemberRow:
		e.Row = e.Row[:0]
	case codec.MemberAffectedRowCount:
		e.AffectedRowCount = 0
	case codec.MemberLastInsertRowID:
		e.LastInsertRowID, e.HasLastInsertRowID = 0, false
	case codec.MemberError:
		e.Error = codec.Error{}
	case codec.MemberReplicationIndex:
		e.ReplicationIndex, e.HasReplicationIndex = 0, false
	}
}
