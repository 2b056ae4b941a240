package ceiling

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/fixture"
)

// The WebSocket floors: what sqld allows over Hrana 3 on WebSocket when the
// client costs next to nothing. A hand-written client on
// github.com/coder/websocket opens one socket (subprotocol hrana3, JSON
// text frames) and one stream on it, and sends requests encoded in advance,
// each after the answer to the one before (lockstep, as database/sql asks
// of a driver), decoding every answer with the direct codec to check it.
// No database/sql, no driver, no argument conversion in the measured loop.

const (
	wsSubprotocol = "hrana3"
	floorStream   = 1 // the one stream of a floor's socket
)

// wsJSON encodes the floors' requests and decodes the server's messages.
var wsJSON = direct.Codec.(codec.SocketCodec)

// PointFloorWS bounds workload (b) over WebSocket: the same o.N point
// SELECTs (after the same 200 warm-up ones), one at a time on one stream;
// p50 and p99 of their latencies.
func PointFloorWS(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return pointFloorWS(ctx, base, o, false)
}

// PointFloorWSPipelined is PointFloorWS with the o.N requests pipelined: a
// goroutine writes them all while the answers are read, so the socket
// always has work queued (sqld runs a stream's requests one after the
// other). Rate is requests/s; there is no latency of a single request.
// For information: it shows what lockstep costs in round trips.
func PointFloorWSPipelined(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return pointFloorWS(ctx, base, o, true)
}

func pointFloorWS(ctx context.Context, base string, o workload.Options, pipelined bool) (workload.Result, error) {
	r := workload.Result{Workload: "point-floor-ws"}
	s, err := dialStream(ctx, base)
	if err != nil {
		return r, err
	}
	defer s.close()
	warmKeys, keys := workload.PointKeys(o)
	warm, wantWarm, err := s.points(warmKeys)
	if err != nil {
		return r, err
	}
	reqs, want, err := s.points(keys)
	if err != nil {
		return r, err
	}
	for i, q := range warm {
		res, err := s.roundTrip(q)
		if err == nil {
			err = checkPoint(res, wantWarm[i])
		}
		if err != nil {
			return r, fmt.Errorf("warm-up rowid %d: %w", warmKeys[i], err)
		}
	}
	if pipelined {
		m := workload.Begin()
		if err := s.pipeline(reqs, func(i int, res *codec.SocketResponse) error { return checkPoint(res, want[i]) }); err != nil {
			return r, err
		}
		m.End(&r, int64(len(reqs)))
		return r, nil
	}
	lat := make([]time.Duration, len(reqs))
	m := workload.Begin()
	for i, q := range reqs {
		t := time.Now()
		res, err := s.roundTrip(q)
		if err == nil {
			err = checkPoint(res, want[i])
		}
		if err != nil {
			return r, fmt.Errorf("rowid %d: %w", keys[i], err)
		}
		lat[i] = time.Since(t)
	}
	m.End(&r, int64(len(reqs)))
	r.SetLatencies(lat)
	return r, nil
}

// InsertFloorWS bounds workload (c) over WebSocket, as InsertFloor does over
// HTTP: BEGIN, the same o.N fixture INSERTs, COMMIT, one request at a time
// on one stream, after a 100-row warm-up transaction. Rate is rows/s
// including BEGIN and COMMIT.
func InsertFloorWS(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	r := workload.Result{Workload: "insert-floor-ws"}
	s, err := dialStream(ctx, base)
	if err != nil {
		return r, err
	}
	defer s.close()
	if _, err := s.exec("DROP TABLE IF EXISTS " + floorTable); err != nil {
		return r, err
	}
	if _, err := s.exec(floorSchema()); err != nil {
		return r, err
	}
	begin, err := s.execute(exec("BEGIN").Stmt)
	if err != nil {
		return r, err
	}
	commit, err := s.execute(exec("COMMIT").Stmt)
	if err != nil {
		return r, err
	}
	inserts := make([]wsRequest, o.N)
	for i, st := range floorInserts(o.N) {
		if inserts[i], err = s.execute(st); err != nil {
			return r, err
		}
	}
	// Lockstep: an id is sent again only after its answer, as Hrana allows.
	fill := func(reqs []wsRequest) error {
		if _, err := s.roundTrip(begin); err != nil {
			return err
		}
		for i, q := range reqs {
			res, err := s.roundTrip(q)
			if err == nil && res.Result.AffectedRowCount != 1 {
				err = fmt.Errorf("%d rows affected", res.Result.AffectedRowCount)
			}
			if err != nil {
				return fmt.Errorf("insert %d: %w", i+1, err)
			}
		}
		_, err := s.roundTrip(commit)
		return err
	}
	if err := fill(inserts[:min(100, o.N)]); err != nil { // warm-up, as InsertTx
		return r, err
	}
	if _, err := s.exec("DELETE FROM " + floorTable); err != nil {
		return r, err
	}
	m := workload.Begin()
	if err := fill(inserts); err != nil {
		return r, err
	}
	m.End(&r, int64(o.N))
	res, err := s.exec("SELECT count(*) FROM " + floorTable)
	if err != nil {
		return r, err
	}
	if err := checkCount(res, o.N); err != nil {
		return r, err
	}
	_, err = s.exec("DROP TABLE " + floorTable)
	return r, err
}

