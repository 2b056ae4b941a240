package itest

// The WebSocket transport (transport/ws) against real sqld processes of the
// tests' own (startSqld), through session.Conn directly: the connection
// state a stream keeps, transactions, a large cursor, authentication and a
// restart.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gohrana/libsql/codec"
	"github.com/gohrana/libsql/codec/direct"
	"github.com/gohrana/libsql/codec/protobuf"
	"github.com/gohrana/libsql/internal/session"
	"github.com/gohrana/libsql/internal/sqldproc"
	"github.com/gohrana/libsql/transport"
	thttp "github.com/gohrana/libsql/transport/http"
	"github.com/gohrana/libsql/transport/ws"
)

// wsCodecs are the codecs of the WebSocket tests: JSON (subprotocol hrana3)
// and Protobuf (hrana3-protobuf).
var wsCodecs = []struct {
	name  string
	codec codec.SocketCodec
}{
	{"direct", direct.Codec.(codec.SocketCodec)},
	{"protobuf", protobuf.Codec.(codec.SocketCodec)},
}

// forWSCodecs runs fn as a parallel subtest per WebSocket codec.
func forWSCodecs(t *testing.T, fn func(t *testing.T, cd codec.SocketCodec)) {
	for _, c := range wsCodecs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fn(t, c.codec)
		})
	}
}

