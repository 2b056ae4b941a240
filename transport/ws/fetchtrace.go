package ws

import "github.com/gohrana/libsql/codec"

// A cursor's fetches are traced through transport.Options.TraceFetch: each
// from when it is asked for until the cursor takes its answer, or drops it.

// traceFetch starts the trace of fetch ex (transport.Options.TraceFetch),
// if the client traces fetches; fetched or dropFetches ends it.
func (cur *cursor) traceFetch(ex *exchange) {
	if tf := cur.s.c.traceFetch; tf != nil {
		ex.traced = tf(cur.ctx)
	}
}

// fetched ends the trace of fetch ex, answered with entries (or failed
// with err), if it has one.
func fetched(ex *exchange, entries []codec.CursorEntry, err error) {
	done := ex.traced
	if done == nil {
		return
	}
	ex.traced = nil
	if err != nil {
		done(0, 0, err)
		return
	}
	rows := 0
	for i := range entries {
		if entries[i].Type == codec.EntryRow {
			rows++
		}
	}
	done(rows, ex.received(), nil)
}

// dropFetches ends the traces of fetches the cursor no longer waits for;
// their answers, if any, are not looked at (they may be arriving).
func dropFetches(ahead []*exchange) {
	for _, ex := range ahead {
		if done := ex.traced; done != nil {
			ex.traced = nil
			done(0, 0, nil)
		}
	}
}
