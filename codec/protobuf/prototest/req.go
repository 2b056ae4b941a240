package prototest

// Deliberately independent of codec/protobuf's encoder: the round-trip tests compare them.

import (
	"fmt"
	"strings"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/codectest"
)

// DecodePipelineRequest decodes a PipelineReqBody, as sqld would read it.
func DecodePipelineRequest(data []byte) (req codec.PipelineRequest, err error) {
	err = requestBody(data, &req.Baton, func(f field) {
		req.Requests = append(req.Requests, streamRequest(msg(f)))
	})
	return req, err
}

// DecodeCursorRequest decodes a CursorReqBody.
func DecodeCursorRequest(data []byte) (req codec.CursorRequest, err error) {
	err = requestBody(data, &req.Baton, func(f field) { req.Batch = batch(msg(f)) })
	return req, err
}

// requestBody decodes a request body whose fields are the baton (1) and
// one more (2: the pipeline's requests, the cursor's batch), which second
// reads.
func requestBody(data []byte, baton *string, second func(field)) error {
	return run(func() {
		for _, f := range fields(data) {
			switch f.num {
			case 1:
				*baton = str(f)
			case 2:
				second(f)
			}
		}
	})
}

// DecodeClientMsg decodes a ClientMsg of the hrana3-protobuf subprotocol,
// as sqld would read it: oneof hello = 1 (HelloMsg { optional string
// jwt = 1 }), request = 2 (RequestMsg { int32 request_id = 1; oneof
// request 2..13, the request type plus one }). Of the members, the last one
// wins.
func DecodeClientMsg(data []byte) (m codectest.ClientMsg, err error) {
	err = run(func() {
		seen := false
		for _, f := range fields(data) {
			switch f.num {
			case 1:
				m = codectest.ClientMsg{Hello: true}
				for _, g := range fields(msg(f)) {
					if g.num == 1 {
						m.JWT = str(g)
					}
				}
			case 2:
				m = codectest.ClientMsg{Request: socketRequest(msg(f))}
			default:
				continue
			}
			seen = true
		}
		if !seen {
			bad("client message without a member")
		}
	})
	return m, err
}

// socketRequest decodes a RequestMsg.
func socketRequest(b []byte) codec.SocketRequest {
	var r codec.SocketRequest
	for _, f := range fields(b) {
		if f.num == 1 {
			r.RequestID = i32(f)
			continue
		}
		if f.num < 2 || f.num > 13 {
			continue
		}
		r = codec.SocketRequest{RequestID: r.RequestID, Type: codec.SocketRequestType(f.num - 1)}
		for _, g := range fields(msg(f)) {
			switch t := r.Type; {
			case g.num == 1 && (t == codec.SocketCloseCursor || t == codec.SocketFetchCursor):
				r.CursorID = i32(g)
			case g.num == 1 && (t == codec.SocketStoreSQL || t == codec.SocketCloseSQL):
				r.SQLID = i32(g)
			case g.num == 1:
				r.StreamID = i32(g)
			case g.num == 2 && t == codec.SocketExecute:
				r.Stmt = stmt(msg(g))
			case g.num == 3 && t == codec.SocketExecute:
				r.ReplicationIndex = u64(g)
			case g.num == 2 && t == codec.SocketBatch, g.num == 3 && t == codec.SocketOpenCursor:
				r.Batch = batch(msg(g))
			case g.num == 2 && t == codec.SocketOpenCursor:
				r.CursorID = i32(g)
			case g.num == 2 && t == codec.SocketFetchCursor:
				r.MaxCount = u32(g)
			case g.num == 2 && (t == codec.SocketSequence || t == codec.SocketDescribe):
				r.SQL = str(g)
			case g.num == 3 && (t == codec.SocketSequence || t == codec.SocketDescribe):
				r.SQLID, r.HasSQLID = i32(g), true
			case g.num == 4 && (t == codec.SocketSequence || t == codec.SocketDescribe):
				r.ReplicationIndex = u64(g)
			case g.num == 2 && t == codec.SocketStoreSQL:
				r.SQL = str(g)
			}
		}
	}
	if r.Type == codec.SocketUnknown {
		bad("request message without a request")
	}
	return r
}

func streamRequest(b []byte) codec.StreamRequest {
	var r codec.StreamRequest
	for _, f := range fields(b) {
		if f.num < 1 || f.num > 8 {
			continue
		}
		r = codec.StreamRequest{Type: []codec.RequestType{0, codec.RequestClose, codec.RequestExecute, codec.RequestBatch,
			codec.RequestSequence, codec.RequestDescribe, codec.RequestStoreSQL, codec.RequestCloseSQL, codec.RequestGetAutocommit}[f.num]}
		for _, g := range fields(msg(f)) {
			switch {
			case r.Type == codec.RequestExecute && g.num == 1:
				r.Stmt = stmt(msg(g))
			case r.Type == codec.RequestBatch && g.num == 1:
				r.Batch = batch(msg(g))
			case (r.Type == codec.RequestSequence || r.Type == codec.RequestDescribe) && g.num == 1:
				r.SQL = str(g)
			case (r.Type == codec.RequestSequence || r.Type == codec.RequestDescribe) && g.num == 3:
				r.ReplicationIndex = u64(g)
			case r.Type == codec.RequestStoreSQL && g.num == 2:
				r.SQL = str(g)
			case (r.Type == codec.RequestStoreSQL || r.Type == codec.RequestCloseSQL) && g.num == 1:
				r.SQLID = int32(u64(g))
			}
		}
	}
	if r.Type == codec.RequestUnknown {
		bad("request without a known member")
	}
	return r
}