// newWSClient returns a WebSocket transport to p, closed when the test ends.
func newWSClient(t testing.TB, p *sqldproc.Server, cd codec.SocketCodec, mod func(*transport.Options)) transport.Transport {
	t.Helper()
	o := transport.Options{URL: p.WS(), Codec: cd}
	if mod != nil {
		mod(&o)
	}
	c, err := ws.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// wsExec runs a statement on conn and returns its rows, each value as
// text (an integer in decimal, NULL as "NULL").
func wsExec(t testing.TB, conn *session.Conn, sql string) [][]string {
	t.Helper()
	rows, err := wsQuery(conn, sql)
	require.NoError(t, err, "%s", sql)
	return rows
}

func wsQuery(conn *session.Conn, sql string) ([][]string, error) {
	res, err := conn.Execute(context.Background(), &codec.Stmt{SQL: sql, WantRows: true})
	if err != nil {
		return nil, err
	}
	defer res.Release()
	st := res.Stmt()
	var rows [][]string
	for i := range st.NumRows {
		var row []string
		for _, v := range st.Row(i) {
			row = append(row, wsText(v))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func wsText(v codec.Value) string {
	switch v.Type {
	case codec.Integer:
		return fmt.Sprint(v.Int)
	case codec.Float:
		return fmt.Sprint(v.Float)
	case codec.Null:
		return "NULL"
	}
	return string(v.Bytes)
}

// wsErr returns err's *transport.Error, the error type of the layers under
// the driver's face, or an empty one.
func wsErr(err error) *transport.Error {
	var e *transport.Error
	if errors.As(err, &e) {
		return e
	}
	return &transport.Error{}
}

// wsOne runs a query of one value.
func wsOne(t testing.TB, conn *session.Conn, sql string) string {
	t.Helper()
	rows := wsExec(t, conn, sql)
	require.Len(t, rows, 1, "%s", sql)
	require.Len(t, rows[0], 1, "%s", sql)
	return rows[0][0]
}

// wsCursor runs a query through a cursor on conn and calls row with each
// row as it comes; an error entry fails the test, and so does a cursor
// that does not close cleanly.
func wsCursor(t testing.TB, ctx context.Context, conn *session.Conn, sql string, row func([]codec.Value)) {
	t.Helper()
	cur, err := conn.OpenCursor(ctx, []codec.BatchStep{{Stmt: codec.Stmt{WantRows: true, SQL: sql}}})
	require.NoError(t, err)
	defer cur.Close()
	var e codec.CursorEntry
	for {
		err := cur.Next(&e)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch e.Type {
		case codec.EntryRow:
			row(e.Row)
		case codec.EntryStepError, codec.EntryError:
			t.Fatalf("entry %+v", e)
		}
	}
	require.NoError(t, cur.Close())
}

// TestWSConnectionState: a stream keeps its connection state from one
// statement to the next: a PRAGMA holds on its stream while another stream
// on the same socket sees the default, and last_insert_rowid() and
// changes() are there in the next statement.
func TestWSConnectionState(t *testing.T) {
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		c := newWSClient(t, srv, cd, func(o *transport.Options) { o.Sockets = 1 })
		a, b := session.NewConn(c.NewStream()), session.NewConn(c.NewStream())
		v, err := c.NewStream().Version(context.Background())
		require.NoError(t, err)
		require.Equal(t, 3, v)

		require.Equal(t, "1", wsOne(t, a, "PRAGMA foreign_keys"), "sqld's default")
		wsExec(t, a, "PRAGMA foreign_keys = OFF")
		require.Equal(t, "0", wsOne(t, a, "PRAGMA foreign_keys"), "on the stream that set it")
		require.Equal(t, "1", wsOne(t, b, "PRAGMA foreign_keys"), "on another stream of the socket")
		time.Sleep(1100 * time.Millisecond) // an HTTP stream would be gone after 10 s; this one is not
		require.Equal(t, "0", wsOne(t, a, "PRAGMA foreign_keys"), "later on the same stream")

		wsExec(t, a, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
		wsExec(t, a, "INSERT INTO t (v) VALUES ('x'), ('y'), ('z')")
		require.Equal(t, [][]string{{"3", "3"}}, wsExec(t, a, "SELECT last_insert_rowid(), changes()"))
		require.Equal(t, [][]string{{"0", "0"}}, wsExec(t, b, "SELECT last_insert_rowid(), changes()"))
	})
}

// TestWSTransaction: a transaction on one stream, seen by another only once
// committed; a rolled-back one leaves nothing.
func TestWSTransaction(t *testing.T) {
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		c := newWSClient(t, srv, cd, nil)
		a, b := session.NewConn(c.NewStream()), session.NewConn(c.NewStream())
		ctx := context.Background()
		wsExec(t, a, "CREATE TABLE t (v TEXT)")

		a.Hold()
		wsExec(t, a, "BEGIN")
		wsExec(t, a, "INSERT INTO t VALUES ('committed')")
		auto, err := a.GetAutocommit(ctx)
		require.NoError(t, err)
		require.False(t, auto, "inside the transaction")
		require.Equal(t, "1", wsOne(t, a, "SELECT count(*) FROM t"))
		require.Equal(t, "0", wsOne(t, b, "SELECT count(*) FROM t"), "another stream before COMMIT")
		a.Release()
		wsExec(t, a, "COMMIT")
		require.Equal(t, "1", wsOne(t, b, "SELECT count(*) FROM t"), "another stream after COMMIT")

		a.Hold()
		wsExec(t, a, "BEGIN")
		wsExec(t, a, "INSERT INTO t VALUES ('rolled back')")
		a.Release()
		wsExec(t, a, "ROLLBACK")
		auto, err = a.GetAutocommit(ctx)
		require.NoError(t, err)
		require.True(t, auto)
		require.Equal(t, "1", wsOne(t, b, "SELECT count(*) FROM t"))

		// A transaction left open is rolled back by Reset.
		a.Hold()
		wsExec(t, a, "BEGIN")
		wsExec(t, a, "INSERT INTO t VALUES ('reset')")
		a.Release()
		a.Reset()
		require.Equal(t, "1", wsOne(t, b, "SELECT count(*) FROM t"))
		require.Equal(t, "1", wsOne(t, a, "SELECT count(*) FROM t"), "a new stream after Reset")
	})
}

// TestWSCursor reads 100,000 rows through a cursor, fetch by fetch, and
// uses the stream again after it.
func TestWSCursor(t *testing.T) {
	const n = 100_000
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		c := newWSClient(t, srv, cd, nil)
		conn := session.NewConn(c.NewStream())
		// Held, the cursor runs on the stream (fetch_cursor), not on a
		// side cursor (TestWSSideCursor).
		conn.Hold()
		rows, sum := 0, int64(0)
		var last string
		wsCursor(t, context.Background(), conn, fmt.Sprintf(
			`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) SELECT i, 'name-' || i FROM c`, n),
			func(row []codec.Value) {
				rows++
				sum += row[0].Int
				last = string(row[1].Bytes)
			})
		require.Equal(t, n, rows)
		require.Equal(t, int64(n)*(n+1)/2, sum)
		require.Equal(t, fmt.Sprint("name-", n), last)
		require.Equal(t, "1", wsOne(t, conn, "SELECT 1"), "the stream after its cursor")
	})
}