// checkPoint checks the answer to a point SELECT of the fixture row whose
// column a is wantA.
func checkPoint(res *codec.SocketResponse, wantA int64) error {
	if res.Type != codec.SocketExecute || res.Result.NumRows != 1 || len(res.Result.Cols) != 6 {
		return fmt.Errorf("answer %v with %d rows of %d columns, want one row of 6", res.Type, res.Result.NumRows, len(res.Result.Cols))
	}
	if a := res.Result.Row(0)[0].Int; a != wantA {
		return fmt.Errorf("a = %d, want %d", a, wantA)
	}
	return nil
}

// wsStream is one Hrana 3 stream on a WebSocket of its own.
type wsStream struct {
	ctx    context.Context
	conn   *websocket.Conn
	nextID int32
	buf    []byte          // the last message read; msg points into it
	msg    codec.ServerMsg // the last message decoded
}

// wsRequest is a request message encoded in advance and the id it carries.
type wsRequest struct {
	id  int32
	msg []byte
}

// dialStream opens a socket to base (ws://host:port), says hello and opens
// the stream. Its reads and writes end with ctx.
func dialStream(ctx context.Context, base string) (*wsStream, error) {
	if u, err := url.Parse(base); err != nil || u.Scheme != "ws" {
		return nil, errors.New("the WebSocket floors need a ws:// base URL")
	}
	// No proxy, whatever the environment says: the server is local.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	conn, _, err := websocket.Dial(ctx, base, &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{wsSubprotocol}})
	if err != nil {
		return nil, err
	}
	s := &wsStream{ctx: ctx, conn: conn}
	if p := conn.Subprotocol(); p != wsSubprotocol {
		s.close()
		return nil, fmt.Errorf("the server chose subprotocol %q, not %s", p, wsSubprotocol)
	}
	conn.SetReadLimit(64 << 20)
	hello, err := wsJSON.AppendHello(nil, "")
	if err == nil {
		err = s.write(hello)
	}
	if err == nil {
		err = s.read()
	}
	if err == nil && s.msg.Type != codec.ServerHelloOK {
		err = fmt.Errorf("hello answered with %v: %s", s.msg.Type, s.msg.Error.Message)
	}
	if err == nil {
		var open wsRequest
		if open, err = s.encode(codec.SocketRequest{Type: codec.SocketOpenStream, StreamID: floorStream}); err == nil {
			_, err = s.roundTrip(open)
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *wsStream) close() { _ = s.conn.Close(websocket.StatusNormalClosure, "") }

// encode encodes req under the next request id.
func (s *wsStream) encode(req codec.SocketRequest) (wsRequest, error) {
	s.nextID++
	req.RequestID = s.nextID
	b, err := wsJSON.AppendSocketRequest(nil, &req)
	return wsRequest{id: s.nextID, msg: b}, err
}

// execute encodes an execute of st on the stream.
func (s *wsStream) execute(st codec.Stmt) (wsRequest, error) {
	return s.encode(codec.SocketRequest{Type: codec.SocketExecute, StreamID: floorStream, Stmt: st})
}

// points encodes the point SELECTs of keys and returns them with the
// column a each must read.
func (s *wsStream) points(keys []int64) ([]wsRequest, []int64, error) {
	reqs, want := make([]wsRequest, len(keys)), make([]int64, len(keys))
	for i, id := range keys {
		var err error
		reqs[i], err = s.execute(codec.Stmt{SQL: workload.PointQuery, WantRows: true, Args: []codec.Value{codec.IntValue(id)}})
		if err != nil {
			return nil, nil, err
		}
		want[i] = fixture.MakeRow(int(id)).A
	}
	return reqs, want, nil
}

// exec runs sql outside the measured part and returns its result, valid
// until the next read.
func (s *wsStream) exec(sql string) (*codec.StmtResult, error) {
	q, err := s.execute(exec(sql).Stmt)
	if err != nil {
		return nil, err
	}
	res, err := s.roundTrip(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sql, err)
	}
	return &res.Result, nil
}

func (s *wsStream) write(msg []byte) error {
	return s.conn.Write(s.ctx, websocket.MessageText, msg)
}

// roundTrip sends q and returns its answer, valid until the next read.
func (s *wsStream) roundTrip(q wsRequest) (*codec.SocketResponse, error) {
	if err := s.write(q.msg); err != nil {
		return nil, err
	}
	return s.answer(q)
}

// answer reads the next message, which must be the successful answer to q.
func (s *wsStream) answer(q wsRequest) (*codec.SocketResponse, error) {
	id, res, err := s.next()
	if err == nil && id != q.id {
		err = fmt.Errorf("got the answer to request %d, want the one to request %d", id, q.id)
	}
	return res, err
}

// next reads the next message, which must be a successful answer, and
// returns its request id.
func (s *wsStream) next() (int32, *codec.SocketResponse, error) {
	if err := s.read(); err != nil {
		return 0, nil, err
	}
	switch m := &s.msg; m.Type {
	case codec.ServerResponseOK:
		return m.RequestID, &m.Response, nil
	case codec.ServerResponseError:
		return m.RequestID, nil, fmt.Errorf("request %d: %s", m.RequestID, m.Error.Message)
	default:
		return 0, nil, fmt.Errorf("got %v, want an answer", m.Type)
	}
}

// read reads one message into s.buf, reusing its memory, and decodes it
// into s.msg.
func (s *wsStream) read() error {
	typ, r, err := s.conn.Reader(s.ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return fmt.Errorf("a %v message on a %s socket", typ, wsSubprotocol)
	}
	b := s.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	s.buf = b
	return wsJSON.DecodeServerMsg(b, &s.msg)
}

// pipeline sends reqs, whose ids must follow one another, from a goroutine
// of its own, without waiting for answers, and reads the answers meanwhile,
// checking the answer to reqs[i] with check. sqld runs a stream's requests
// in order but may answer them out of order, so answers are matched by id.
func (s *wsStream) pipeline(reqs []wsRequest, check func(i int, res *codec.SocketResponse) error) error {
	if len(reqs) == 0 {
		return nil
	}
	written := make(chan error, 1)
	go func() {
		for _, q := range reqs {
			if err := s.write(q.msg); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	seen := make([]bool, len(reqs))
	for range reqs {
		id, res, err := s.next()
		i := int(id - reqs[0].id)
		switch {
		case err != nil:
		case i < 0 || i >= len(reqs) || reqs[i].id != id || seen[i]:
			err = fmt.Errorf("an unexpected answer to request %d", id)
		default:
			seen[i] = true
			err = check(i, res)
		}
		if err != nil {
			_ = s.conn.CloseNow() // ends the writer
			<-written
			return err
		}
	}
	return <-written
}

// ConcurrentFloorWS bounds workload (d) over WebSocket: o.Conc goroutines,
// each with a socket and a stream of its own, doing the point SELECTs of
// (b) one at a time for o.Duration (after a warm-up of a twentieth of it).
// Rate is queries/s; latencies are each query's.
func ConcurrentFloorWS(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	r := workload.Result{Workload: "concurrent-floor-ws"}
	_, keys := workload.PointKeys(workload.Options{N: 1 << 14, Seed: o.Seed})
	type client struct {
		s    *wsStream
		reqs []wsRequest
		want []int64
		lat  []time.Duration
	}
	clients := make([]*client, o.Conc)
	for g := range clients {
		s, err := dialStream(ctx, base)
		if err != nil {
			return r, err
		}
		defer s.close()
		// Each goroutine starts at its own place in the keys.
		ks := append(append([]int64(nil), keys[g*len(keys)/o.Conc:]...), keys[:g*len(keys)/o.Conc]...)
		reqs, want, err := s.points(ks)
		if err != nil {
			return r, err
		}
		clients[g] = &client{s: s, reqs: reqs, want: want, lat: make([]time.Duration, 0, 1<<16)}
	}
	run := func(d time.Duration, record bool) error {
		deadline := time.Now().Add(d)
		errs := make(chan error, len(clients))
		for _, c := range clients {
			go func() {
				for i := 0; ; i++ {
					t := time.Now()
					if !t.Before(deadline) {
						errs <- nil
						return
					}
					q := i % len(c.reqs)
					res, err := c.s.roundTrip(c.reqs[q])
					if err == nil {
						err = checkPoint(res, c.want[q])
					}
					if err != nil {
						errs <- err
						return
					}
					if record {
						c.lat = append(c.lat, time.Since(t))
					}
				}
			}()
		}
		var first error
		for range clients {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	if err := run(o.Duration/20, false); err != nil {
		return r, err
	}
	m := workload.Begin()
	if err := run(o.Duration, true); err != nil {
		return r, err
	}
	var all []time.Duration
	for _, c := range clients {
		all = append(all, c.lat...)
	}
	m.End(&r, int64(len(all)))
	r.SetLatencies(all)
	return r, nil
}
