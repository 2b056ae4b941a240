package ceiling

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/gohrana/libsql/bench/e2e/internal/workload"
	"github.com/gohrana/libsql/codec"
)

// The WebSocket floor through database/sql: the floor client of
// ConcurrentFloorWS behind the thinnest database/sql driver that can run
// workload (d), so that the part of a driver's cost that database/sql
// itself imposes (a context and a goroutine per query, Rows, the
// conversions of Scan) is measured on its own. Each connection owns a
// socket and a stream and reads its own answers (lockstep); a query's
// request is encoded when it is made, into a buffer the connection keeps;
// values are handed to database/sql as the decoder left them, strings
// copied. It supports only what (d) does: QueryContext with positional
// arguments, outside transactions.

// ConcurrentFloorWSSQL runs workload (d) through database/sql on the floor
// driver, with base the server's ws:// URL.
func ConcurrentFloorWSSQL(ctx context.Context, base string, o workload.Options) (workload.Result, error) {
	db := sql.OpenDB(floorConnector{base: base})
	defer db.Close()
	r, err := workload.Concurrent(ctx, db, o)
	r.Workload = "concurrent-floor-ws-sql"
	return r, err
}

type floorConnector struct{ base string }

func (c floorConnector) Connect(ctx context.Context) (driver.Conn, error) {
	s, err := dialStream(ctx, c.base)
	if err != nil {
		return nil, err
	}
	return &floorConn{s: s}, nil
}

func (c floorConnector) Driver() driver.Driver { return floorDriver{} }

type floorDriver struct{}

func (floorDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("floor: open through its connector")
}

// floorUnsupported is what the floor drivers leave out.
type floorUnsupported struct{}

func (floorUnsupported) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("floor: Prepare is not supported")
}

func (floorUnsupported) Begin() (driver.Tx, error) {
	return nil, errors.New("floor: transactions are not supported")
}

// floorArgs appends database/sql's positional arguments to dst as values.
func floorArgs(dst []codec.Value, args []driver.NamedValue) ([]codec.Value, error) {
	for _, a := range args {
		if a.Name != "" {
			return dst, errors.New("floor: named arguments are not supported")
		}
		dst = append(dst, value(a.Value))
	}
	return dst, nil
}

// floorConn is one connection: a stream on a socket of its own.
type floorConn struct {
	floorUnsupported
	s    *wsStream
	out  []byte        // the request being written
	args []codec.Value // its arguments
	rows floorRows     // the rows of the last answer (database/sql holds the conn until they close)
}

var (
	_ driver.QueryerContext = (*floorConn)(nil)
	_ driver.Rows           = (*floorRows)(nil)
)

func (c *floorConn) Close() error { c.s.close(); return nil }

func (c *floorConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var err error
	if c.args, err = floorArgs(c.args[:0], args); err != nil {
		return nil, err
	}
	c.s.nextID++
	req := codec.SocketRequest{Type: codec.SocketExecute, RequestID: c.s.nextID, StreamID: floorStream,
		Stmt: codec.Stmt{SQL: query, WantRows: true, Args: c.args}}
	if c.out, err = wsJSON.AppendSocketRequest(c.out[:0], &req); err != nil {
		return nil, err
	}
	res, err := c.s.roundTrip(wsRequest{id: req.RequestID, msg: c.out})
	if err != nil {
		return nil, err
	}
	if res.Type != codec.SocketExecute {
		return nil, fmt.Errorf("floor: answer %v to an execute", res.Type)
	}
	c.rows.reset(&res.Result)
	return &c.rows, nil
}

// floorRows are the rows of the connection's last answer, valid until its
// next request (database/sql holds the connection until they are closed).
type floorRows struct {
	res  *codec.StmtResult
	next int
	cols []string // kept from one answer to the next while the names are the same
}

func (r *floorRows) reset(res *codec.StmtResult) {
	r.res, r.next = res, 0
	same := len(r.cols) == len(res.Cols)
	for i := 0; same && i < len(r.cols); i++ {
		same = r.cols[i] == res.Cols[i].Name
	}
	if !same {
		r.cols = make([]string, len(res.Cols))
		for i, c := range res.Cols {
			r.cols[i] = c.Name
		}
	}
}

func (r *floorRows) Columns() []string { return r.cols }

func (r *floorRows) Close() error { return nil }

func (r *floorRows) Next(dest []driver.Value) error {
	if r.next >= r.res.NumRows {
		return io.EOF
	}
	for i, v := range r.res.Row(r.next) {
		switch v.Type {
		case codec.Integer:
			dest[i] = v.Int
		case codec.Float:
			dest[i] = v.Float
		case codec.Text:
			dest[i] = string(v.Bytes)
		case codec.Blob:
			dest[i] = v.Bytes
		default:
			dest[i] = nil
		}
	}
	r.next++
	return nil
}
