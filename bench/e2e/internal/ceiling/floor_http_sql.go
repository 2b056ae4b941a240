package ceiling

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
)

// The kept-stream HTTP floor: what turso.tech/database/tursogo-serverless
// does on the wire, as the thinnest database/sql driver that can run
// workloads (b) and (d). Each connection keeps one server stream (its
// baton) across its statements, sends each statement as a pipeline of
// execute and get_autocommit on it through net/http, and decodes the answer
// with the direct codec; values go to database/sql as the decoder left
// them, strings copied. It is the design a driver that keeps streams
// reaches at best with net/http and database/sql, a floor for ours/direct
// over HTTP. It supports only what (b) and (d) do: QueryContext with
// positional arguments, outside transactions.

// PointFloorHTTPKept runs workload (b) through database/sql on the
// kept-stream floor driver, with base the server's http:// URL.
func PointFloorHTTPKept(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return keptFloor(ctx, base, o, "point-floor-http-kept", workload.Point)
}

// ConcurrentFloorHTTPKept runs workload (d) through database/sql on the
// kept-stream floor driver, with base the server's http:// URL.
func ConcurrentFloorHTTPKept(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	return keptFloor(ctx, base, o, "concurrent-floor-http-kept", workload.Concurrent)
}

// keptFloor runs w, named name, on the kept-stream floor driver.
func keptFloor(ctx context.Context, base string, o workload.Options, name string,
	w func(context.Context, *sql.DB, workload.Options) (workload.Result, error)) (workload.Result, error) {
	db := sql.OpenDB(keptConnector{base: strings.TrimRight(base, "/")})
	defer db.Close()
	r, err := w(ctx, db, o)
	r.Workload = name
	return r, err
}

// keptClient is net/http's client as a driver would set it up for a pool
// of up to (d)'s 16 connections to one host.
var keptClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

type keptConnector struct{ base string }

func (c keptConnector) Connect(context.Context) (driver.Conn, error) {
	return &keptConn{url: c.base + "/v3/pipeline"}, nil
}

func (c keptConnector) Driver() driver.Driver { return keptDriver{} }

type keptDriver struct{}

func (keptDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("floor: open through its connector")
}

// keptConn is one connection: a server stream kept by its baton.
type keptConn struct {
	floorUnsupported
	url   string
	baton string
	out   []byte // the request being written
	in    []byte // the answer being read
	args  []codec.Value
	resp  codec.PipelineResponse
	rows  floorRows
}

var _ driver.QueryerContext = (*keptConn)(nil)

// Close closes the server stream.
func (c *keptConn) Close() error {
	if c.baton == "" {
		return nil
	}
	_, err := c.exchange(context.Background(), []codec.StreamRequest{{Type: codec.RequestClose}})
	return err
}

func (c *keptConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var err error
	if c.args, err = floorArgs(c.args[:0], args); err != nil {
		return nil, err
	}
	resp, err := c.exchange(ctx, []codec.StreamRequest{
		{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: query, WantRows: true, Args: c.args}},
		{Type: codec.RequestGetAutocommit},
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Results) != 2 || !resp.Results[0].OK || !resp.Results[1].OK {
		return nil, fmt.Errorf("floor: failed answer %+v", resp.Results)
	}
	c.rows.reset(&resp.Results[0].Response.Result)
	return &c.rows, nil
}

// exchange sends reqs on the connection's stream and takes the new baton.
func (c *keptConn) exchange(ctx context.Context, reqs []codec.StreamRequest) (*codec.PipelineResponse, error) {
	var err error
	c.out, err = direct.Codec.AppendPipelineRequest(c.out[:0], &codec.PipelineRequest{Baton: c.baton, Requests: reqs})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.out))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	hr, err := keptClient.Do(req)
	if err != nil {
		c.baton = ""
		return nil, err
	}
	defer hr.Body.Close()
	buf := bytes.NewBuffer(c.in[:0])
	_, err = io.Copy(buf, hr.Body)
	c.in = buf.Bytes()
	if err != nil {
		c.baton = ""
		return nil, err
	}
	if hr.StatusCode != http.StatusOK {
		c.baton = ""
		return nil, fmt.Errorf("floor: HTTP %d: %s", hr.StatusCode, c.in)
	}
	if err := direct.Codec.DecodePipelineResponse(c.in, &c.resp); err != nil {
		c.baton = ""
		return nil, err
	}
	c.baton = c.resp.Baton
	return &c.resp, nil
}
