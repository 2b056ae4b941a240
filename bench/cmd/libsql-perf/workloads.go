package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goccy "github.com/goccy/go-json"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver and codec=direct
	"github.com/gohrana/libsql/codec"
	_ "github.com/gohrana/libsql/codec/gojson" // registers codec=gojson
	"github.com/gohrana/libsql/codec/protobuf" // registers codec=protobuf, also for a driver that does not link it (perf-compare's older bases)
	"github.com/gohrana/libsql/internal/fixture"
	"github.com/gohrana/libsql/internal/procstat"
)

var codecNames = []string{"direct", "gojson", protobuf.Name}

// liveRows is the size of the table the live workloads read.
const liveRows = 20000

// workload is one benchmark. setup prepares its inputs (outside the
// measurement) and returns the function to measure.
type workload struct {
	name  string
	setup func(e *env) (bench, error)
}

// bench is a prepared workload: run is handed to testing.Benchmark; rows and
// data are what one op delivers (result rows, JSON bytes).
type bench struct {
	run  func(b *testing.B)
	rows int
	data int64
}

// env holds what several workloads share: fixture bodies, the canned
// server, the live DSN. Everything is built on first use.
type env struct {
	dsn string

	mu     sync.Mutex
	bodies map[bodyKey][]byte
	srv    *httptest.Server
	posts  map[*wireFormat]*atomic.Int64 // the canned server's POSTs per route
	dbs    []*sql.DB
	live   error // result of preparing the live table
	liveOK bool
}

// wireFormat is one of Hrana 3's encodings as the canned server serves it.
type wireFormat struct {
	name        string
	prefix      string // of its routes: GET prefix probes, POST prefix+"/pipeline"
	contentType string
	response    func(n int) []byte // the fixture response of n rows
}

var (
	jsonFormat     = &wireFormat{"json", "/v3", "application/json", fixture.Response}
	protobufFormat = &wireFormat{"protobuf", "/v3-protobuf", protobufContentType, protobufResponse}
	wireFormats    = []*wireFormat{protobufFormat, jsonFormat} // "/v3" is a prefix of "/v3-protobuf": longest first
)

// formatOf returns the encoding a codec speaks.
func formatOf(codecName string) *wireFormat {
	if codecName == protobuf.Name {
		return protobufFormat
	}
	return jsonFormat
}

// routeFormat returns the encoding of a request path: its route prefix,
// then "/" or nothing.
func routeFormat(path string) *wireFormat {
	for _, f := range wireFormats {
		if rest, ok := strings.CutPrefix(path, f.prefix); ok && (rest == "" || rest[0] == '/') {
			return f
		}
	}
	return nil
}

type bodyKey struct {
	f *wireFormat
	n int
}

// body returns the fixture response of n rows in encoding f.
func (e *env) body(f *wireFormat, n int) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bodies == nil {
		e.bodies = map[bodyKey][]byte{}
	}
	k := bodyKey{f, n}
	if b, ok := e.bodies[k]; ok {
		return b
	}
	b := f.response(n)
	e.bodies[k] = b
	return b
}

// server is the canned in-process server: every POST gets the 20,000-row
// response in the encoding of its route (the JSON one outside
// /v3-protobuf), and every GET, the driver's probe, gets 200.
func (e *env) server() *httptest.Server {
	bodies := map[*wireFormat][]byte{}
	for _, f := range wireFormats {
		bodies[f] = e.body(f, 20000)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv == nil {
		e.posts = map[*wireFormat]*atomic.Int64{}
		for _, f := range wireFormats {
			e.posts[f] = new(atomic.Int64)
		}
		e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			f := routeFormat(r.URL.Path)
			if f == nil {
				f = jsonFormat
			}
			e.posts[f].Add(1)
			body := bodies[f]
			w.Header().Set("Content-Type", f.contentType)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		}))
	}
	return e.srv
}

func (e *env) open(dsn string) (*sql.DB, error) {
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.dbs = append(e.dbs, db)
	e.mu.Unlock()
	return db, nil
}