// TestWSAuth: a refused hello is an ErrAuth error, Safe, without the
// token; an accepted one works.
func TestWSAuth(t *testing.T) {
	pub, priv := authKeyPair(t)
	key := filepath.Join(t.TempDir(), "jwt.key")
	require.NoError(t, os.WriteFile(key, []byte(base64.RawURLEncoding.EncodeToString(pub)), 0o600))
	srv := sqlds.Start(t, "--auth-jwt-key-file", key)
	_, other := authKeyPair(t)
	forged := authSign(t, other, authClaims{"a": "rw"})
	good := authSign(t, priv, authClaims{"a": "rw"})
	for _, cd := range wsCodecs {
		t.Run(cd.name, func(t *testing.T) {
			bad := newWSClient(t, srv, cd.codec, func(o *transport.Options) { o.AuthToken = forged })
			_, err := wsQuery(session.NewConn(bad.NewStream()), "SELECT 1")
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(wsErr(err).Code, "AUTH_"), "%v", err)
			assert.True(t, wsErr(err).Safe, "%v", err)
			assert.False(t, wsErr(err).Resend, "%v", err)
			assert.NotContains(t, err.Error(), forged)
			t.Logf("refused hello: %v", err)

			ok := newWSClient(t, srv, cd.codec, func(o *transport.Options) { o.AuthToken = good })
			require.Equal(t, "1", wsOne(t, session.NewConn(ok.NewStream()), "SELECT 1"))
		})
	}
}

