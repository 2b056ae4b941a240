package libsql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gohrana/libsql"
	fs "github.com/gohrana/libsql/internal/fakesqld"
)

// A COMMIT that reached the server and got no usable answer may have run:
// the error says its outcome is unknown, is not safe to retry, and does not
// claim the transaction was lost. A COMMIT refused with 4xx did not run
// (sqld refuses the whole pipeline and drops the stream): the transaction
// is lost.
func TestFakeCommitOutcome(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		tests := []struct {
			name    string
			reply   fs.Reply
			params  string
			unknown bool
			// closeAfter: the driver still holds the baton (no HTTP answer),
			// so it closes the stream, which rolls back whatever is left.
			closeAfter bool
			is         []error
			has        string
		}{
			{"connection closed", fs.Drop(), "", true, true, nil, "request failed"},
			{"no answer in time", fs.Hang(), "timeout=200ms", true, true, nil, "deadline"},
			{"late answer", fs.Delay(2*time.Second, fs.PipelineReply("", fs.ExecuteOK(fs.Empty()), fs.CloseOK())), "timeout=200ms", true, true, nil, "deadline"},
			{"HTTP 500", fs.HTTPError(500, "Internal Error: `database disk image is malformed`"), "", true, false, nil, "malformed"},
			{"HTTP 502", fs.PlainText(502, "Bad Gateway"), "", true, false, nil, "Bad Gateway"},
			{"HTTP 503", fs.HTTPError(503, "Replicator exited"), "", true, false, errs(libsql.ErrTooManyRequests), "Replicator exited"},
			{"HTTP 400 invalid baton", fs.ProtocolError("Received an invalid baton"), "", false, false, nil, "invalid baton"},
			{"HTTP 400 expired", fs.StreamExpired(), "", false, false, nil, "expired due to inactivity"},
			{"HTTP 401", fs.HTTPError(401, "Unauthorized: `The JWT has expired`"), "", false, false, errs(libsql.ErrAuth), "JWT has expired"},
			{"HTTP 403", fs.HTTPError(403, "Authorization forbidden: Current session doesn't not have Write permission to namespace default"), "",
				false, false, errs(libsql.ErrPermission), "Write permission"},
			// sqld refuses with 429 before it touches the stream, which lives
			// on with the transaction's lock: the driver closes it.
			{"HTTP 429", fs.TooManyRequests("Too many concurrent requests", "60"), "", false, true, errs(libsql.ErrTooManyRequests), "Too many concurrent requests"},
		}
		// What the WebSocket transport says where its words differ.
		wsHas := map[string]string{"connection closed": "the server closed the connection while the request was in flight"}
		for _, tt := range tests {
			if tp == overWS && !tt.reply.OverWS() {
				continue // an HTTP status has no WebSocket form
			}
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, begin(b1, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
					fs.Pipeline(b1, fs.Execute(fs.SQL("COMMIT")), fs.Close()).Reply(tt.reply))
				// Over WebSocket the close_stream goes out in COMMIT's burst.
				if tt.closeAfter && tp == overHTTP {
					srv.Add(fs.Pipeline(b1, fs.Close()).Reply(fs.ProtocolError("Received an invalid baton")))
				}
				db := openDB(t, srv, tt.params)
				tx, err := db.Begin()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
					t.Fatal(err)
				}
				err = tx.Commit()
				has := tt.has
				if h, ok := wsHas[tt.name]; ok && tp == overWS {
					has = h
				}
				if tt.unknown {
					wantErr(t, err, tt.is, errs(libsql.ErrTxLost), "the outcome of COMMIT is unknown", has)
				} else {
					wantErr(t, err, append(tt.is, libsql.ErrTxLost), nil, has)
				}
				if e := asError(t, err); e.SafeToRetry() && tt.unknown {
					t.Errorf("an unknown outcome is SafeToRetry: %+v", e)
				}
			})
		}
	})
}

// ROLLBACK refused with 4xx succeeds (the server dropped the stream, which
// rolled back); a ROLLBACK without an answer is an error, but never an
// unknown COMMIT.
func TestFakeRollbackFails(t *testing.T) {
	t.Parallel()
	forTransports(t, func(t *testing.T, tp string) {
		b1 := fs.Baton(1)
		tests := []struct {
			name       string
			reply      fs.Reply
			closeAfter bool
			ok         bool
		}{
			{"HTTP 400", fs.ProtocolError("Received an invalid baton"), false, true},
			{"HTTP 400 expired", fs.StreamExpired(), false, true},
			{"connection closed", fs.Drop(), true, false},
			{"HTTP 500", fs.HTTPError(500, "Internal Error"), false, false},
		}
		for _, tt := range tests {
			if tp == overWS && !tt.reply.OverWS() {
				continue // an HTTP status has no WebSocket form
			}
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := newFake(t, tp, begin(b1, fs.SQL("INSERT INTO t VALUES (1)"), fs.Inserted(1, 1)),
					fs.Pipeline(b1, fs.Execute(fs.SQL("ROLLBACK")), fs.Close()).Reply(tt.reply))
				// Over WebSocket the close_stream goes out in ROLLBACK's burst.
				if tt.closeAfter && tp == overHTTP {
					srv.Add(closeStream(b1))
				}
				db := openDB(t, srv, "")
				tx, _ := db.Begin()
				if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
					t.Fatal(err)
				}
				err := tx.Rollback()
				switch {
				case tt.ok && err != nil:
					t.Errorf("Rollback: %v", err)
				case !tt.ok:
					wantErr(t, err, nil, nil)
					if err != nil && strings.Contains(err.Error(), "outcome") {
						t.Errorf("a ROLLBACK error speaks of an outcome: %v", err)
					}
				}
			})
		}
	})
}