func stmt(b []byte) codec.Stmt {
	s := codec.Stmt{WantRows: true} // sqld's default for an absent want_rows
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			s.SQL = str(f)
		case 2:
			s.SQLID, s.HasSQLID = int32(u64(f)), true
		case 3:
			s.Args = append(s.Args, value(msg(f)))
		case 4:
			var a codec.NamedArg
			for _, g := range fields(msg(f)) {
				switch g.num {
				case 1:
					a.Name = str(g)
				case 2:
					a.Value = value(msg(g))
				}
			}
			s.NamedArgs = append(s.NamedArgs, a)
		case 5:
			s.WantRows = u64(f) != 0
		case 6:
			s.ReplicationIndex = u64(f)
		}
	}
	return s
}

func batch(b []byte) codec.Batch {
	var bt codec.Batch
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			var st codec.BatchStep
			for _, g := range fields(msg(f)) {
				switch g.num {
				case 1:
					c := cond(msg(g), 0)
					st.Condition = &c
				case 2:
					st.Stmt = stmt(msg(g))
				}
			}
			bt.Steps = append(bt.Steps, st)
		case 2:
			bt.ReplicationIndex = u64(f)
		}
	}
	return bt
}

func cond(b []byte, depth int) codec.BatchCond {
	if depth > 1000 {
		bad("condition nested too deeply")
	}
	var c codec.BatchCond
	for _, f := range fields(b) {
		switch f.num {
		case 1:
			c = codec.BatchCond{Type: codec.CondOK, Step: u32(f)}
		case 2:
			c = codec.BatchCond{Type: codec.CondError, Step: u32(f)}
		case 3:
			sub := cond(msg(f), depth+1)
			c = codec.BatchCond{Type: codec.CondNot, Cond: &sub}
		case 4, 5:
			c = codec.BatchCond{Type: codec.CondAnd}
			if f.num == 5 {
				c.Type = codec.CondOr
			}
			for _, g := range fields(msg(f)) {
				if g.num == 1 {
					c.Conds = append(c.Conds, cond(msg(g), depth+1))
				}
			}
		case 6:
			fields(msg(f))
			c = codec.BatchCond{Type: codec.CondIsAutocommit}
		}
	}
	if c.Type == 0 {
		bad("condition without a member")
	}
	return c
}

// Canon writes a request in a canonical text form, for comparing requests:
// values by type and content (floats by bit pattern), empty and nil slices
// alike, conditions by structure.
func Canon(r *codec.PipelineRequest) string {
	var s strings.Builder
	fmt.Fprintf(&s, "baton=%q\n", r.Baton)
	for _, q := range r.Requests {
		fmt.Fprintf(&s, "req type=%d", q.Type)
		switch q.Type {
		case codec.RequestSequence, codec.RequestDescribe:
			fmt.Fprintf(&s, " sql=%q ri=%d\n", q.SQL, q.ReplicationIndex)
		case codec.RequestStoreSQL:
			fmt.Fprintf(&s, " sql=%q id=%d\n", q.SQL, q.SQLID)
		case codec.RequestCloseSQL:
			fmt.Fprintf(&s, " id=%d\n", q.SQLID)
		case codec.RequestExecute:
			canonStmt(&s, &q.Stmt)
		case codec.RequestBatch:
			canonBatch(&s, &q.Batch)
		}
	}
	return s.String()
}

// CanonCursor is Canon for a cursor request.
func CanonCursor(r *codec.CursorRequest) string {
	var s strings.Builder
	fmt.Fprintf(&s, "baton=%q\n", r.Baton)
	canonBatch(&s, &r.Batch)
	return s.String()
}

func canonValue(s *strings.Builder, v codec.Value) {
	if v.Type == codec.Float {
		fmt.Fprintf(s, " float:%x", v.Float)
		return
	}
	fmt.Fprintf(s, " %v:%v", v.Type, v)
}

func canonStmt(s *strings.Builder, st *codec.Stmt) {
	if st.HasSQLID {
		fmt.Fprintf(s, " stmt id=%d", st.SQLID)
	} else {
		fmt.Fprintf(s, " stmt sql=%q", st.SQL)
	}
	fmt.Fprintf(s, " want=%v ri=%d args:", st.WantRows, st.ReplicationIndex)
	for _, v := range st.Args {
		canonValue(s, v)
	}
	s.WriteString(" named:")
	for _, a := range st.NamedArgs {
		fmt.Fprintf(s, " %q=", a.Name)
		canonValue(s, a.Value)
	}
	s.WriteByte('\n')
}

func canonBatch(s *strings.Builder, b *codec.Batch) {
	fmt.Fprintf(s, " batch ri=%d\n", b.ReplicationIndex)
	for _, st := range b.Steps {
		s.WriteString(" step cond=")
		canonCond(s, st.Condition)
		s.WriteByte('\n')
		canonStmt(s, &st.Stmt)
	}
}

func canonCond(s *strings.Builder, c *codec.BatchCond) {
	if c == nil {
		s.WriteString("nil")
		return
	}
	fmt.Fprintf(s, "(%d %d", c.Type, c.Step)
	if c.Type == codec.CondNot {
		s.WriteByte(' ')
		canonCond(s, c.Cond)
	}
	for i := range c.Conds {
		s.WriteByte(' ')
		canonCond(s, &c.Conds[i])
	}
	s.WriteByte(')')
}
