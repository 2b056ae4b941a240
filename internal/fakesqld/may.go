package fakesqld

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The MAY server: where Server follows a script, MayServer is a small
// stateful Hrana-over-HTTP server that does what Turso's protocol document
// (serverless/PROTOCOL.md in tursodatabase/turso) says a server MAY do, one
// Modes field per MAY, over JSON and Protobuf alike, so that a test can run
// the driver against each freedom a server has and every codec.
//
// It understands just enough SQL for that: BEGIN, COMMIT and ROLLBACK open
// and end a transaction, a PRAGMA leaves session state on the stream,
// "SELECT <n>" answers one row with the integer n, "SELECT big" is over the
// response limit in a pipeline (RESPONSE_TOO_LARGE, as sqld) and streams
// its rows (1, 2, 3) through a cursor, and anything else succeeds with no
// rows.

// Modes are the MAYs of PROTOCOL.md a MayServer takes.
type Modes struct {
	// RotateBatons: a new baton on every response; an older one is
	// invalid (§4.2 item 4).
	RotateBatons bool
	// CloseStateless: a stream that carries no client-visible state after
	// a pipeline (no transaction, no session state) is closed, its baton
	// null, even without a close request (§4.3).
	CloseStateless bool
	// CloseOnEmpty: an empty pipeline closes the stream (§5.1); a client
	// SHOULD NOT send one, which the server reports as a test failure.
	CloseOnEmpty bool
	// AbortCursor: a cursor body ends after its rows without an error
	// entry or a terminator (§7.2.5).
	AbortCursor bool
	// V2Only: only /v2/pipeline is served (the /v3 paths answer 404), and
	// get_autocommit or an is_autocommit condition there is a
	// protocol-level failure (§2).
	V2Only bool
}

// MayServer is a fake server of Modes (see Modes). It is safe for
// concurrent use.
type MayServer struct {
	URL string

	t     testing.TB
	modes Modes
	srv   *httptest.Server

	mu       sync.Mutex
	next     int
	streams  map[string]*mayStream // by current baton
	requests int
	opened   int // streams opened
	unknown  int // requests on a baton the server did not know
	paths    map[string]int
}

type mayStream struct {
	inTx, state bool
}