// TestWSRestart kills sqld under open streams and starts it again:
//
//   - a statement in flight when it dies fails, not Safe;
//   - a stream idle at that moment is Lost: its next statement fails Safe
//     and BadConn, and the one after runs on a new stream, where the
//     Conn's persisted settings are replayed;
//   - a stream holding a transaction fails the same way, but not BadConn
//     (the session must not let database/sql retry it elsewhere), and
//     nothing of the transaction is there;
//   - while the server is down, statements fail at once, Safe and BadConn.
func TestWSRestart(t *testing.T) {
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		c := newWSClient(t, srv, cd, func(o *transport.Options) {
			o.Sockets = 2
			o.MinBackoff = 50 * time.Millisecond
			o.MaxBackoff = 200 * time.Millisecond
		})
		ctx := context.Background()
		idle := session.NewConn(c.NewStream())
		idle.Persist("foreign_keys", codec.Stmt{SQL: "PRAGMA foreign_keys = OFF"})
		wsExec(t, idle, "CREATE TABLE t (v TEXT)")
		require.Equal(t, "0", wsOne(t, idle, "PRAGMA foreign_keys"))

		tx := session.NewConn(c.NewStream())
		tx.Hold()
		wsExec(t, tx, "BEGIN")
		wsExec(t, tx, "INSERT INTO t VALUES ('lost')")

		busy := session.NewConn(c.NewStream())
		wsExec(t, busy, "SELECT 1")
		inFlight := make(chan error, 1)
		go func() {
			_, err := wsQuery(busy, `SELECT count(*) FROM (WITH RECURSIVE c(i) AS
				(SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 500000000) SELECT i FROM c)`)
			inFlight <- err
		}()
		time.Sleep(300 * time.Millisecond) // the query is running

		srv.Kill()
		err := <-inFlight
		require.Error(t, err, "the query in flight")
		assert.False(t, wsErr(err).Safe, "the query in flight: %v", err)
		assert.False(t, wsErr(err).Resend, "%v", err)

		// Once the client has seen both sockets die (the streams are spread
		// over them), requests fail before anything is written.
		require.Eventually(t, func() bool { return idle.Lost() && tx.Lost() }, 5*time.Second, 10*time.Millisecond,
			"the idle streams are lost")
		// idle's next stream may land on the other shared socket (busy's)
		// before the client has seen that one die too: that request was
		// written and says it may have run, which is right. Once the
		// client has seen it, requests fail before anything is written.
		require.Eventually(t, func() bool {
			_, err = wsQuery(idle, "SELECT 1")
			require.Error(t, err)
			return wsErr(err).Safe
		}, 5*time.Second, 10*time.Millisecond, "a lost stream's next statement fails before it is written")
		assert.True(t, wsErr(err).Resend, "%v", err)

		// Down: every statement fails at once, Safe and BadConn.
		start := time.Now()
		_, err = wsQuery(session.NewConn(c.NewStream()), "SELECT 1")
		require.Error(t, err)
		assert.True(t, wsErr(err).Safe, "while down: %v", err)
		assert.True(t, wsErr(err).Resend, "%v", err)
		assert.Less(t, time.Since(start), 2*time.Second)

		require.NoError(t, srv.Restart(t.Context()))
		require.Eventually(t, func() bool {
			_, err := wsQuery(idle, "SELECT 1")
			return err == nil
		}, 10*time.Second, 20*time.Millisecond, "recovery")
		require.Equal(t, "0", wsOne(t, idle, "PRAGMA foreign_keys"), "the persisted setting on the new stream")

		_, err = tx.Execute(ctx, &codec.Stmt{SQL: "INSERT INTO t VALUES ('after')"})
		require.Error(t, err, "the transaction's next statement")
		assert.True(t, wsErr(err).Safe, "%v", err)
		assert.False(t, wsErr(err).Resend, "a transaction's statement must not be retried elsewhere")
		tx.Release()
		tx.Reset()
		require.Equal(t, "0", wsOne(t, tx, "SELECT count(*) FROM t"), "nothing of the lost transaction")
		require.Equal(t, "1", wsOne(t, busy, "SELECT 1"))
	})
}

