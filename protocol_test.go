package libsql_test

// The driver's conformance to Turso's protocol document as a whole, which
// no one source file owns (docs/dev/CONFORMANCE.md and internal/fakesqld's
// MayServer name this file).

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// The MAYs of Turso's protocol document (serverless/PROTOCOL.md in
// tursodatabase/turso), one test per section, each against
// fakesqld.MayServer in that mode, over every codec and with streams kept
// and not: whatever freedom the server takes, the driver's answers are the
// same, it never uses a baton the server has replaced, and it never sends
// an empty pipeline (the server fails the test on one).

// protocolCodecs are the codecs every MAY runs over.
var protocolCodecs = []string{"direct", "gojson", "protobuf"}

// forProtocol runs f against a MayServer in modes for each codec and for
// kept streams on and off, as parallel subtests.
func forProtocol(t *testing.T, modes fs.Modes, codecs []string, f func(t *testing.T, db *sql.DB, srv *fs.MayServer)) {
	t.Helper()
	t.Parallel()
	for _, cd := range codecs {
		for _, keep := range []string{"1", "0"} {
			t.Run(cd+"/keepStreams="+keep, func(t *testing.T) {
				t.Parallel()
				srv := fs.NewMay(t, modes)
				db := openURL(t, srv.URL, "codec="+cd+"&keepStreams="+keep+"&readYourWrites=0")
				db.SetMaxOpenConns(1)
				f(t, db, srv)
				if !modes.V2Only && srv.Served("/v3/cursor")+srv.Served("/v3-protobuf/cursor") == 0 {
					t.Error("no cursor was opened: the result over the response limit did not stream")
				}
				if cd == "protobuf" && srv.Served("/v3/pipeline") != 0 {
					t.Errorf("codec protobuf sent %d JSON pipelines", srv.Served("/v3/pipeline"))
				}
				if n := srv.Unknown(); n != 0 {
					t.Errorf("%d requests named a baton the server had replaced or closed", n)
				}
			})
		}
	}
}

// exercise runs what an application does on one connection: statements
// outside transactions, a connection setting, a transaction, a result over
// the response limit (a cursor, unless cursor is false) and a ping; each
// answer is checked.
func exercise(t *testing.T, db *sql.DB, cursor bool) {
	t.Helper()
	ctx := context.Background()
	want := func(q string, n int64) {
		t.Helper()
		var got int64
		if err := db.QueryRowContext(ctx, q).Scan(&got); err != nil || got != n {
			t.Fatalf("%s: %d, %v; want %d", q, got, err, n)
		}
	}
	want("SELECT 7", 7)
	want("SELECT 8", 8)
	mustExec(t, db, "PRAGMA foreign_keys = ON")
	want("SELECT 9", 9)
	tx := mustBegin(t, db, nil)
	mustExec(t, tx, "INSERT INTO t VALUES (1)")
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT 10").Scan(&n); err != nil || n != 10 {
		t.Fatalf("in the transaction: %d, %v", n, err)
	}
	mustCommit(t, tx)
	if cursor {
		if got := bigRows(t, db); got != "1,2,3" {
			t.Fatalf("SELECT big: %q", got)
		}
	}
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	want("SELECT 11", 11)
}

// bigRows reads "SELECT big", which the server streams through a cursor,
// as "1,2,3", failing the test on an error.
func bigRows(t *testing.T, db *sql.DB) string {
	t.Helper()
	got, err := bigRowsErr(db)
	if err != nil {
		t.Fatalf("SELECT big: %v", err)
	}
	return got
}

func bigRowsErr(db *sql.DB) (string, error) {
	rows, err := db.Query("SELECT big")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		got = append(got, s)
	}
	return strings.Join(got, ","), rows.Err()
}

// §2: a server that serves only /v2/pipeline, and refuses get_autocommit
// and is_autocommit there: the driver learns Hrana 2 from the 404 of its
// first request, sends no Hrana 3 request, and follows transactions by
// their SQL. Protobuf has no Hrana 2: codec=auto speaks JSON there.
func TestProtocol2V2Only(t *testing.T) {
	forProtocol(t, fs.Modes{V2Only: true}, []string{"direct", "gojson", "auto"}, func(t *testing.T, db *sql.DB, srv *fs.MayServer) {
		exercise(t, db, false) // Hrana 2 has no cursors
		if srv.Served("/v2/pipeline") == 0 {
			t.Error("nothing went to /v2/pipeline")
		}
	})
}

// §4.2 item 4: a new baton on every response; the driver always sends the
// latest.
func TestProtocol4_2BatonRotates(t *testing.T) {
	forProtocol(t, fs.Modes{RotateBatons: true}, protocolCodecs, func(t *testing.T, db *sql.DB, _ *fs.MayServer) {
		exercise(t, db, true)
	})
}

// §4.3: the server closes a stream that carries no state after a pipeline
// (a null baton, no close asked for); the driver opens a new one for its
// next statement, and never takes a baton as evidence of a transaction.
func TestProtocol4_3StatelessStreamClosed(t *testing.T) {
	forProtocol(t, fs.Modes{CloseStateless: true}, protocolCodecs, func(t *testing.T, db *sql.DB, srv *fs.MayServer) {
		exercise(t, db, true)
		if srv.Opened() < 3 {
			t.Errorf("%d streams opened; the server closed each stateless one", srv.Opened())
		}
	})
}

// §4.3: the server keeps a stateless stream open (the default of the
// MayServer, as sqld does); with streams kept, the driver's statements
// share one.
func TestProtocol4_3StatelessStreamKept(t *testing.T) {
	forProtocol(t, fs.Modes{}, protocolCodecs, func(t *testing.T, db *sql.DB, srv *fs.MayServer) {
		exercise(t, db, true)
	})
}

// §5.1: a server that closes the stream on an empty pipeline; the driver
// sends none (a Ping is a get_autocommit on a kept stream, a close
// otherwise).
func TestProtocol5_1EmptyPipelineClosesStream(t *testing.T) {
	forProtocol(t, fs.Modes{CloseOnEmpty: true}, protocolCodecs, func(t *testing.T, db *sql.DB, _ *fs.MayServer) {
		exercise(t, db, true)
	})
}

// §7.2.5: a cursor body that ends after its rows without an error entry or
// a terminator is a fatal error for the batch and the stream: the rows
// fail, and the connection goes on with a new stream.
func TestProtocol7_2_5CursorBodyAborted(t *testing.T) {
	forProtocol(t, fs.Modes{AbortCursor: true}, protocolCodecs, func(t *testing.T, db *sql.DB, _ *fs.MayServer) {
		got, err := bigRowsErr(db)
		if err == nil || !strings.Contains(err.Error(), "ended before its last row") {
			t.Fatalf("SELECT big through an aborted body: %q, %v; want the truncation", got, err)
		}
		exercise(t, db, false)
	})
}