// NewMay starts a MayServer with modes; it stops when the test ends.
func NewMay(t testing.TB, modes Modes) *MayServer {
	s := &MayServer{t: t, modes: modes, streams: map[string]*mayStream{}, paths: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Requests returns the number of POSTs served.
func (s *MayServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Unknown returns the number of requests that named a baton the server did
// not know (answered 404): a client that uses the latest baton sends none.
func (s *MayServer) Unknown() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unknown
}

// Served returns the number of POSTs served on path (404s aside).
func (s *MayServer) Served(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths[path]
}

// Opened returns the number of streams opened.
func (s *MayServer) Opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// mayReq is one stream request as the MayServer understands it.
type mayReq struct {
	typ   string   // "execute", "batch", "sequence", "describe", "get_autocommit", "close", ...
	sqls  []string // the statement (execute, describe, sequence) or the steps (batch)
	v3req bool     // get_autocommit, or an is_autocommit condition
}

func (s *MayServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	pb := strings.HasPrefix(r.URL.Path, "/v3-protobuf/")
	v2 := strings.HasPrefix(r.URL.Path, "/v2/")
	cursor := strings.HasSuffix(r.URL.Path, "/cursor")
	switch {
	case r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	case s.modes.V2Only && !v2, !s.modes.V2Only && v2:
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.requests++
	s.paths[r.URL.Path]++
	s.mu.Unlock()
	var (
		baton string
		reqs  []mayReq
		err   error
	)
	switch {
	case pb && cursor:
		baton, reqs, err = decodeProtoCursor(body)
	case pb:
		baton, reqs, err = decodeProtoPipeline(body)
	case cursor:
		baton, reqs, err = decodeJSONCursor(body)
	default:
		baton, reqs, err = decodeJSONPipeline(body)
	}
	if err != nil {
		s.t.Errorf("fakesqld: MayServer: %s: %v", r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	st, newBaton, status := s.stream(baton)
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, "stream not found", status)
		return
	}
	if cursor {
		s.serveCursor(w, pb, st, newBaton, reqs)
		return
	}
	if v2 {
		for _, q := range reqs {
			if q.v3req {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"message":"get_autocommit and is_autocommit are Hrana 3","code":"PROTOCOL_ERROR"}`)
				return
			}
		}
	}
	if len(reqs) == 0 {
		s.t.Errorf("fakesqld: MayServer: an empty pipeline (PROTOCOL.md §5.1: a client SHOULD NOT send one)")
	}
	results := make([]mayResult, len(reqs))
	closed := len(reqs) == 0 && s.modes.CloseOnEmpty
	for i, q := range reqs {
		results[i] = st.run(q)
		if q.typ == "close" {
			closed = true
		}
	}
	s.mu.Lock()
	if !closed && s.modes.CloseStateless && !st.inTx && !st.state {
		closed = true
	}
	out := ""
	if !closed {
		out = newBaton
		s.streams[out] = st
	}
	s.mu.Unlock()
	if pb {
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(protoPipelineResponse(out, results))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, jsonPipelineResponse(out, results))
}

// stream finds the stream of baton ("" opens one), removing it under its
// old baton, and returns the baton it answers with next; status is the
// HTTP status of an unknown baton (PROTOCOL.md §4.5: 404).
func (s *MayServer) stream(baton string) (*mayStream, string, int) {
	var st *mayStream
	if baton == "" {
		st = &mayStream{}
		s.opened++
		s.next++
		return st, "may-" + strconv.Itoa(s.next), 0
	}
	st, ok := s.streams[baton]
	if !ok {
		s.unknown++
		return nil, "", http.StatusNotFound
	}
	if !s.modes.RotateBatons {
		return st, baton, 0
	}
	delete(s.streams, baton)
	s.next++
	return st, "may-" + strconv.Itoa(s.next), 0
}

// mayResult is the outcome of one request.
type mayResult struct {
	typ        string
	errCode    string // "" on success
	rows       []int64
	autocommit bool
	steps      []mayResult // of a batch, one per step
}

func (st *mayStream) run(q mayReq) mayResult {
	res := mayResult{typ: q.typ}
	switch q.typ {
	case "get_autocommit":
		res.autocommit = !st.inTx
	case "batch":
		// Conditions are not evaluated: every step runs.
		for _, sql := range q.sqls {
			res.steps = append(res.steps, st.exec(strings.TrimSpace(sql), false))
		}
	case "execute", "sequence":
		for _, sql := range q.sqls {
			for _, one := range strings.Split(sql, ";") {
				r := st.exec(strings.TrimSpace(one), false)
				if r.errCode != "" {
					res.errCode = r.errCode
				}
				res.rows = append(res.rows, r.rows...)
			}
		}
	}
	return res
}

// exec runs one statement; cursor says it runs through a cursor.
func (st *mayStream) exec(sql string, cursor bool) mayResult {
	upper := strings.ToUpper(sql)
	switch {
	case strings.HasPrefix(upper, "BEGIN"):
		st.inTx = true
	case strings.HasPrefix(upper, "COMMIT"), strings.HasPrefix(upper, "ROLLBACK"):
		st.inTx = false
	case strings.HasPrefix(upper, "PRAGMA"):
		st.state = true
	case upper == "SELECT BIG":
		if !cursor {
			return mayResult{errCode: "RESPONSE_TOO_LARGE"}
		}
		return mayResult{rows: []int64{1, 2, 3}}
	case strings.HasPrefix(upper, "SELECT "):
		if n, err := strconv.ParseInt(strings.TrimSpace(sql[len("SELECT "):]), 10, 64); err == nil {
			return mayResult{rows: []int64{n}}
		}
	}
	return mayResult{}
}

// serveCursor answers a cursor request: the baton first, then each step's
// rows, then the terminator (unless Modes.AbortCursor).
func (s *MayServer) serveCursor(w http.ResponseWriter, pb bool, st *mayStream, baton string, reqs []mayReq) {
	s.mu.Lock()
	s.streams[baton] = st // cursor streams are always retained (§4.3)
	s.mu.Unlock()
	bw := bufio.NewWriter(w)
	entry := func(json string, proto []byte) {
		if pb {
			var n [binary.MaxVarintLen64]byte
			_, _ = bw.Write(n[:binary.PutUvarint(n[:], uint64(len(proto)))])
			_, _ = bw.Write(proto)
			return
		}
		_, _ = bw.WriteString(json + "\n")
	}
	if pb {
		w.Header().Set("Content-Type", "application/x-protobuf")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	entry(`{"baton":"`+baton+`","base_url":null}`, pbField(1, []byte(baton)))
	step := 0
	for _, q := range reqs {
		for _, sql := range q.sqls {
			r := st.exec(sql, true)
			entry(`{"type":"step_begin","step":`+strconv.Itoa(step)+`,"cols":[{"name":"n","decltype":null}]}`,
				pbField(1, append(pbVarint(1, uint64(step)), pbField(2, pbField(1, []byte("n")))...)))
			for _, v := range r.rows {
				entry(`{"type":"row","row":[{"type":"integer","value":"`+strconv.FormatInt(v, 10)+`"}]}`,
					pbField(4, pbField(1, pbVarint(2, zigzag(v)))))
			}
			entry(`{"type":"step_end","affected_row_count":0,"last_insert_rowid":null}`, pbField(2, nil))
			step++
		}
	}
	if !s.modes.AbortCursor {
		entry(`{"type":"replication_index","replication_index":null}`, pbField(6, nil))
	}
	_ = bw.Flush()
}

// JSON requests.

type jsonStmt struct {
	SQL string `json:"sql"`
}

type jsonCond struct {
	Type  string     `json:"type"`
	Cond  *jsonCond  `json:"cond"`
	Conds []jsonCond `json:"conds"`
}

func (c *jsonCond) v3() bool {
	if c == nil {
		return false
	}
	if c.Type == "is_autocommit" || c.Cond.v3() {
		return true
	}
	for i := range c.Conds {
		if c.Conds[i].v3() {
			return true
		}
	}
	return false
}

type jsonBatch struct {
	Steps []struct {
		Condition *jsonCond `json:"condition"`
		Stmt      jsonStmt  `json:"stmt"`
	} `json:"steps"`
}

func (b *jsonBatch) req() mayReq {
	q := mayReq{typ: "batch"}
	for _, st := range b.Steps {
		q.sqls = append(q.sqls, st.Stmt.SQL)
		q.v3req = q.v3req || st.Condition.v3()
	}
	return q
}

func decodeJSONPipeline(body []byte) (string, []mayReq, error) {
	var p struct {
		Baton    *string `json:"baton"`
		Requests []struct {
			Type  string    `json:"type"`
			Stmt  jsonStmt  `json:"stmt"`
			Batch jsonBatch `json:"batch"`
			SQL   string    `json:"sql"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return "", nil, err
	}
	var reqs []mayReq
	for _, r := range p.Requests {
		switch r.Type {
		case "execute":
			reqs = append(reqs, mayReq{typ: r.Type, sqls: []string{r.Stmt.SQL}})
		case "batch":
			reqs = append(reqs, r.Batch.req())
		case "sequence", "describe":
			reqs = append(reqs, mayReq{typ: r.Type, sqls: []string{r.SQL}})
		default:
			reqs = append(reqs, mayReq{typ: r.Type, v3req: r.Type == "get_autocommit"})
		}
	}
	return deref(p.Baton), reqs, nil
}

func decodeJSONCursor(body []byte) (string, []mayReq, error) {
	var c struct {
		Baton *string   `json:"baton"`
		Batch jsonBatch `json:"batch"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return "", nil, err
	}
	return deref(c.Baton), []mayReq{c.Batch.req()}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// JSON responses.

func jsonPipelineResponse(baton string, results []mayResult) string {
	var b strings.Builder
	b.WriteString(`{"baton":`)
	if baton == "" {
		b.WriteString("null")
	} else {
		b.WriteString(strconv.Quote(baton))
	}
	b.WriteString(`,"base_url":null,"results":[`)
	for i, r := range results {
		if i > 0 {
			b.WriteByte(',')
		}
		if r.errCode != "" {
			fmt.Fprintf(&b, `{"type":"error","error":{"message":"%s","code":"%s"}}`, r.errCode, r.errCode)
			continue
		}
		fmt.Fprintf(&b, `{"type":"ok","response":{"type":"%s"`, r.typ)
		switch r.typ {
		case "execute":
			b.WriteString(`,"result":` + jsonStmtResult(r.rows))
		case "batch":
			var res, errs []string
			for _, st := range r.steps {
				if st.errCode != "" {
					res = append(res, "null")
					errs = append(errs, fmt.Sprintf(`{"message":"%s","code":"%s"}`, st.errCode, st.errCode))
					continue
				}
				res, errs = append(res, jsonStmtResult(st.rows)), append(errs, "null")
			}
			b.WriteString(`,"result":{"step_results":[` + strings.Join(res, ",") + `],"step_errors":[` + strings.Join(errs, ",") + `]}`)
		case "describe":
			b.WriteString(`,"result":{"params":[],"cols":[],"is_explain":false,"is_readonly":true}`)
		case "get_autocommit":
			fmt.Fprintf(&b, `,"is_autocommit":%t`, r.autocommit)
		}
		b.WriteString("}}")
	}
	b.WriteString("]}")
	return b.String()
}

func jsonStmtResult(rows []int64) string {
	var b strings.Builder
	b.WriteString(`{"cols":[`)
	if len(rows) > 0 {
		b.WriteString(`{"name":"n","decltype":null}`)
	}
	b.WriteString(`],"rows":[`)
	for i, v := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`[{"type":"integer","value":"` + strconv.FormatInt(v, 10) + `"}]`)
	}
	b.WriteString(`],"affected_row_count":0,"last_insert_rowid":null,"replication_index":null}`)
	return b.String()
}

// Protobuf (shared/hrana.md §10): the request fields the MayServer reads
// and the response fields it writes.

// pbFields walks the fields of message b, calling f with each field's
// number and, for a length-delimited one, its payload.
func pbFields(b []byte, f func(num uint64, payload []byte)) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("bad protobuf key")
		}
		b = b[n:]
		num, wt := key>>3, key&7
		switch wt {
		case 0:
			_, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("bad protobuf varint")
			}
			f(num, nil)
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return fmt.Errorf("short fixed64")
			}
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return fmt.Errorf("bad protobuf length")
			}
			f(num, b[n:n+int(l)])
			b = b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return fmt.Errorf("short fixed32")
			}
			b = b[4:]
		default:
			return fmt.Errorf("wire type %d", wt)
		}
	}
	return nil
}

// protoStreamTypes are the StreamRequest members by field number.
var protoStreamTypes = map[uint64]string{1: "close", 2: "execute", 3: "batch", 4: "sequence", 5: "describe",
	6: "store_sql", 7: "close_sql", 8: "get_autocommit"}

// decodeProtoBody reads a Protobuf pipeline or cursor request body: its
// baton (field 1), and each field 2 (a StreamRequest of a pipeline, the
// Batch of a cursor), whose requests read appends to reqs.
func decodeProtoBody(body []byte, read func(reqs []mayReq, p []byte) []mayReq) (baton string, reqs []mayReq, err error) {
	err = pbFields(body, func(num uint64, p []byte) {
		switch num {
		case 1:
			baton = string(p)
		case 2:
			reqs = read(reqs, p)
		}
	})
	return baton, reqs, err
}

func decodeProtoPipeline(body []byte) (baton string, reqs []mayReq, err error) {
	return decodeProtoBody(body, appendProtoStreamReq)
}

// appendProtoStreamReq appends the request of a StreamRequest, its one
// member.
func appendProtoStreamReq(reqs []mayReq, p []byte) []mayReq {
	_ = pbFields(p, func(member uint64, m []byte) {
		q := mayReq{typ: protoStreamTypes[member], v3req: member == 8}
		switch member {
		case 2: // ExecuteStreamReq { Stmt stmt = 1 }
			_ = pbFields(m, func(n uint64, st []byte) {
				if n == 1 {
					q.sqls = append(q.sqls, protoSQL(st))
				}
			})
		case 3: // BatchStreamReq { Batch batch = 1 }
			_ = pbFields(m, func(n uint64, bt []byte) {
				if n == 1 {
					q = protoBatch(bt)
				}
			})
		case 4, 5: // { string sql = 1; ... }
			_ = pbFields(m, func(n uint64, s []byte) {
				if n == 1 {
					q.sqls = append(q.sqls, string(s))
				}
			})
		}
		reqs = append(reqs, q)
	})
	return reqs
}

func decodeProtoCursor(body []byte) (baton string, reqs []mayReq, err error) {
	return decodeProtoBody(body, func(reqs []mayReq, p []byte) []mayReq { return append(reqs, protoBatch(p)) })
}

// protoSQL returns the sql (field 1) of a Stmt.
func protoSQL(st []byte) string {
	var sql string
	_ = pbFields(st, func(n uint64, s []byte) {
		if n == 1 {
			sql = string(s)
		}
	})
	return sql
}

// protoBatch reads a Batch: steps = 1, each { BatchCond condition = 1;
// Stmt stmt = 2 }; an is_autocommit condition is member 6 of BatchCond,
// perhaps nested in not (3), and (4) or or (5).
func protoBatch(b []byte) mayReq {
	q := mayReq{typ: "batch"}
	_ = pbFields(b, func(n uint64, step []byte) {
		if n != 1 {
			return
		}
		_ = pbFields(step, func(f uint64, p []byte) {
			switch f {
			case 1:
				q.v3req = q.v3req || protoCondV3(p)
			case 2:
				q.sqls = append(q.sqls, protoSQL(p))
			}
		})
	})
	return q
}

func protoCondV3(c []byte) bool {
	v3 := false
	_ = pbFields(c, func(n uint64, p []byte) {
		switch n {
		case 6:
			v3 = true
		case 3:
			v3 = v3 || protoCondV3(p)
		case 4, 5: // BatchCondList { repeated BatchCond conds = 1 }
			_ = pbFields(p, func(_ uint64, cond []byte) { v3 = v3 || protoCondV3(cond) })
		}
	})
	return v3
}

// pbField encodes a length-delimited field.
func pbField(num uint64, payload []byte) []byte {
	out := binary.AppendUvarint(nil, num<<3|2)
	out = binary.AppendUvarint(out, uint64(len(payload)))
	return append(out, payload...)
}

// pbVarint encodes a varint field.
func pbVarint(num, v uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, num<<3), v)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// protoStmtResult encodes a StmtResult: cols = 1 (Col { name = 1 }),
// rows = 2 (Row { repeated Value values = 1 }, Value.integer = 2, sint64).
func protoStmtResult(rows []int64) []byte {
	var out []byte
	if len(rows) > 0 {
		out = append(out, pbField(1, pbField(1, []byte("n")))...)
	}
	for _, v := range rows {
		out = append(out, pbField(2, pbField(1, pbVarint(2, zigzag(v))))...)
	}
	return out
}

// protoPipelineResponse encodes a PipelineRespBody: baton = 1, results = 3
// (StreamResult { ok = 1 StreamResponse, error = 2 Error { message = 1,
// code = 2 } }), a StreamResponse's member numbered as its request type,
// holding its result in field 1.
func protoPipelineResponse(baton string, results []mayResult) []byte {
	var out []byte
	if baton != "" {
		out = pbField(1, []byte(baton))
	}
	members := map[string]uint64{}
	for n, t := range protoStreamTypes {
		members[t] = n
	}
	for _, r := range results {
		if r.errCode != "" {
			out = append(out, pbField(3, pbField(2, append(pbField(1, []byte(r.errCode)), pbField(2, []byte(r.errCode))...)))...)
			continue
		}
		var member []byte
		switch r.typ {
		case "execute":
			member = pbField(1, protoStmtResult(r.rows))
		case "batch":
			// BatchResult { map<uint32, StmtResult> step_results = 1;
			// map<uint32, Error> step_errors = 2 }: entries { key = 1,
			// value = 2 }.
			var br []byte
			for i, st := range r.steps {
				if st.errCode != "" {
					e := append(pbField(1, []byte(st.errCode)), pbField(2, []byte(st.errCode))...)
					br = append(br, pbField(2, append(pbVarint(1, uint64(i)), pbField(2, e)...))...)
					continue
				}
				br = append(br, pbField(1, append(pbVarint(1, uint64(i)), pbField(2, protoStmtResult(st.rows))...))...)
			}
			member = pbField(1, br)
		case "describe":
			// DescribeResult { is_readonly = 4 }
			member = pbField(1, pbVarint(4, 1))
		case "get_autocommit":
			ac := uint64(0)
			if r.autocommit {
				ac = 1
			}
			member = pbVarint(1, ac)
		}
		out = append(out, pbField(3, pbField(1, pbField(members[r.typ], member)))...)
	}
	return out
}
