package session

import (
	"context"
	"strings"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/transport"
)

// Side cursors. sqld serves a WebSocket cursor one fetch_cursor at a time
// (a fetch's entries are collected only while it is served, and handed
// from the SQLite thread through a channel of one entry), so a large
// result over a socket arrives at about half the rate of the same result
// streamed in one HTTP response by /v3/cursor, which sqld serves on the
// same port. A Conn given a side transport (SetSideCursors: the HTTP
// transport to its server) runs a cursor outside Hold there, on a server
// stream of its own opened with the settings of Persist, when the state on
// its own stream allows it (sideAllowed).

// SetSideCursors makes the Conn run cursors outside Hold on streams of t
// (an HTTP transport to the same server) when sideAllowed says the Conn's
// own stream holds nothing they would miss; nil turns it off.
func (c *Conn) SetSideCursors(t transport.Transport) { c.side = t }

// sideCursor runs batch through a cursor on a new stream of the side
// transport, after setup; the stream ends with the cursor.
func (c *Conn) sideCursor(ctx context.Context, batch *codec.Batch, setup []codec.StreamRequest) (transport.Cursor, error) {
	return c.side.NewStream().OpenCursor(ctx, batch, true, setup)
}

// sideState counts what lives on the connection and not on a new one
// opened with the settings of Persist: a transaction (the step is skipped
// outside autocommit), temporary tables, views and triggers, and
// attached databases.
const sideState = "SELECT (SELECT count(*) FROM temp.sqlite_schema) + " +
	"(SELECT count(*) FROM pragma_database_list WHERE name NOT IN ('main', 'temp'))"

// connValues are the SQL functions whose values belong to a connection:
// a statement that calls one reads its own stream's state.
var connValues = []string{"last_insert_rowid", "changes", "total_changes"}

// sideAllowed reports whether steps (a cursor outside Hold) may run on a
// side cursor: only when the connection state on the Conn's stream is
// nothing a new stream opened with the settings of Persist lacks (one
// batch on the stream asks, a round trip before a result that outgrew the
// response limit), and no step reads a per-connection value. A stream not
// open has no state at all.
func (c *Conn) sideAllowed(ctx context.Context, steps []codec.BatchStep) bool {
	for i := range steps {
		sql := steps[i].Stmt.SQL
		if steps[i].Stmt.HasSQLID {
			return false // a stored text: not read here
		}
		for _, f := range connValues {
			if containsFold(sql, f) {
				return false
			}
		}
	}
	if !c.s.Open() {
		return true
	}
	res, err := c.Batch(ctx, []codec.BatchStep{{
		Condition: &codec.BatchCond{Type: codec.CondIsAutocommit},
		Stmt:      codec.Stmt{SQL: sideState, WantRows: true},
	}})
	if err != nil {
		return false
	}
	defer res.Release()
	st := &res.Batch().Steps[0]
	if st.Status != codec.StepOK || len(st.Result.Values) != 1 {
		return false
	}
	v := st.Result.Values[0]
	return v.Type == codec.Integer && v.Int == 0
}

// containsFold reports whether s contains sub (lower case ASCII), in any
// case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