// TestWSConcurrentStreams: many Conns share one socket to a real server,
// each on its own stream.
func TestWSConcurrentStreams(t *testing.T) {
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		c := newWSClient(t, srv, cd, func(o *transport.Options) { o.Sockets = 1 })
		setup := session.NewConn(c.NewStream())
		wsExec(t, setup, "CREATE TABLE t (w INTEGER, i INTEGER)")
		const workers, each = 8, 50
		err := runWorkers(workers, func(w int) error {
			conn := session.NewConn(c.NewStream())
			for i := range each {
				res, err := conn.Execute(context.Background(), &codec.Stmt{SQL: fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", w, i)})
				if err != nil {
					return err
				}
				if got := res.Stmt().AffectedRowCount; got != 1 {
					res.Release()
					return fmt.Errorf("worker %d: %d rows affected", w, got)
				}
				res.Release()
				rows, err := wsQuery(conn, "SELECT changes()")
				if err != nil {
					return err
				}
				if rows[0][0] != "1" {
					return errors.New("changes() of another stream: " + strings.Join(rows[0], ","))
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(workers*each), wsOne(t, setup, "SELECT count(*) FROM t"))
	})
}

// TestWSHugeCursor reads 1,000,000 rows through a cursor in a child
// process, so that runtime.MemStats.Sys measures this scan alone: it stays
// within maxSys. It takes about 17 s, nearly all of it sqld's (which hands
// a cursor's entries over one at a time), so it runs with one codec; the
// others read the same fetches, decoded their way (TestWSCursor).
func TestWSHugeCursor(t *testing.T) {
	if testing.Short() {
		t.Skip("huge cursor skipped in -short mode")
	}
	srv := sqlds.Start(t)
	for _, cd := range wsCodecs[:1] {
		t.Run(cd.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWSHugeCursorChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "WS_CHILD_URL="+srv.WS(), "WS_CHILD_CODEC="+cd.name)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child:\n%s", out)
			var rows, sys int64
			for _, line := range strings.Split(string(out), "\n") {
				if line = strings.TrimSpace(line); strings.HasPrefix(line, "WSHUGE ") {
					_, err := fmt.Sscanf(line, "WSHUGE rows=%d sys=%d", &rows, &sys)
					require.NoError(t, err, line)
				}
			}
			require.EqualValues(t, hugeRows, rows, "child output:\n%s", out)
			t.Logf("%s: %d rows, runtime.MemStats.Sys = %.1f MB", cd.name, rows, float64(sys)/(1<<20))
			require.LessOrEqual(t, sys, int64(maxSys), "memory from the OS while scanning")
		})
	}
}

// TestWSHugeCursorChild is the child half of TestWSHugeCursor; it does
// nothing unless started by it.
func TestWSHugeCursorChild(t *testing.T) {
	url := os.Getenv("WS_CHILD_URL")
	if url == "" {
		t.Skip("run by TestWSHugeCursor")
	}
	var cd codec.SocketCodec
	for _, c := range wsCodecs {
		if c.name == os.Getenv("WS_CHILD_CODEC") {
			cd = c.codec
		}
	}
	c, err := ws.New(transport.Options{URL: url, Codec: cd})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn := session.NewConn(c.NewStream())
	conn.Hold() // on the stream: fetch_cursor, not a side cursor
	cur, err := conn.OpenCursor(ctx, []codec.BatchStep{{Stmt: codec.Stmt{WantRows: true, SQL: fmt.Sprintf(
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) SELECT i, 'name-' || i, i * 0.5 FROM c`, hugeRows)}}})
	require.NoError(t, err)
	var (
		e    codec.CursorEntry
		n    int64
		peak uint64
		ms   runtime.MemStats
	)
	for {
		err := cur.Next(&e)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if e.Type != codec.EntryRow {
			continue
		}
		n++
		if e.Row[0].Int != n || e.Row[2].Float != float64(n)*0.5 || string(e.Row[1].Bytes) != "name-"+strconv.FormatInt(n, 10) {
			t.Fatalf("row %d: %+v", n, e.Row)
		}
		if n%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.Sys)
		}
	}
	require.NoError(t, cur.Close())
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.Sys)
	fmt.Printf("WSHUGE rows=%d sys=%d\n", n, peak)
}

// TestWSDSN runs database/sql over a ws:// DSN: connection state lasts from
// one statement to the next on a connection, a result over sqld's response
// limit streams through a cursor, a cancelled statement does not poison
// the pool, and a restart is survived.
func TestWSDSN(t *testing.T) {
	for _, cd := range wsCodecs {
		t.Run(cd.name, func(t *testing.T) {
			t.Parallel()
			srv := sqlds.Start(t)
			db, err := sql.Open("libsql", srv.WS()+"?codec="+cd.name)
			require.NoError(t, err)
			defer db.Close()
			ctx := context.Background()
			conn, err := db.Conn(ctx)
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, "INSERT INTO t (v) VALUES ('a'), ('b')")
			require.NoError(t, err)
			var id, changes int64
			require.NoError(t, conn.QueryRowContext(ctx, "SELECT last_insert_rowid(), changes()").Scan(&id, &changes))
			require.Equal(t, [2]int64{2, 2}, [2]int64{id, changes}, "the state of the previous statement")

			tx, err := conn.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "INSERT INTO t (v) VALUES ('c')")
			require.NoError(t, err)
			require.NoError(t, tx.Rollback())
			require.Equal(t, int64(2), countRows(t, conn, "t"))
			require.NoError(t, conn.Close())

			// 200,000 rows of about 110 bytes: over the 10 MB limit.
			rows, err := db.QueryContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)
				SELECT i, printf('%0100d', i) FROM c`)
			require.NoError(t, err)
			requireNumberedRows(t, rows, 200_000, func(id int) string { return fmt.Sprintf("%0100d", id) })

			slow, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err = db.ExecContext(slow, `SELECT count(*) FROM (WITH RECURSIVE c(i) AS
				(SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000000) SELECT i FROM c)`)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Equal(t, int64(2), countRows(t, db, "t"), "the pool after a cancelled statement")

			srv.Kill()
			require.NoError(t, srv.Restart(t.Context()))
			require.Eventually(t, func() bool {
				var n int64
				return db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n) == nil && n == 2
			}, 10*time.Second, 20*time.Millisecond, "recovery after a restart")
		})
	}
}