func (e *env) close() {
	for _, db := range e.dbs {
		db.Close()
	}
	if e.srv != nil {
		e.srv.Close()
	}
}

// benchErr records why a workload failed: testing.Benchmark swallows
// b.Fatal's message.
var benchErr error

func fail(b *testing.B, err error) {
	if benchErr == nil {
		benchErr = err
	}
	b.FailNow()
}

// measure runs body in a b.Loop and reports the process CPU time per op
// (user and system time of all threads: the garbage collector's background
// work and, for scans, the in-process server count too).
func measure(b *testing.B, body func() error) {
	b.ReportAllocs()
	c0 := procstat.CPUTime()
	for b.Loop() {
		if err := body(); err != nil {
			fail(b, err)
		}
	}
	if c1 := procstat.CPUTime(); c1 > 0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}

func lookup(name string) (codec.Codec, error) {
	c, ok := codec.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("codec %q is not registered (have %v)", name, codec.Names())
	}
	return c, nil
}

func allWorkloads() []workload {
	var ws []workload
	for _, n := range []int{5000, 20000} {
		for _, cn := range codecNames {
			ws = append(ws, workload{fmt.Sprintf("decode/%s/%dk", cn, n/1000), decodeWorkload(cn, n)})
		}
	}
	ws = append(ws, workload{"reference/goccy-structs/20k", referenceWorkload(20000)})
	for _, shape := range []string{"exec6", "batch10"} {
		for _, cn := range codecNames {
			ws = append(ws, workload{"encode/" + cn + "/" + shape, encodeWorkload(cn, shape)})
		}
	}
	for _, mode := range []string{"typed", "any"} {
		for _, cn := range codecNames {
			ws = append(ws, workload{"scan/" + cn + "/" + mode + "/20k", scanWorkload(cn, mode)})
		}
	}
	for _, cn := range codecNames {
		ws = append(ws, workload{"live/" + cn + "/typed/20k", liveWorkload(cn)})
	}
	return ws
}

// decodeWorkload decodes the n-row fixture into a reused response.
func decodeWorkload(codecName string, n int) func(*env) (bench, error) {
	return func(e *env) (bench, error) {
		c, err := lookup(codecName)
		if err != nil {
			return bench{}, err
		}
		body := e.body(formatOf(codecName), n)
		var resp codec.PipelineResponse
		decode := func() error {
			if err := c.DecodePipelineResponse(body, &resp); err != nil {
				return err
			}
			if len(resp.Results) != 2 || len(resp.Results[0].Response.Result.Values) != 6*n {
				return fmt.Errorf("decoded %d results, want 2 with %d values", len(resp.Results), 6*n)
			}
			return nil
		}
		if err := decode(); err != nil { // also sizes resp: the loop measures the steady state
			return bench{}, err
		}
		if err := checkDecoded(&resp.Results[0].Response.Result, n); err != nil {
			return bench{}, fmt.Errorf("codec %s: %v", codecName, err)
		}
		return bench{
			run:  func(b *testing.B) { measure(b, decode) },
			rows: n,
			data: int64(len(body)),
		}, nil
	}
}

// checkDecoded compares a decoded fixture result with fixture.MakeRow.
func checkDecoded(res *codec.StmtResult, n int) error {
	for i := 1; i <= n; i++ {
		want := fixtureValues(i)
		got := res.Values[(i-1)*6 : i*6]
		for j := range want {
			if !got[j].Equal(want[j]) {
				return fmt.Errorf("row %d column %d: got %v, want %v", i, j, got[j], want[j])
			}
		}
	}
	return nil
}

// The reference: what goccy/go-json does out of the box with plain structs
// shaped like the wire (as a typical Go client declares them). It does less
// than a codec: integers stay strings, blobs stay base64, values are boxed
// in interfaces, and none of the codec package's strict rules are checked.
type refResponse struct {
	Baton   *string     `json:"baton"`
	BaseURL *string     `json:"base_url"`
	Results []refResult `json:"results"`
}

