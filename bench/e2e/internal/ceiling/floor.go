package ceiling

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/internal/fixture"
)

// floorTable is the table InsertFloor fills.
const floorTable = "bench_floor"

// InsertFloor bounds workload (c) for any client that sends one request per
// INSERT, as database/sql's Exec requires unless errors are reported late:
// the same o.N fixture INSERTs in one transaction (BEGIN, then one pipeline
// request per INSERT carrying the baton, then COMMIT and close), sent by a
// hand-written HTTP/1.1 client over one raw TCP connection. No net/http, no
// database/sql, no argument conversion in the measured loop (requests are
// encoded beforehand, only the baton is spliced in); it decodes each answer
// with the direct codec, as it must to learn the next baton and see errors.
// What is left is sqld's work per request and the loopback exchange.
func InsertFloor(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	r := workload.Result{Workload: "insert-floor"}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" {
		return r, fmt.Errorf("insert-floor needs an http:// base URL")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return r, err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	c := &rawClient{conn: nc, r: bufio.NewReaderSize(nc, 64<<10), host: u.Host, path: u.Path + "/v3/pipeline"}

	if _, err := c.do(exec("DROP TABLE IF EXISTS "+floorTable), exec(floorSchema()), close_()); err != nil {
		return r, err
	}
	// The statements' JSON, encoded once: the loop only adds the baton.
	stmts := make([][]byte, o.N)
	for i, st := range floorInserts(o.N) {
		b, err := direct.Codec.AppendPipelineRequest(nil, &codec.PipelineRequest{
			Requests: []codec.StreamRequest{{Type: codec.RequestExecute, Stmt: st}}})
		if err != nil {
			return r, err
		}
		stmts[i] = b
	}
	fill := func(n int) error {
		c.baton = ""
		if _, err := c.do(exec("BEGIN")); err != nil {
			return err
		}
		for i := range n {
			if err := c.send(stmts[i]); err != nil {
				return fmt.Errorf("insert %d: %w", i+1, err)
			}
		}
		_, err := c.do(exec("COMMIT"), close_())
		return err
	}
	if err := fill(min(100, o.N)); err != nil { // warm-up, as InsertTx
		return r, err
	}
	if _, err := c.do(exec("DELETE FROM "+floorTable), close_()); err != nil {
		return r, err
	}
	m := workload.Begin()
	if err := fill(o.N); err != nil {
		return r, err
	}
	m.End(&r, int64(o.N))
	resp, err := c.do(exec("SELECT count(*) FROM "+floorTable), exec("DROP TABLE "+floorTable), close_())
	if err != nil {
		return r, err
	}
	return r, checkCount(&resp.Results[0].Response.Result, o.N)
}

// floorSchema creates floorTable, shaped as fixture.Schema's table.
func floorSchema() string {
	return strings.Replace(fixture.Schema, "TABLE bench ", "TABLE "+floorTable+" ", 1)
}

// floorInserts returns the n statements of an insert floor: fixture.Insert
// into floorTable with fixture rows 1..n, as workload.InsertTx inserts them.
func floorInserts(n int) []codec.Stmt {
	insert := strings.Replace(fixture.Insert, "INTO bench ", "INTO "+floorTable+" ", 1)
	stmts := make([]codec.Stmt, n)
	for i := range stmts {
		stmts[i] = codec.Stmt{SQL: insert, WantRows: true}
		for _, a := range fixture.MakeRow(i + 1).Args() {
			stmts[i].Args = append(stmts[i].Args, value(a))
		}
	}
	return stmts
}

// checkCount checks the result of SELECT count(*) FROM floorTable.
func checkCount(res *codec.StmtResult, n int) error {
	if res.NumRows != 1 || len(res.Cols) != 1 || res.Row(0)[0].Int != int64(n) {
		return fmt.Errorf("table does not hold %d rows after the commit", n)
	}
	return nil
}

func exec(sql string) codec.StreamRequest {
	return codec.StreamRequest{Type: codec.RequestExecute, Stmt: codec.Stmt{SQL: sql, WantRows: true}}
}

func close_() codec.StreamRequest { return codec.StreamRequest{Type: codec.RequestClose} }

func value(a any) codec.Value {
	switch v := a.(type) {
	case int64:
		return codec.IntValue(v)
	case float64:
		return codec.FloatValue(v)
	case string:
		return codec.StringValue(v)
	case []byte:
		return codec.BlobValue(v)
	}
	return codec.NullValue()
}

// rawClient speaks just enough HTTP/1.1 to sqld over one connection.
type rawClient struct {
	conn  net.Conn
	r     *bufio.Reader
	host  string
	path  string
	baton string
	out   []byte
	body  []byte
	resp  codec.PipelineResponse
}

// do sends the requests on the current stream and checks every result.
func (c *rawClient) do(reqs ...codec.StreamRequest) (*codec.PipelineResponse, error) {
	b, err := direct.Codec.AppendPipelineRequest(nil, &codec.PipelineRequest{Baton: c.baton, Requests: reqs})
	if err != nil {
		return nil, err
	}
	if err := c.post(b); err != nil {
		return nil, err
	}
	return &c.resp, nil
}

// send sends a request encoded without a baton ({"baton":null,...}),
// putting the current one in.
func (c *rawClient) send(pre []byte) error {
	const null = `{"baton":null`
	if !strings.HasPrefix(string(pre[:len(null)]), null) {
		return errors.New("unexpected request prefix")
	}
	c.out = append(c.out[:0], `{"baton":"`...)
	c.out = append(c.out, c.baton...) // batons are base64: no escaping
	c.out = append(c.out, '"')
	c.out = append(c.out, pre[len(null):]...)
	return c.post(c.out)
}

func (c *rawClient) post(body []byte) error {
	head := "POST " + c.path + " HTTP/1.1\r\nHost: " + c.host +
		"\r\nContent-Type: application/json\r\nAccept-Encoding: identity\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	msg := make([]byte, 0, len(head)+len(body))
	msg = append(append(msg, head...), body...)
	if _, err := c.conn.Write(msg); err != nil {
		return err
	}
	status, err := c.r.ReadString('\n')
	if err != nil {
		return err
	}
	n := -1
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "content-length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return errors.New("response without Content-Length")
	}
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	c.body = c.body[:n]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("%s: %s", strings.TrimSpace(status), c.body)
	}
	c.resp.Reset()
	if err := direct.Codec.DecodePipelineResponse(c.body, &c.resp); err != nil {
		return err
	}
	for i := range c.resp.Results {
		if !c.resp.Results[i].OK {
			return fmt.Errorf("request %d: %s", i, c.resp.Results[i].Error.Message)
		}
	}
	c.baton = c.resp.Baton
	return nil
}