// TestWSSideCursor: a cursor outside Hold on a WebSocket stream streams
// through /v3/cursor on the same server (sqld serves it about twice as
// fast as a WebSocket cursor) when the stream holds nothing a new stream
// lacks, with the settings of Persist replayed there; inside Hold (a
// transaction), or for a statement that reads
// last_insert_rowid(), it runs on the stream itself and reads the
// stream's own state.
func TestWSSideCursor(t *testing.T) {
	forWSCodecs(t, func(t *testing.T, cd codec.SocketCodec) {
		srv := sqlds.Start(t)
		ct := &countingTransport{}
		c := newWSClient(t, srv, cd, nil)
		conn := session.NewConn(c.NewStream())
		// The side transport: HTTP to the same server, as the driver's
		// connector makes it for a WebSocket connection.
		side, err := thttp.New(transport.Options{URL: srv.URL(), Codec: cd, JSON: direct.Codec, RoundTripper: ct})
		require.NoError(t, err)
		t.Cleanup(func() { _ = side.Close() })
		conn.SetSideCursors(side)
		path := "/v3/cursor"
		if cd.Format() == codec.FormatProtobuf {
			path = "/v3-protobuf/cursor"
		}
		sideCursors := func() int64 {
			v, ok := ct.paths.Load(path)
			if !ok {
				return 0
			}
			return v.(*atomic.Int64).Load()
		}
		const n = 3000
		wsExec(t, conn, "CREATE TABLE side (id INTEGER PRIMARY KEY, v TEXT)")
		wsExec(t, conn, fmt.Sprintf(`INSERT INTO side WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) SELECT i, 'v' || i FROM c`, n))
		// scan reads the table through a cursor, with the extra column,
		// and checks every row.
		scan := func(extra string, want int64) {
			t.Helper()
			rows := 0
			wsCursor(t, context.Background(), conn, "SELECT id, v"+extra+" FROM side ORDER BY id", func(row []codec.Value) {
				rows++
				require.Equal(t, int64(rows), row[0].Int)
				require.Equal(t, fmt.Sprint("v", rows), string(row[1].Bytes))
				if extra != "" {
					require.Equal(t, want, row[2].Int, "%s", extra)
				}
			})
			require.Equal(t, n, rows)
		}

		// A setting made on the stream and persisted is replayed on the
		// side cursor's stream.
		wsExec(t, conn, "PRAGMA foreign_keys = 1")
		conn.Persist("foreign_keys", codec.Stmt{SQL: "PRAGMA foreign_keys = 1"})
		scan(", (SELECT foreign_keys FROM pragma_foreign_keys)", 1)
		require.EqualValues(t, 1, sideCursors(), "a stream with no state of its own but its settings")

		wsExec(t, conn, "INSERT INTO side (id, v) VALUES (100000, 'x')")
		wsExec(t, conn, "DELETE FROM side WHERE id = 100000")
		scan(", last_insert_rowid()", 100000)
		require.EqualValues(t, 1, sideCursors(), "a statement that reads last_insert_rowid() stays on its stream")
		scan("", 0)
		require.EqualValues(t, 2, sideCursors(), "after writes, which leave no state")

		conn.Hold()
		wsExec(t, conn, "BEGIN")
		scan("", 0)
		wsExec(t, conn, "COMMIT")
		conn.Release()
		require.EqualValues(t, 2, sideCursors(), "a cursor inside Hold stays on its stream")
		scan("", 0)
		require.EqualValues(t, 3, sideCursors(), "and after it")
		require.Equal(t, [][]string{{"1"}}, wsExec(t, conn, "PRAGMA foreign_keys"), "the stream after side cursors")
	})
}