type refResult struct {
	Type     string        `json:"type"`
	Response *refResponse2 `json:"response"`
	Error    *refError     `json:"error"`
}

type refResponse2 struct {
	Type   string         `json:"type"`
	Result *refStmtResult `json:"result"`
}

type refError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

type refStmtResult struct {
	Cols             []refCol     `json:"cols"`
	Rows             [][]refValue `json:"rows"`
	AffectedRowCount uint64       `json:"affected_row_count"`
	LastInsertRowID  *string      `json:"last_insert_rowid"`
	ReplicationIndex *string      `json:"replication_index"`
	RowsRead         uint64       `json:"rows_read"`
	RowsWritten      uint64       `json:"rows_written"`
	QueryDurationMS  float64      `json:"query_duration_ms"`
}

type refCol struct {
	Name     *string `json:"name"`
	Decltype *string `json:"decltype"`
}

type refValue struct {
	Type   string `json:"type"`
	Value  any    `json:"value,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

func referenceWorkload(n int) func(*env) (bench, error) {
	return func(e *env) (bench, error) {
		body := e.body(jsonFormat, n)
		var resp refResponse
		decode := func() error {
			if err := goccy.Unmarshal(body, &resp); err != nil {
				return err
			}
			if len(resp.Results) != 2 || resp.Results[0].Response == nil || resp.Results[0].Response.Result == nil ||
				len(resp.Results[0].Response.Result.Rows) != n {
				return errors.New("reference decode: unexpected shape")
			}
			return nil
		}
		if err := decode(); err != nil {
			return bench{}, err
		}
		return bench{run: func(b *testing.B) { measure(b, decode) }, rows: n, data: int64(len(body))}, nil
	}
}

// encodeStmt is the 6-argument statement of the encode workloads: one value
// of each type plus a second text.
func encodeStmt() codec.Stmt {
	r := fixture.MakeRow(1)
	return codec.Stmt{SQL: fixture.Insert, Args: []codec.Value{
		codec.IntValue(r.A),
		codec.StringValue(r.B),
		codec.FloatValue(r.C),
		codec.BlobValue(r.D),
		codec.NullValue(),
		codec.StringValue(*r.E),
	}}
}

func encodeRequest(shape string) *codec.PipelineRequest {
	req := &codec.PipelineRequest{}
	switch shape {
	case "exec6":
		req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestExecute, Stmt: encodeStmt()})
	case "batch10":
		var steps []codec.BatchStep
		for range 10 {
			steps = append(steps, codec.BatchStep{Stmt: encodeStmt()})
		}
		req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestBatch, Batch: codec.Batch{Steps: steps}})
	default:
		panic("unknown request shape " + shape)
	}
	req.Requests = append(req.Requests, codec.StreamRequest{Type: codec.RequestClose})
	return req
}

// encodeWorkload appends the request into a reused buffer.
func encodeWorkload(codecName, shape string) func(*env) (bench, error) {
	return func(e *env) (bench, error) {
		c, err := lookup(codecName)
		if err != nil {
			return bench{}, err
		}
		req := encodeRequest(shape)
		buf, err := c.AppendPipelineRequest(nil, req)
		if err != nil {
			return bench{}, err
		}
		size := len(buf)
		encode := func() error {
			var err error
			buf, err = c.AppendPipelineRequest(buf[:0], req)
			return err
		}
		return bench{run: func(b *testing.B) { measure(b, encode) }, data: int64(size)}, nil
	}
}

// scanWorkload runs db.Query and Scan over the 20,000-row response of the
// canned server.
func scanWorkload(codecName, mode string) func(*env) (bench, error) {
	return func(e *env) (bench, error) {
		if _, err := lookup(codecName); err != nil {
			return bench{}, err
		}
		srv := e.server()
		db, err := e.open(srv.URL + "?codec=" + codecName)
		if err != nil {
			return bench{}, err
		}
		f := formatOf(codecName)
		b, err := scanBench(db, mode, 20000, len(e.body(f, 20000)))
		if err != nil && f != jsonFormat && e.posts[f].Load() == 0 {
			// A driver from before the codec's routes (perf-compare's
			// base) sends its bodies to /v3: nothing to compare.
			return b, skipped(fmt.Sprintf("the driver sent nothing to %s/pipeline, so it has no %s over HTTP: %v", f.prefix, f.name, err))
		}
		return b, err
	}
}

func scanBench(db *sql.DB, mode string, n, size int) (bench, error) {
	ctx := context.Background()
	scan := func() error {
		got, err := fixture.ScanAll(ctx, db, mode)
		if err == nil && got != n {
			err = fmt.Errorf("scanned %d rows, want %d", got, n)
		}
		return err
	}
	if err := scan(); err != nil { // connects, and checks the result
		return bench{}, err
	}
	return bench{run: func(b *testing.B) { measure(b, scan) }, rows: n, data: int64(size)}, nil
}

// withCodec returns dsn with its codec parameter set.
func withCodec(dsn, codecName string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("codec", codecName)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// liveWorkload scans the bench table of a live sqld end to end.
func liveWorkload(codecName string) func(*env) (bench, error) {
	return func(e *env) (bench, error) {
		if e.dsn == "" {
			return bench{}, skipped("needs -dsn")
		}
		if err := e.prepareLive(); err != nil {
			return bench{}, err
		}
		dsn, err := withCodec(e.dsn, codecName)
		if err != nil {
			return bench{}, err
		}
		db, err := e.open(dsn)
		if err != nil {
			return bench{}, err
		}
		// The server's response has the fixture's bytes but for a few
		// digits (replication index, query duration): MB/s uses its size.
		return scanBench(db, "typed", liveRows, len(e.body(formatOf(codecName), liveRows)))
	}
}

// errSkip marks a workload that cannot run here; skipped says why.
var errSkip = errors.New("skipped")

func skipped(why string) error { return fmt.Errorf("%w (%s)", errSkip, why) }

// prepareLive makes sure the live database has the bench table with the
// workload's rows: if not, it drops the table and fills a new one in a
// single transaction.
func (e *env) prepareLive() error {
	e.mu.Lock()
	done, err := e.liveOK, e.live
	e.mu.Unlock()
	if done || err != nil {
		return err
	}
	err = fillLive(e.dsn, liveRows)
	e.mu.Lock()
	e.liveOK, e.live = err == nil, err
	e.mu.Unlock()
	return err
}

// fillLive makes the bench table of the sqld at dsn hold rows 1..n.
func fillLive(dsn string, n int) error {
	db, err := sql.Open("libsql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if liveTableOK(ctx, db, n) {
		return nil
	}
	fmt.Fprintf(os.Stderr, "live: (re)creating table bench with %d rows...\n", n)
	start := time.Now()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS bench"); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, fixture.Schema); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, fixture.Insert)
	if err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if _, err := stmt.ExecContext(ctx, fixture.MakeRow(i).Args()...); err != nil {
			return fmt.Errorf("insert row %d: %w", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "live: filled in %v\n", time.Since(start).Round(time.Millisecond))
	if !liveTableOK(ctx, db, n) {
		return errors.New("live: the bench table does not hold the workload after filling it")
	}
	return nil
}

// liveTableOK reports whether the bench table holds rows 1..n.
func liveTableOK(ctx context.Context, db *sql.DB, n int) bool {
	var count, sumA, sumF int64
	err := db.QueryRowContext(ctx, "SELECT count(*), sum(a), sum(f) FROM bench").Scan(&count, &sumA, &sumF)
	if err != nil || count != int64(n) {
		return false
	}
	var wantA, wantF int64
	for i := 1; i <= n; i++ {
		r := fixture.MakeRow(i)
		wantA += r.A
		wantF += r.F
	}
	return sumA == wantA && sumF == wantF
}
